import { createHash } from 'node:crypto';
import { totpCode } from '@svc/sign-in-factors';
import { expect } from 'chai';
import request from 'supertest';
import { APPLE_APP_AUDIENCES, APPLE_ISSUER, APPLE_WEB, GOOGLE_CLIENT, TestIdp } from '../../../packages/accounts/test/idp.js';
import { type Harness, startHarness } from './harness.js';

const APP_URI = 'com.example.meals:/oauth/callback';

/** Path and query of an absolute URL on the service. */
function onService(href: string): string {
  const u = new URL(href);
  return `${u.pathname}${u.search}`;
}

/** Social sign-in through the composed service, configured only by environment variables. */
describe('social sign-in through the composed service', () => {
  let idp: TestIdp;
  let h: Harness;
  before(async () => {
    idp = new TestIdp();
    await idp.start();
    h = await startHarness({
      GOOGLE_CLIENT_ID: GOOGLE_CLIENT.id,
      GOOGLE_CLIENT_SECRET: GOOGLE_CLIENT.secret,
      GOOGLE_AUTHORIZATION_URL: idp.url('/google/authorize'),
      GOOGLE_TOKEN_URL: idp.url('/google/token'),
      GOOGLE_USERINFO_URL: idp.url('/google/userinfo'),
      APPLE_CLIENT_ID: APPLE_WEB.clientId,
      APPLE_TEAM_ID: APPLE_WEB.teamId,
      APPLE_KEY_ID: APPLE_WEB.keyId,
      APPLE_PRIVATE_KEY: idp.appleClientKeyPem,
      APPLE_AUTHORIZATION_URL: idp.url('/apple/authorize'),
      APPLE_TOKEN_URL: idp.url('/apple/token'),
      APPLE_KEYS_URL: idp.url('/apple/keys'),
      APPLE_ISSUER,
      APPLE_NATIVE_AUDIENCES: APPLE_APP_AUDIENCES.join(','),
      APP_REDIRECT_URIS: APP_URI,
    });
    idp.clock = h.clock;
  });
  after(async () => {
    await h.close();
    await idp.stop();
  });

  it('lists both configured providers', async () => {
    const res = await request(h.app).get('/api/v1/auth/providers');
    expect(res.status).to.equal(200);
    expect(res.body.map((p: { scheme: string }) => p.scheme).sort()).to.deep.equal(['Apple', 'Google']);
  });

  it('signs a browser in with Google and lands on the returnUrl with a working session', async () => {
    idp.user = { sub: 'g-1', email: 'grace@example.test', email_verified: true, given_name: 'Grace', family_name: 'Hopper', name: 'Grace Hopper' };
    const browser = request.agent(h.app);
    const start = await browser.get('/api/v1/auth/challenge/Google?returnUrl=%2Fhome');
    expect(start.status).to.equal(302);
    const atIdp = await fetch(start.headers.location!, { redirect: 'manual' });
    const callback = await browser.get(onService(atIdp.headers.get('location')!));
    expect(callback.status).to.equal(302);
    const done = await browser.get(callback.headers.location!);
    expect(done.status).to.equal(302);
    expect(done.headers.location).to.equal('/home');
    const me = await browser.get('/api/v1/me');
    expect(me.status).to.equal(200);
    expect(me.body.user).to.include({ email: 'grace@example.test' });
    expect(me.body).to.include({ emailConfirmed: true, hasPassword: false });
  });

  it('hands the app a single-use code that the PKCE verifier exchanges for a session', async () => {
    idp.user = { sub: 'g-2', email: 'app-user@example.test', email_verified: true, name: 'App User' };
    const verifier = 'v'.repeat(43);
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const browser = request.agent(h.app);
    const start = await browser.get(`/api/v1/auth/challenge/google?redirectUri=${encodeURIComponent(APP_URI)}&codeChallenge=${challenge}`);
    const atIdp = await fetch(start.headers.location!, { redirect: 'manual' });
    const callback = await browser.get(onService(atIdp.headers.get('location')!));
    const done = await browser.get(callback.headers.location!);
    expect(done.headers.location!.startsWith(`${APP_URI}?code=`)).to.equal(true);
    const code = new URL(done.headers.location!).searchParams.get('code')!;
    const app = request.agent(h.app);
    const exchanged = await app.post('/api/v1/auth/exchange').send({ code, codeVerifier: verifier });
    expect(exchanged.status).to.equal(200);
    expect(exchanged.body.user.email).to.equal('app-user@example.test');
    expect((await app.get('/api/v1/me')).status).to.equal(200);
    const again = await request(h.app).post('/api/v1/auth/exchange').send({ code, codeVerifier: verifier });
    expect(again.status).to.equal(401);
    expect(again.body.code).to.equal('signin_code_spent');
  });

  it('signs an app in natively with an Apple identity token, linking by verified address', async () => {
    const password = await request
      .agent(h.app)
      .post('/api/v1/auth/register')
      .send({ email: 'linked@example.test', password: 'a fine password', displayName: 'Linked' });
    expect(password.status).to.equal(200);
    const rawNonce = 'nonce-123';
    const token = await idp.appleToken({
      sub: 'apple-9',
      email: 'linked@example.test',
      email_verified: 'true',
      aud: APPLE_APP_AUDIENCES[0],
      nonce: createHash('sha256').update(rawNonce).digest('hex'),
    });
    const res = await request(h.app)
      .post('/api/v1/auth/idp/native')
      .send({ identityToken: token, rawNonce, givenName: 'Ignored', familyName: null, email: null });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.user).to.include({ email: 'linked@example.test', displayName: 'Linked' });
    const wrong = await request(h.app).post('/api/v1/auth/idp/native').send({ identityToken: token, rawNonce: 'other' });
    expect(wrong.status).to.equal(401);
    expect(wrong.body.code).to.equal('idp_signin_rejected');
  });

  it('with TOTP on: the browser flow goes to /sign-in/verify, the app exchange and native sign-in answer 401 mfa_required', async () => {
    /** Signs in through the browser flow as idp.user, turns TOTP on, answers the secret. */
    const enrol = async (agent: request.Agent): Promise<string> => {
      const start = await agent.post('/api/v1/me/mfa/totp').send({});
      expect(start.status, JSON.stringify(start.body)).to.equal(201);
      expect((await agent.post('/api/v1/me/mfa/totp/confirm').send({ code: totpCode(start.body.secret, h.clock.now()) })).status).to.equal(200);
      h.clock.advance(30_000);
      return start.body.secret as string;
    };
    const browserSignIn = async (browser: request.Agent, query: string) => {
      const start = await browser.get(`/api/v1/auth/challenge/Google?${query}`);
      const atIdp = await fetch(start.headers.location!, { redirect: 'manual' });
      const callback = await browser.get(onService(atIdp.headers.get('location')!));
      return browser.get(callback.headers.location!);
    };
    // Browser: Grace (signed in above) turns TOTP on, then signs in again from a new browser.
    idp.user = { sub: 'g-1', email: 'grace@example.test', email_verified: true, name: 'Grace Hopper' };
    const first = request.agent(h.app);
    expect((await browserSignIn(first, 'returnUrl=%2Fhome')).headers.location).to.equal('/home');
    const secret = await enrol(first);
    const browser = request.agent(h.app);
    const landed = await browserSignIn(browser, 'returnUrl=%2Fhome');
    expect(landed.status).to.equal(302);
    const verify = new URL(landed.headers.location!, 'http://localhost:8080');
    expect(verify.pathname).to.equal('/sign-in/verify');
    expect((await browser.get('/api/v1/me')).status).to.equal(401);
    const page = await browser.get(`${verify.pathname}${verify.search}`).set('Host', 'localhost:8080');
    expect(page.status).to.equal(200);
    const posted = await browser
      .post('/sign-in/verify')
      .set('Host', 'localhost:8080')
      .type('form')
      .send({ mfaToken: verify.searchParams.get('mfaToken')!, code: totpCode(secret, h.clock.now()) });
    expect(posted.status, posted.text).to.equal(303);
    expect(posted.headers.location).to.equal('/home');
    expect((await browser.get('/api/v1/me')).body.user.email).to.equal('grace@example.test');

    // App exchange: the code is spent, and the answer asks for the second step.
    const verifier = 'w'.repeat(43);
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const appBrowser = request.agent(h.app);
    const done = await browserSignIn(appBrowser, `redirectUri=${encodeURIComponent(APP_URI)}&codeChallenge=${challenge}`);
    const code = new URL(done.headers.location!).searchParams.get('code')!;
    const app = request.agent(h.app);
    const exchanged = await app.post('/api/v1/auth/exchange').send({ code, codeVerifier: verifier });
    expect(exchanged.status).to.equal(401);
    expect(exchanged.body.code).to.equal('mfa_required');
    expect((await app.get('/api/v1/me')).status).to.equal(401);
    h.clock.advance(30_000);
    const second = await app.post('/api/v1/auth/mfa').send({ mfaToken: exchanged.body.mfaToken, code: totpCode(secret, h.clock.now()) });
    expect(second.status).to.equal(200);
    expect((await app.get('/api/v1/me/sessions')).body.items.find((x: { current: boolean }) => x.current).method).to.equal('google');

    // Native Apple sign-in of the account linked above, once it turned TOTP on.
    const linked = request.agent(h.app);
    const before = await idp.appleToken({ sub: 'apple-9', email: 'linked@example.test', email_verified: 'true', aud: APPLE_APP_AUDIENCES[0] });
    expect((await linked.post('/api/v1/auth/idp/native').send({ identityToken: before })).status).to.equal(200);
    await enrol(linked);
    const rawNonce = 'nonce-456';
    const token = await idp.appleToken({
      sub: 'apple-9',
      email: 'linked@example.test',
      email_verified: 'true',
      aud: APPLE_APP_AUDIENCES[0],
      nonce: createHash('sha256').update(rawNonce).digest('hex'),
    });
    const native = await request(h.app).post('/api/v1/auth/idp/native').send({ identityToken: token, rawNonce });
    expect(native.status).to.equal(401);
    expect(native.body.code).to.equal('mfa_required');
    expect(native.body.mfaToken).to.be.a('string');
  });
});
