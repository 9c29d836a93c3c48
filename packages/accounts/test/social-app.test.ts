import { expect } from 'chai';
import request from 'supertest';
import { KnexIdentityStore } from '../src/social/KnexIdentityStore.js';
import { hashToken } from '../src/tokens.js';
import { dbQueries, sessionCookie, signedUp } from './helpers.js';
import {
  APP_URI,
  APP_URI_WITH_QUERY,
  appCode,
  cookieNamed,
  createSocialWorld,
  pkce,
  type SocialWorld,
  signInWith,
  throughApple,
  throughGoogle,
  toExternalCallback,
} from './social-world.js';

describe('social sign-in: the app flow and POST /auth/exchange', () => {
  let w: SocialWorld;
  before(async () => {
    w = await createSocialWorld();
  });
  after(async () => w.close());
  beforeEach(async () => w.reset());

  const exchange = (code: string, codeVerifier: string) => request(w.app).post('/api/v1/auth/exchange').send({ code, codeVerifier });

  it('Google: ends on the app URI with ?code=, which the app exchanges with its verifier for a session (200 MeResponse + cookie)', async () => {
    const { verifier, challenge } = pkce();
    const browser = request.agent(w.app);
    const done = await signInWith('google', browser, `?redirectUri=${encodeURIComponent(APP_URI)}&codeChallenge=${challenge}`);
    expect(done.status).to.equal(302);
    expect(done.headers.location).to.match(/^com\.example\.meals:\/oauth\/callback\?code=[A-Za-z0-9_-]{43}$/);
    // The browser that went through the provider is not signed in: the app is, at the exchange.
    expect(cookieNamed(done, 'service_session')).to.equal(undefined);
    const code = new URL(done.headers.location!).searchParams.get('code')!;

    const res = await exchange(code, verifier);
    expect(res.status).to.equal(200);
    expect(res.headers['cache-control']).to.equal('no-store');
    // Spend the code, read the account, write the new session, record it on the code (so a replay
    // can end it), memberships.
    expect(dbQueries(res)).to.equal(5);
    expect(res.body.user).to.include({ email: 'ada@example.test', displayName: 'Ada Lovelace' });
    expect(res.body).to.have.all.keys('user', 'memberships', 'isPlatformAdmin', 'emailConfirmed', 'hasPassword', 'serverNow');
    const cookie = sessionCookie(res)!;
    const me = await request(w.app).get('/api/v1/me').set('Cookie', cookie.split(';')[0]!);
    expect(me.status).to.equal(200);
    expect(me.body.user.id).to.equal(res.body.user.id);
  });

  it('Apple: the same through form_post; the code is stored only as a hash, bound to the challenge, for two minutes', async () => {
    const { verifier, challenge } = pkce();
    const code = await appCode(w, 'apple', challenge);
    const row = await w.db.knex('app_signin_codes').first();
    expect(row.codeHash.equals(hashToken(code))).to.equal(true);
    expect(row.codeChallenge).to.equal(challenge);
    expect(row.redirectUri).to.equal(APP_URI);
    expect(row.expiresAt.getTime() - row.createdAt.getTime()).to.equal(120_000);
    expect(JSON.stringify(row)).to.not.include(code);
    expect((await exchange(code, verifier)).status).to.equal(200);
  });

  it('appends &code= to an app URI that already has a query', async () => {
    const { verifier, challenge } = pkce();
    const browser = request.agent(w.app);
    const done = await signInWith('google', browser, `?redirectUri=${encodeURIComponent(APP_URI_WITH_QUERY)}&codeChallenge=${challenge}`);
    expect(done.headers.location).to.match(/^https:\/\/meals\.example\.test\/app-callback\?from=ios&code=[A-Za-z0-9_-]{43}$/);
    expect((await exchange(new URL(done.headers.location!).searchParams.get('code')!, verifier)).status).to.equal(200);
  });

  it('ends on the app URI with ?error=account when the account cannot be signed in, and when the provider fails', async () => {
    await signedUp(w, 'ada@example.test');
    w.idp.user = { ...w.idp.user, email_verified: false };
    const { challenge } = pkce();
    const done = await signInWith('google', request.agent(w.app), `?redirectUri=${encodeURIComponent(APP_URI_WITH_QUERY)}&codeChallenge=${challenge}`);
    expect(done.status).to.equal(302);
    expect(done.headers.location).to.equal(`${APP_URI_WITH_QUERY}&error=account`);
    expect(await w.db.knex('app_signin_codes').count({ n: '*' }).first()).to.deep.equal({ n: '0' });

    // The person cancels at the provider: the state cookie knows the flow, so the app hears of it.
    const browser = request.agent(w.app);
    const start = await browser.get(`/api/v1/auth/challenge/google?redirectUri=${encodeURIComponent(APP_URI)}&codeChallenge=${challenge}`);
    const state = new URL(start.headers.location!).searchParams.get('state');
    const cancelled = await browser.get(`/api/v1/auth/callback/google?error=access_denied&state=${state}`);
    expect(cancelled.headers.location).to.equal(`${APP_URI}?error=account`);
  });

  it('a copied external cookie replayed in the app flow ends on ?error=account and issues no second code', async () => {
    const { verifier, challenge } = pkce();
    const browser = request.agent(w.app);
    const callback = await throughGoogle(browser, `?redirectUri=${encodeURIComponent(APP_URI)}&codeChallenge=${challenge}`);
    const copy = cookieNamed(callback, 'service_external')!.split(';')[0]!;
    const done = await toExternalCallback(browser, callback);
    expect(done.headers.location).to.match(/^com\.example\.meals:\/oauth\/callback\?code=[A-Za-z0-9_-]{43}$/);
    const replay = await request(w.app).get(callback.headers.location!).set('Cookie', copy);
    expect(replay.status).to.equal(302);
    expect(replay.headers.location).to.equal(`${APP_URI}?error=account`);
    expect(await w.db.knex('app_signin_codes').count({ n: '*' }).first()).to.deep.equal({ n: '1' });
    expect((await exchange(new URL(done.headers.location!).searchParams.get('code')!, verifier)).status).to.equal(200);
  });

  it('of parallel replays of one external cookie in the app flow exactly one gets a code', async () => {
    const { challenge } = pkce();
    const browser = request.agent(w.app);
    const callback = await throughApple(browser, `?redirectUri=${encodeURIComponent(APP_URI)}&codeChallenge=${challenge}`);
    const copy = cookieNamed(callback, 'service_external')!.split(';')[0]!;
    const answers = await Promise.all(Array.from({ length: 6 }, () => request(w.app).get(callback.headers.location!).set('Cookie', copy)));
    const locations = answers.map((a) => a.headers.location!);
    expect(locations.filter((l) => l === `${APP_URI}?error=account`)).to.have.length(5);
    expect(locations.filter((l) => /\?code=[A-Za-z0-9_-]{43}$/.test(l))).to.have.length(1);
    expect(await w.db.knex('app_signin_codes').count({ n: '*' }).first()).to.deep.equal({ n: '1' });
  });

  it('housekeeping deletes spent external-cookie ids a day past their expiry, and nothing younger', async () => {
    const store = new KnexIdentityStore(w.db.knex);
    const expiresAt = new Date(w.clock.now().getTime() + 300_000);
    expect(await store.spendExternalCookie('old-id', expiresAt)).to.equal(true);
    expect(await store.spendExternalCookie('old-id', expiresAt)).to.equal(false);
    w.clock.advance(24 * 3600_000);
    expect(await store.spendExternalCookie('new-id', new Date(w.clock.now().getTime() + 300_000))).to.equal(true);
    expect(await store.pruneSpentExternalCookies(w.clock.now())).to.equal(0);
    w.clock.advance(300_001);
    expect(await store.pruneSpentExternalCookies(w.clock.now())).to.equal(1);
    expect((await w.db.knex('spent_external_cookies').select('jti')).map((r) => r.jti)).to.deep.equal(['new-id']);
  });

  it('answers 401 signin_code_spent for an unknown code', async () => {
    const { verifier } = pkce();
    const res = await exchange('A'.repeat(43), verifier);
    expect(res.status).to.equal(401);
    expect(res.body.code).to.equal('signin_code_spent');
    expect(sessionCookie(res)).to.equal(undefined);
  });

  it('works once: a second exchange of a used code answers 401 signin_code_spent', async () => {
    const { verifier, challenge } = pkce();
    const code = await appCode(w, 'google', challenge);
    expect((await exchange(code, verifier)).status).to.equal(200);
    const again = await exchange(code, verifier);
    expect(again.status).to.equal(401);
    expect(again.body.code).to.equal('signin_code_spent');
  });

  it('lives two minutes: at 2:00 and later it answers 401 signin_code_spent', async () => {
    const { verifier, challenge } = pkce();
    const fresh = await appCode(w, 'google', challenge);
    w.clock.advance(119_999);
    expect((await exchange(fresh, verifier)).status).to.equal(200);

    const late = await appCode(w, 'google', challenge);
    w.clock.advance(120_000);
    const res = await exchange(late, verifier);
    expect(res.status).to.equal(401);
    expect(res.body.code).to.equal('signin_code_spent');
  });

  it('is spent by a wrong verifier (PKCE mismatch): the right verifier afterwards answers 401 too', async () => {
    const { verifier, challenge } = pkce();
    const code = await appCode(w, 'google', challenge);
    const wrong = await exchange(code, pkce().verifier);
    expect(wrong.status).to.equal(401);
    expect(wrong.body.code).to.equal('signin_code_spent');
    const right = await exchange(code, verifier);
    expect(right.status).to.equal(401);
    expect(right.body.code).to.equal('signin_code_spent');
    // The challenge itself is not a verifier.
    const other = await appCode(w, 'google', challenge);
    expect((await exchange(other, challenge)).status).to.equal(401);
  });

  it('ten parallel exchanges of one code: exactly one 200, nine 401 signin_code_spent (10 rounds)', async function () {
    this.timeout(60_000);
    for (let round = 0; round < 10; round++) {
      const { verifier, challenge } = pkce();
      const code = await appCode(w, 'apple', challenge);
      const answers = await Promise.all(Array.from({ length: 10 }, () => exchange(code, verifier)));
      expect(answers.filter((a) => a.status === 200).length, `round ${round}`).to.equal(1);
      for (const r of answers.filter((a) => a.status !== 200)) expect([r.status, r.body.code]).to.deep.equal([401, 'signin_code_spent']);
      // A later replay revokes what the winner was issued (RFC 6749 §4.1.2), like any replay.
      const winner = answers.find((a) => a.status === 200)!;
      expect((await exchange(code, verifier)).status).to.equal(401);
      const me = await request(w.app).get('/api/v1/me').set('Cookie', sessionCookie(winner)!.split(';')[0]!);
      expect(me.status, `round ${round}: the session of a replayed code still works`).to.equal(401);
    }
  });

  it('a code redeemed a second time revokes the session its first redemption made', async () => {
    const { verifier, challenge } = pkce();
    const code = await appCode(w, 'google', challenge);
    const first = await exchange(code, verifier);
    expect(first.status).to.equal(200);
    const cookie = sessionCookie(first)!.split(';')[0]!;
    expect((await request(w.app).get('/api/v1/me').set('Cookie', cookie)).status).to.equal(200);
    const replay = await exchange(code, verifier);
    expect([replay.status, replay.body.code]).to.deep.equal([401, 'signin_code_spent']);
    expect((await request(w.app).get('/api/v1/me').set('Cookie', cookie)).status).to.equal(401);
    // Another session of the same account is not touched.
    const { verifier: v2, challenge: c2 } = pkce();
    const other = await exchange(await appCode(w, 'google', c2), v2);
    expect((await request(w.app).get('/api/v1/me').set('Cookie', sessionCookie(other)!.split(';')[0]!)).status).to.equal(200);
  });

  it('answers 400 for an unreadable body without spending the code', async () => {
    const { verifier, challenge } = pkce();
    const code = await appCode(w, 'google', challenge);
    const missing = await request(w.app).post('/api/v1/auth/exchange').send({ code });
    expect(missing.status).to.equal(400);
    expect(missing.body.code).to.equal('validation_failed');
    const form = await request(w.app).post('/api/v1/auth/exchange').type('form').send(`code=${code}&codeVerifier=${verifier}`);
    expect(form.status).to.equal(400);
    expect((await exchange(code, verifier)).status).to.equal(200);
  });

  it('housekeeping deletes codes expired over a day ago, and nothing younger', async () => {
    const { challenge } = pkce();
    await appCode(w, 'google', challenge);
    w.clock.advance(24 * 3600_000);
    await appCode(w, 'google', challenge);
    const store = new KnexIdentityStore(w.db.knex);
    expect(await store.prune(w.clock.now())).to.equal(0);
    w.clock.advance(120_001);
    expect(await store.prune(w.clock.now())).to.equal(1);
    expect(await w.db.knex('app_signin_codes').count({ n: '*' }).first()).to.deep.equal({ n: '1' });
  });

  it('does not hand a code to an account deleted before the exchange', async () => {
    const { verifier, challenge } = pkce();
    const code = await appCode(w, 'google', challenge);
    await w.db.knex('accounts').delete();
    const res = await exchange(code, verifier);
    expect(res.status).to.equal(401);
    expect(res.body.code).to.equal('signin_code_spent');
  });
});
