import { expect } from 'chai';
import request from 'supertest';
import { ObjectionAccountStore } from '../src/store.js';
import { createWorld, login, signedUp, type World } from './helpers.js';

describe('the account directory and housekeeping', () => {
  let w: World;
  before(async () => {
    w = await createWorld();
  });
  after(async () => w.close());
  beforeEach(async () => w.reset());

  it('answers profiles of existing accounts only', async () => {
    const ada = await signedUp(w, 'ada@example.test');
    const profiles = await w.accounts.directory.profiles([ada.userId, '9d7e2b5c-1111-4a2b-8c3d-000000000000', 'not-a-uuid']);
    expect([...profiles.values()]).to.deep.equal([{ id: ada.userId, email: 'ada@example.test', displayName: 'Ada Lovelace' }]);
  });

  it('puts an account on the waitlist once, and lists it with its current address', async () => {
    const ada = await signedUp(w, 'ada@example.test');
    expect(await w.accounts.directory.addToWaitlist({ accountId: ada.userId, reason: 'intake_paused' })).to.equal(true);
    w.clock.advanceSeconds(5);
    expect(await w.accounts.directory.addToWaitlist({ accountId: ada.userId, reason: 'intake_paused' })).to.equal(false);
    expect(await w.accounts.directory.listWaitlist()).to.deep.equal([
      { email: 'ada@example.test', accountId: ada.userId, reason: 'intake_paused', createdAt: '2026-11-22T09:00:00.000Z' },
    ]);
  });

  it('counts an address entry made before sign-up as the account being on the list', async () => {
    await w.db.knex('waitlist').insert({ emailNormalized: 'late@example.test', reason: 'intake_paused', createdAt: w.clock.now() });
    // The account came into being without the sign-up link (e.g. social sign-in before the link existed).
    const account = await w.accounts.service.createPasswordlessAccount({ email: 'LATE@example.test', emailVerified: false, displayName: '' });
    expect(account).to.include({ email: 'LATE@example.test', emailConfirmed: false, displayName: 'LATE' });
    expect(await w.accounts.directory.addToWaitlist({ accountId: account!.id, reason: 'intake_paused' })).to.equal(false);
    const list = await w.accounts.directory.listWaitlist();
    expect(list).to.have.length(1);
    expect(list[0]).to.include({ accountId: account!.id, email: 'LATE@example.test' });
  });

  it('finds accounts by address case-insensitively and refuses to create a second account for a taken address', async () => {
    const ada = await signedUp(w, 'ada@example.test');
    expect((await w.accounts.service.findByEmail(' ADA@example.test '))?.id).to.equal(ada.userId);
    expect(await w.accounts.service.createPasswordlessAccount({ email: 'Ada@Example.test', emailVerified: true, displayName: 'Again' })).to.equal(undefined);
    const noMail = await w.accounts.service.createPasswordlessAccount({ email: null, emailVerified: false, displayName: 'Hidden' });
    expect(noMail).to.include({ email: null, emailConfirmed: false });
  });

  it('housekeeping deletes expired sessions, long-expired tokens and stale failure counts, and nothing live', async () => {
    const ada = await signedUp(w, 'ada@example.test');
    await login(request.agent(w.app), 'nobody@example.test', 'wrong password').expect(401);
    w.clock.advance(31 * 24 * 3600_000);
    const fresh = request.agent(w.app);
    await login(fresh, 'ada@example.test').expect(200);
    expect(await w.accounts.service.pruneSessions()).to.equal(1);
    const deleted = await new ObjectionAccountStore(w.db.knex).prune(w.clock.now());
    expect(deleted).to.include({ accountTokens: 1, loginFailures: 1 });
    expect((await fresh.get('/api/v1/me')).status).to.equal(200);
    expect((await ada.agent.get('/api/v1/me')).status).to.equal(401);
  });
});
