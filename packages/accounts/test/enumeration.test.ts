/**
 * Issue 18, row 3: operations that must not reveal whether an address has an account do the same
 * database work on both branches. Read from X-Diagnostics: the number of SQL statements and the
 * names of the Server-Timing steps. (Timing itself is measured by scripts/timing-check.ts, never by
 * a test.)
 */
import { expect } from 'chai';
import request from 'supertest';
import { createWorld, PASSWORD, signedUp, type World } from './helpers.js';

interface Work {
  queries: number;
  steps: string[];
}

function work(res: request.Response): Work {
  const d = JSON.parse(String(res.headers['x-diagnostics']));
  return { queries: d.db.queries, steps: d.steps.map((s: { name: string }) => s.name) };
}

describe('equal work whether or not an address has an account (issue 18 row 3)', () => {
  let w: World;
  before(async () => {
    w = await createWorld();
  });
  after(async () => w.close());
  beforeEach(async () => w.reset());

  const post = (path: string, body: object) => request(w.app).post(path).set('X-Diagnostics', '1').send(body);

  it('forgot-password: the same statements and steps for a known and an unknown address, first and repeated; the mail only goes to the outbox', async () => {
    await signedUp(w, 'ada@example.test');
    await w.deliver();
    w.smtp.clear();
    const known = await post('/api/v1/auth/forgot-password', { email: 'ada@example.test' });
    const unknown = await post('/api/v1/auth/forgot-password', { email: 'nobody@example.test' });
    expect([known.status, unknown.status]).to.deep.equal([204, 204]);
    expect(work(known)).to.deep.equal(work(unknown));
    // Handed to the outbox inside the request, sent after it by the worker.
    expect(w.smtp.mails).to.have.length(0);
    expect(await w.db.knex('mail_outbox').whereNull('sentAt').count({ n: '*' }).first()).to.deep.equal({ n: '1' });
    const knownAgain = await post('/api/v1/auth/forgot-password', { email: 'ada@example.test' });
    const unknownAgain = await post('/api/v1/auth/forgot-password', { email: 'nobody@example.test' });
    expect(work(knownAgain)).to.deep.equal(work(unknownAgain));
    expect(work(knownAgain)).to.deep.equal(work(known));
    expect((await w.deliver()).map((m) => m.subject)).to.deep.equal(['Reset your password']);
  });

  it('register: the same statements and steps for a fresh and a taken address (no session cookie sent)', async () => {
    await signedUp(w, 'ada@example.test');
    const taken = await post('/api/v1/auth/register', { email: 'ADA@example.test', password: PASSWORD, displayName: 'Ada' });
    const fresh = await post('/api/v1/auth/register', { email: 'fresh@example.test', password: PASSWORD, displayName: 'Fresh' });
    expect([taken.status, fresh.status]).to.deep.equal([200, 200]);
    expect(taken.body).to.deep.equal(fresh.body);
    expect(work(taken)).to.deep.equal(work(fresh));
  });

  it('login: the same statements and steps for an unknown address and a known one with a wrong password', async () => {
    await signedUp(w, 'ada@example.test');
    const known = await post('/api/v1/auth/login', { email: 'ada@example.test', password: 'wrong password' });
    const unknown = await post('/api/v1/auth/login', { email: 'nobody@example.test', password: 'wrong password' });
    expect([known.status, unknown.status]).to.deep.equal([401, 401]);
    expect(known.body.detail).to.equal(unknown.body.detail);
    expect(work(known)).to.deep.equal(work(unknown));
    expect(work(known).steps).to.deep.equal(['hash-password']);
  });

  it('change-email: the same statements and steps for a free and a taken new address', async () => {
    await signedUp(w, 'taken@example.test');
    const { agent } = await signedUp(w, 'ada@example.test');
    const taken = await agent.post('/api/v1/me/email').set('X-Diagnostics', '1').send({ newEmail: 'taken@example.test' });
    const free = await agent.post('/api/v1/me/email').set('X-Diagnostics', '1').send({ newEmail: 'free@example.test' });
    expect([taken.status, free.status]).to.deep.equal([204, 204]);
    expect(work(taken)).to.deep.equal(work(free));
  });

  it('resend-confirmation: the same statements for a confirmed address (no mail) and an unconfirmed one (mail)', async () => {
    const confirmed = await signedUp(w, 'done@example.test');
    await w.db.knex('accounts').where({ id: confirmed.userId }).update({ emailConfirmed: true });
    const open = await signedUp(w, 'open@example.test');
    w.clock.advanceSeconds(301);
    const a = await confirmed.agent.post('/api/v1/auth/resend-confirmation').set('X-Diagnostics', '1');
    const b = await open.agent.post('/api/v1/auth/resend-confirmation').set('X-Diagnostics', '1');
    expect([a.status, b.status]).to.deep.equal([204, 204]);
    expect(work(a)).to.deep.equal(work(b));
  });
});
