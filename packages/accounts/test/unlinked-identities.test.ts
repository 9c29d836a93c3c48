/**
 * Issue 30 item 2: unlinking a provider locks it out. Its sessions end, and the same identity
 * signing in again is not linked back by its verified address (the owner no longer trusts it),
 * unless the owner, signed in to the account in that browser, signs in with it.
 */
import { expect } from 'chai';
import request from 'supertest';
import { PASSWORD, signedUp } from './helpers.js';
import { APP_URI, createSocialWorld, pkce, type SocialWorld, signInWith } from './social-world.js';

describe('DELETE /me/logins/{provider} locks that provider out (issue 30 item 2)', () => {
  let w: SocialWorld;
  before(async () => {
    w = await createSocialWorld();
  });
  after(async () => w.close());
  beforeEach(async () => w.reset());

  /** ada@example.test with a password, and Google linked to it by its verified address (a browser signed in through Google). */
  async function adaWithGoogle(): Promise<{ owner: request.Agent; viaGoogle: request.Agent; userId: string }> {
    const { agent: owner, userId } = await signedUp(w, 'ada@example.test');
    // Confirmed (an unconfirmed address taken over by a provider would end the owner's sessions).
    await w.db.knex('accounts').where({ id: userId }).update({ emailConfirmed: true });
    const viaGoogle = request.agent(w.app);
    const done = await signInWith('google', viaGoogle, '?returnUrl=%2Fhome');
    expect(done.headers.location).to.equal('/home');
    expect((await viaGoogle.get('/api/v1/me')).body.user.id).to.equal(userId);
    expect(await w.db.knex('account_identities').where({ accountId: userId }).pluck('provider')).to.deep.equal(['google']);
    return { owner, viaGoogle, userId };
  }

  it('ends every session signed in through the provider, on its next request; the other sessions stay', async () => {
    const { owner, viaGoogle } = await adaWithGoogle();
    const viaGoogleToo = request.agent(w.app);
    await signInWith('google', viaGoogleToo);
    expect((await viaGoogleToo.get('/api/v1/me')).status).to.equal(200);
    expect((await owner.delete('/api/v1/me/logins/google')).status).to.equal(204);
    expect((await viaGoogle.get('/api/v1/me')).status).to.equal(401);
    expect((await viaGoogleToo.get('/api/v1/me')).status).to.equal(401);
    expect((await owner.get('/api/v1/me')).status).to.equal(200);
  });

  it('a session that signed in through the provider and unlinks it ends too (its cookie is cleared)', async () => {
    const { owner, viaGoogle } = await adaWithGoogle();
    const res = await viaGoogle.delete('/api/v1/me/logins/google');
    expect(res.status).to.equal(204);
    expect(String(res.headers['set-cookie'])).to.match(/service_session=;/);
    expect((await viaGoogle.get('/api/v1/me')).status).to.equal(401);
    expect((await owner.get('/api/v1/me')).status).to.equal(200);
  });

  it('the unlinked identity signing in again is refused (browser /login, app ?error=account): nothing linked, no session, no mail', async () => {
    const { owner, userId } = await adaWithGoogle();
    await owner.delete('/api/v1/me/logins/google').expect(204);
    await w.deliver();
    w.smtp.clear();

    const browser = request.agent(w.app);
    const done = await signInWith('google', browser, '?returnUrl=%2Fhome');
    expect(done.status).to.equal(302);
    expect(done.headers.location).to.equal('/login');
    expect((await browser.get('/api/v1/me')).status).to.equal(401);

    const { challenge } = pkce();
    const app = request.agent(w.app);
    const appDone = await signInWith('google', app, `?redirectUri=${encodeURIComponent(APP_URI)}&codeChallenge=${challenge}`);
    expect(appDone.headers.location).to.equal(`${APP_URI}?error=account`);

    expect(await w.db.knex('account_identities').where({ accountId: userId }).pluck('provider')).to.deep.equal([]);
    expect(await w.db.knex('accounts').count({ n: '*' }).first()).to.deep.equal({ n: '1' });
    await w.deliver();
    expect(w.smtp.mails).to.deep.equal([]);
  });

  it('the owner, signed in to the account in that browser, links it again by signing in with it', async () => {
    const { owner, userId } = await adaWithGoogle();
    await owner.delete('/api/v1/me/logins/google').expect(204);
    const done = await signInWith('google', owner, '?returnUrl=%2Fsettings');
    expect(done.headers.location).to.equal('/settings');
    expect(await w.db.knex('account_identities').where({ accountId: userId }).pluck('provider')).to.deep.equal(['google']);
    expect(await w.db.knex('account_unlinked_identities').count({ n: '*' }).first()).to.deep.equal({ n: '0' });
    // Linked again, it signs in anywhere as before.
    const elsewhere = request.agent(w.app);
    await signInWith('google', elsewhere);
    expect((await elsewhere.get('/api/v1/me')).body.user.id).to.equal(userId);
  });

  it('signed in to ANOTHER account, the browser still cannot attach the unlinked identity to the first', async () => {
    const { owner, userId } = await adaWithGoogle();
    await owner.delete('/api/v1/me/logins/google').expect(204);
    const { agent: other } = await signedUp(w, 'bob@example.test', PASSWORD, 'Bob');
    const done = await signInWith('google', other);
    expect(done.headers.location).to.equal('/login');
    expect(await w.db.knex('account_identities').where({ accountId: userId }).pluck('provider')).to.deep.equal([]);
  });
});
