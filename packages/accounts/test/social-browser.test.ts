import { hkdfSync } from 'node:crypto';
import { buildOpenApiDocument } from '@svc/http-kit';
import { expect } from 'chai';
import { SignJWT } from 'jose';
import request from 'supertest';
import { dbQueries, login, PASSWORD, register, signedUp } from './helpers.js';
import {
  APP_URI,
  cookieNamed,
  createSocialWorld,
  pkce,
  type SocialWorld,
  setCookies,
  signInWith,
  TEST_TUNING,
  throughApple,
  throughGoogle,
  toExternalCallback,
} from './social-world.js';

describe('social sign-in: providers, challenge and the browser flow', () => {
  let w: SocialWorld;
  before(async () => {
    w = await createSocialWorld();
  });
  after(async () => w.close());
  beforeEach(async () => w.reset());

  describe('GET /auth/providers', () => {
    it('lists Google and Apple when both have browser sign-in configured', async () => {
      const res = await request(w.app).get('/api/v1/auth/providers');
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal([
        { scheme: 'Google', displayName: 'Google' },
        { scheme: 'Apple', displayName: 'Apple' },
      ]);
    });

    it('lists nothing without configuration, and not Apple when only native sign-in is configured', async () => {
      const none = w.variant({ google: undefined, apple: undefined });
      expect((await request(none).get('/api/v1/auth/providers')).body).to.deep.equal([]);
      const nativeOnly = w.variant({ google: undefined, apple: { ...w.config.apple!, web: undefined } });
      expect((await request(nativeOnly).get('/api/v1/auth/providers')).body).to.deep.equal([]);
    });
  });

  describe('GET /auth/challenge/{provider}', () => {
    it('answers 302 to the provider with state and PKCE (Google), never JSON, and a state cookie bound to this browser', async () => {
      const res = await request(w.app).get('/api/v1/auth/challenge/google?returnUrl=%2Fplan');
      expect(res.status).to.equal(302);
      expect(res.headers['content-type'] ?? '').to.not.match(/json/);
      expect(res.headers['cache-control']).to.equal('no-store');
      const to = new URL(res.headers.location!);
      expect(`${to.origin}${to.pathname}`).to.equal(w.idp.url('/google/authorize'));
      expect(to.searchParams.get('client_id')).to.equal(w.config.google!.clientId);
      expect(to.searchParams.get('redirect_uri')).to.equal('https://meals.example.test/api/v1/auth/callback/google');
      expect(to.searchParams.get('code_challenge_method')).to.equal('S256');
      expect(to.searchParams.get('state')).to.match(/^[A-Za-z0-9_-]{43}$/);
      const state = cookieNamed(res, 'service_oauth_google')!;
      const attrs = state.split(';').map((a) => a.trim());
      expect(attrs).to.include.members(['HttpOnly', 'SameSite=Lax', 'Path=/api/v1/auth/callback/google']);
      expect(attrs.find((a) => a.startsWith('Max-Age='))).to.equal('Max-Age=600');
    });

    it('matches the provider case-insensitively; Apple goes to form_post with state and nonce', async () => {
      for (const name of ['APPLE', 'Apple', 'apple']) {
        const res = await request(w.app).get(`/api/v1/auth/challenge/${name}`);
        expect(res.status, name).to.equal(302);
        const to = new URL(res.headers.location!);
        expect(`${to.origin}${to.pathname}`).to.equal(w.idp.url('/apple/authorize'));
        expect(to.searchParams.get('response_mode')).to.equal('form_post');
        expect(to.searchParams.get('scope')).to.equal('name email');
        expect(to.searchParams.get('nonce')).to.match(/^[A-Za-z0-9_-]{43}$/);
      }
      expect((await request(w.app).get('/api/v1/auth/challenge/GOOGLE')).status).to.equal(302);
    });

    it('answers 404 unknown_login_provider for an unknown provider and for one that is not configured', async () => {
      const unknown = await request(w.app).get('/api/v1/auth/challenge/facebook');
      expect(unknown.status).to.equal(404);
      expect(unknown.body.code).to.equal('unknown_login_provider');
      const app = w.variant({ google: undefined, apple: { ...w.config.apple!, web: undefined } });
      for (const p of ['google', 'apple']) {
        const res = await request(app).get(`/api/v1/auth/challenge/${p}`);
        expect(res.status, p).to.equal(404);
        expect(res.body.code).to.equal('unknown_login_provider');
      }
    });

    it('refuses every open-redirect attempt as returnUrl with 400 validation_failed', async () => {
      const attempts = [
        '//evil.example',
        '/\\evil.example',
        'https://evil.example',
        '%2F%2Fevil.example',
        '/%2F/evil.example',
        '/%5Cevil.example',
        '/%255Cevil.example',
        'javascript:alert(1)',
        'evil.example',
        '/\t/evil.example',
        '///evil.example',
        '/%09/evil.example',
        'http:/evil.example',
      ];
      for (const returnUrl of attempts) {
        const res = await request(w.app).get(`/api/v1/auth/challenge/google?returnUrl=${encodeURIComponent(returnUrl)}`);
        expect(res.status, returnUrl).to.equal(400);
        expect(res.body.code, returnUrl).to.equal('validation_failed');
        expect(res.body.errors[0].field).to.equal('returnUrl');
        expect(setCookies(res), returnUrl).to.deep.equal([]);
      }
      // Raw (undecoded) forms straight in the query string too.
      for (const raw of ['%2F%2Fevil.example', '/%5Cevil', '%2F%5Cevil']) {
        const res = await request(w.app).get(`/api/v1/auth/challenge/google?returnUrl=${raw}`);
        expect(res.status, raw).to.equal(400);
      }
    });

    it('accepts site-relative returnUrls with a query and an encoded value', async () => {
      for (const returnUrl of ['/', '/plan', '/households/1?tab=rules', '/search?q=100%25']) {
        const res = await request(w.app).get(`/api/v1/auth/challenge/google?returnUrl=${encodeURIComponent(returnUrl)}`);
        expect(res.status, returnUrl).to.equal(302);
      }
    });

    it('answers 400 app_signin_incomplete when only one of codeChallenge and redirectUri comes', async () => {
      const { challenge } = pkce();
      const onlyChallenge = await request(w.app).get(`/api/v1/auth/challenge/google?codeChallenge=${challenge}`);
      expect(onlyChallenge.status).to.equal(400);
      expect(onlyChallenge.body.code).to.equal('app_signin_incomplete');
      expect(onlyChallenge.body.errors[0].field).to.equal('redirectUri');
      const onlyUri = await request(w.app).get(`/api/v1/auth/challenge/apple?redirectUri=${encodeURIComponent(APP_URI)}`);
      expect(onlyUri.status).to.equal(400);
      expect(onlyUri.body.code).to.equal('app_signin_incomplete');
      expect(onlyUri.body.errors[0].field).to.equal('codeChallenge');
    });

    it('answers 400 validation_failed for a redirectUri not allowed and a codeChallenge that is not S256', async () => {
      const { challenge } = pkce();
      for (const uri of ['com.example.meals:/oauth/callback/', 'https://evil.example/cb', 'COM.EXAMPLE.MEALS:/oauth/callback', `${APP_URI}?x=1`]) {
        const res = await request(w.app).get(`/api/v1/auth/challenge/google?redirectUri=${encodeURIComponent(uri)}&codeChallenge=${challenge}`);
        expect(res.status, uri).to.equal(400);
        expect(res.body.code).to.equal('validation_failed');
        expect(res.body.errors[0].field).to.equal('redirectUri');
      }
      for (const bad of ['short', `${challenge}A`, `${challenge.slice(0, 42)}=`, `${challenge.slice(0, 42)}+`]) {
        const res = await request(w.app).get(
          `/api/v1/auth/challenge/google?redirectUri=${encodeURIComponent(APP_URI)}&codeChallenge=${encodeURIComponent(bad)}`,
        );
        expect(res.status, bad).to.equal(400);
        expect(res.body.code).to.equal('validation_failed');
        expect(res.body.errors[0].field).to.equal('codeChallenge');
      }
    });

    it('ignores a code or error in the challenge query (it is not a callback)', async () => {
      const res = await request(w.app).get('/api/v1/auth/challenge/google?code=abc&error=access_denied');
      expect(res.status).to.equal(302);
      expect(res.headers.location).to.match(/^http:\/\/127\.0\.0\.1:\d+\/google\/authorize\?/);
    });
  });

  describe('the browser flow end to end', () => {
    it('Google: challenge → provider → callback → external-callback signs in a new account and lands on returnUrl', async () => {
      const agent = request.agent(w.app);
      const callback = await throughGoogle(agent, '?returnUrl=%2Fplan%3Fweek%3D3');
      expect(callback.status).to.equal(302);
      expect(callback.headers.location).to.equal('/api/v1/auth/external-callback?returnUrl=%2Fplan%3Fweek%3D3');
      const external = cookieNamed(callback, 'service_external')!;
      const attrs = external.split(';').map((a) => a.trim());
      expect(attrs).to.include.members(['HttpOnly', 'SameSite=Lax', 'Path=/api/v1/auth/external-callback', 'Max-Age=300']);
      // The state cookie is spent at the callback.
      expect(cookieNamed(callback, 'service_oauth_google')).to.match(/Expires=Thu, 01 Jan 1970/);

      const done = await toExternalCallback(agent, callback);
      expect(done.status).to.equal(302);
      expect(done.headers.location).to.equal('/plan?week=3');
      expect(done.headers['content-type'] ?? '').to.not.match(/json/);
      expect(cookieNamed(done, 'service_session')).to.be.a('string');
      expect(cookieNamed(done, 'service_external')).to.match(/Expires=Thu, 01 Jan 1970/);

      const me = await agent.get('/api/v1/me');
      expect(me.status).to.equal(200);
      expect(me.body.user).to.include({ email: 'ada@example.test', displayName: 'Ada Lovelace' });
      expect(me.body.emailConfirmed).to.equal(true);
      expect(me.body.hasPassword).to.equal(false);
      const links = await w.db.knex('account_identities').select('provider', 'subject', 'email', 'emailVerified', 'accountId');
      expect(links).to.deep.equal([{ provider: 'google', subject: 'user-1', email: 'ada@example.test', emailVerified: true, accountId: me.body.user.id }]);
      expect(w.idp.counts.userinfo).to.equal(1);
    });

    it('Apple: challenge → provider → form_post callback (cross-site, state-proved) → external-callback', async () => {
      w.idp.user = { sub: 'apple-001', email: 'grace@privaterelay.example', email_verified: 'true', given_name: 'Grace', family_name: 'Hopper' };
      const agent = request.agent(w.app);
      const callback = await throughApple(agent, '?returnUrl=%2Fwelcome');
      expect(callback.status).to.equal(302);
      const done = await toExternalCallback(agent, callback);
      expect(done.headers.location).to.equal('/welcome');
      const me = await agent.get('/api/v1/me');
      expect(me.body.user).to.include({ email: 'grace@privaterelay.example', displayName: 'Grace Hopper' });
      expect(me.body.emailConfirmed).to.equal(true);
      expect(w.idp.counts.appleToken).to.equal(1);
    });

    it('the Apple callback is accepted from a foreign Origin (it is cross-site by design) when no session cookie rides along', async () => {
      const agent = request.agent(w.app);
      const start = await agent.get('/api/v1/auth/challenge/apple');
      const { action, fields } = (await (await fetch(start.headers.location!)).json()) as { action: string; fields: Record<string, string> };
      const res = await agent.post(new URL(action).pathname).set('Origin', 'https://appleid.apple.com').type('form').send(fields);
      expect(res.status).to.equal(302);
      expect(res.headers.location).to.equal('/api/v1/auth/external-callback');
    });

    it('lands on /login without a returnUrl (nothing usable came back)', async () => {
      const agent = request.agent(w.app);
      const done = await signInWith('google', agent);
      expect(done.status).to.equal(302);
      expect(done.headers.location).to.equal('/login');
      expect((await agent.get('/api/v1/me')).status).to.equal(200);
    });

    it('signs the same person in to the same account next time (linked by subject, even after the address changed)', async () => {
      const first = request.agent(w.app);
      await signInWith('google', first);
      const id = (await first.get('/api/v1/me')).body.user.id;
      w.idp.user = { ...w.idp.user, email: 'ada.new@example.test' };
      const second = request.agent(w.app);
      await signInWith('google', second);
      expect((await second.get('/api/v1/me')).body.user.id).to.equal(id);
      expect(await w.db.knex('accounts').count({ n: '*' }).first()).to.deep.equal({ n: '1' });
    });

    it('issues a new session id at each social sign-in (a planted session id is worth nothing)', async () => {
      const { agent } = await signedUp(w, 'mallory@example.test');
      const before = (await w.db.knex('account_sessions').select('sid')).map((r) => r.sid);
      const done = await signInWith('google', agent);
      expect(done.status).to.equal(302);
      const after = (await w.db.knex('account_sessions').select('sid')).map((r) => r.sid);
      expect(after.filter((s) => !before.includes(s))).to.have.length(1);
      expect((await agent.get('/api/v1/me')).body.user.email).to.equal('ada@example.test');
    });
  });

  describe('account rules: linked, else verified address, else new', () => {
    it('links to the account with the same address when the provider vouches it is verified', async () => {
      const { userId } = await signedUp(w, 'Ada@Example.test');
      await w.db.knex('accounts').where({ id: userId }).update({ emailConfirmed: true });
      const agent = request.agent(w.app);
      await signInWith('google', agent);
      const me = (await agent.get('/api/v1/me')).body;
      expect(me.user.id).to.equal(userId);
      expect(me.hasPassword).to.equal(true);
      expect(await w.db.knex('account_identities').where({ accountId: userId }).count({ n: '*' }).first()).to.deep.equal({ n: '1' });
      // The password still works.
      await login(request.agent(w.app), 'ada@example.test', PASSWORD).expect(200);
    });

    it('takes over an unconfirmed account found by a verified address: confirms it, drops the squatter password, ends its sessions and spends its links', async () => {
      const squatter = await signedUp(w, 'ada@example.test');
      await squatter.agent.post('/api/v1/me/email').send({ newEmail: 'squatter@evil.example' }).expect(204);
      const changeLink = await w.db.knex('account_tokens').where({ accountId: squatter.userId, purpose: 'change_email' }).first();
      expect(changeLink.usedAt).to.equal(null);

      const agent = request.agent(w.app);
      await signInWith('google', agent);
      const me = (await agent.get('/api/v1/me')).body;
      expect(me.user.id).to.equal(squatter.userId);
      expect(me.emailConfirmed).to.equal(true);
      expect(me.hasPassword).to.equal(false);
      expect((await squatter.agent.get('/api/v1/me')).status).to.equal(401);
      expect((await login(request.agent(w.app), 'ada@example.test', PASSWORD)).status).to.equal(401);
      const open = await w.db.knex('account_tokens').where({ accountId: squatter.userId }).whereNull('usedAt');
      expect(open).to.deep.equal([]);
    });

    it('does NOT link by an unverified address: the sign-in fails (/login) and nothing is linked or created', async () => {
      const { userId } = await signedUp(w, 'ada@example.test');
      w.idp.user = { ...w.idp.user, email_verified: false };
      const agent = request.agent(w.app);
      const done = await signInWith('google', agent, '?returnUrl=%2Fplan');
      expect(done.status).to.equal(302);
      expect(done.headers.location).to.equal('/login');
      expect(cookieNamed(done, 'service_session')).to.equal(undefined);
      expect((await agent.get('/api/v1/me')).status).to.equal(401);
      expect(await w.db.knex('account_identities').count({ n: '*' }).first()).to.deep.equal({ n: '0' });
      expect((await w.db.knex('accounts').select('id')).map((r) => r.id)).to.deep.equal([userId]);
    });

    it('makes a new account without the address when the address is unverified and free (nobody proved it)', async () => {
      w.idp.user = { sub: 'u-unverified', email: 'someone@example.test', email_verified: false, name: 'Some One' };
      const agent = request.agent(w.app);
      await signInWith('google', agent);
      const me = (await agent.get('/api/v1/me')).body;
      expect(me.user).to.include({ email: null, displayName: 'Some One' });
      expect(me.emailConfirmed).to.equal(false);
      // The address stays free for its owner.
      expect((await register(request(w.app), 'someone@example.test')).status).to.equal(200);
      expect(await w.db.knex('accounts').where({ emailNormalized: 'someone@example.test' }).count({ n: '*' }).first()).to.deep.equal({ n: '1' });
    });

    it('makes one account for two concurrent first sign-ins of the same identity', async () => {
      const a = request.agent(w.app);
      const b = request.agent(w.app);
      const [ca, cb] = await Promise.all([throughGoogle(a), throughGoogle(b)]);
      const [da, db] = await Promise.all([toExternalCallback(a, ca), toExternalCallback(b, cb)]);
      expect([da.status, db.status]).to.deep.equal([302, 302]);
      const [ma, mb] = await Promise.all([a.get('/api/v1/me'), b.get('/api/v1/me')]);
      expect(ma.body.user.id).to.equal(mb.body.user.id);
      expect(await w.db.knex('accounts').count({ n: '*' }).first()).to.deep.equal({ n: '1' });
    });

    it('names a new account from the provider: given + family, else full name, else the address local part', async () => {
      w.idp.user = { sub: 'n1', email: 'first.last@example.test', email_verified: true };
      const agent = request.agent(w.app);
      await signInWith('google', agent);
      expect((await agent.get('/api/v1/me')).body.user.displayName).to.equal('first.last');
    });
  });

  describe('failures land on /login (browser) and never answer JSON', () => {
    it('a callback without the state cookie (another browser, or forged) lands on /login and sets no external cookie', async () => {
      const agent = request.agent(w.app);
      const start = await agent.get('/api/v1/auth/challenge/google');
      const atIdp = await fetch(start.headers.location!, { redirect: 'manual' });
      const back = new URL(atIdp.headers.get('location')!);
      const stranger = request.agent(w.app);
      const res = await stranger.get(`${back.pathname}${back.search}`);
      expect(res.status).to.equal(302);
      expect(res.headers.location).to.equal('/login');
      expect(cookieNamed(res, 'service_external')).to.equal(undefined);
      expect(w.idp.counts.googleToken).to.equal(0);
    });

    it('a callback whose state differs from the cookie lands on /login without calling the token endpoint', async () => {
      const agent = request.agent(w.app);
      const start = await agent.get('/api/v1/auth/challenge/google');
      const atIdp = await fetch(start.headers.location!, { redirect: 'manual' });
      const back = new URL(atIdp.headers.get('location')!);
      back.searchParams.set('state', 'x'.repeat(43));
      const res = await agent.get(`${back.pathname}${back.search}`);
      expect(res.headers.location).to.equal('/login');
      expect(w.idp.counts.googleToken).to.equal(0);
      const apple = await throughApple(request.agent(w.app), '', (fields) => {
        fields.state = 'y'.repeat(43);
      });
      expect(apple.headers.location).to.equal('/login');
      expect(w.idp.counts.appleToken).to.equal(0);
    });

    it('a replayed callback (state cookie already spent) lands on /login', async () => {
      const agent = request.agent(w.app);
      const start = await agent.get('/api/v1/auth/challenge/google');
      const atIdp = await fetch(start.headers.location!, { redirect: 'manual' });
      const back = new URL(atIdp.headers.get('location')!);
      const cookie = setCookies(start)[0]!.split(';')[0]!;
      const first = await request(w.app).get(`${back.pathname}${back.search}`).set('Cookie', cookie);
      expect(first.headers.location).to.equal('/api/v1/auth/external-callback');
      // The same cookie again (a copy kept by an attacker): the provider refuses the used code.
      const again = await request(w.app).get(`${back.pathname}${back.search}`).set('Cookie', cookie);
      expect(again.headers.location).to.equal('/login');
    });

    it('a provider error (the person cancelled) lands on /login', async () => {
      const agent = request.agent(w.app);
      const start = await agent.get('/api/v1/auth/challenge/google');
      const state = new URL(start.headers.location!).searchParams.get('state');
      const res = await agent.get(`/api/v1/auth/callback/google?error=access_denied&state=${state}`);
      expect(res.headers.location).to.equal('/login');
      const apple = await throughApple(request.agent(w.app), '', (fields) => {
        delete fields.code;
        fields.error = 'user_cancelled_authorize';
      });
      expect(apple.status).to.equal(302);
      expect(apple.headers.location).to.equal('/login');
    });

    it('an Apple id_token for another audience, or with a wrong nonce, lands on /login', async () => {
      w.idp.appleIdTokenClaims = { aud: 'someone.else' };
      expect((await throughApple(request.agent(w.app))).headers.location).to.equal('/login');
      w.idp.appleIdTokenClaims = { nonce: 'not-the-nonce' };
      expect((await throughApple(request.agent(w.app))).headers.location).to.equal('/login');
      w.idp.appleIdTokenClaims = { iss: 'https://evil.example' };
      expect((await throughApple(request.agent(w.app))).headers.location).to.equal('/login');
      w.idp.appleIdTokenClaims = {};
      expect((await throughApple(request.agent(w.app))).headers.location).to.equal('/api/v1/auth/external-callback');
    });

    it('a state cookie older than ten minutes lands on /login', async () => {
      const agent = request.agent(w.app);
      const start = await agent.get('/api/v1/auth/challenge/google');
      const atIdp = await fetch(start.headers.location!, { redirect: 'manual' });
      const back = new URL(atIdp.headers.get('location')!);
      w.clock.advance(601_000);
      expect((await agent.get(`${back.pathname}${back.search}`)).headers.location).to.equal('/login');
    });

    it('external-callback without the external cookie, with a forged one, or after five minutes lands on /login without a session', async () => {
      const none = await request(w.app).get('/api/v1/auth/external-callback?returnUrl=%2Fplan');
      expect(none.status).to.equal(302);
      expect(none.headers.location).to.equal('/login');
      expect(cookieNamed(none, 'service_session')).to.equal(undefined);

      const forged = await request(w.app).get('/api/v1/auth/external-callback').set('Cookie', 'service_external=eyJhbGciOiJIUzI1NiJ9.eyJ2Ijp7fX0.AAAA');
      expect(forged.headers.location).to.equal('/login');

      const agent = request.agent(w.app);
      const callback = await throughGoogle(agent, '?returnUrl=%2Fplan');
      w.clock.advance(301_000);
      const late = await toExternalCallback(agent, callback);
      expect(late.headers.location).to.equal('/login');
      expect((await agent.get('/api/v1/me')).status).to.equal(401);
    });

    it('a copied external cookie works once: replayed from another browser it lands on /login without a session', async () => {
      const agent = request.agent(w.app);
      const callback = await throughGoogle(agent, '?returnUrl=%2Fplan');
      const copy = cookieNamed(callback, 'service_external')!.split(';')[0]!;
      const done = await toExternalCallback(agent, callback);
      expect(done.headers.location).to.equal('/plan');
      // Spent on the server, with the cookie's own expiry (five minutes after it was minted).
      const spent = await w.db.knex('spent_external_cookies').select('jti', 'expiresAt');
      expect(spent).to.have.length(1);
      expect(spent[0].jti).to.match(/^[A-Za-z0-9_-]{22}$/);
      expect(spent[0].expiresAt.toISOString()).to.equal('2026-11-22T09:05:00.000Z');

      const replay = await request(w.app).get(callback.headers.location!).set('Cookie', copy);
      expect(replay.status).to.equal(302);
      expect(replay.headers.location).to.equal('/login');
      expect(cookieNamed(replay, 'service_session')).to.equal(undefined);
      expect(await w.db.knex('account_sessions').count({ n: '*' }).first()).to.deep.equal({ n: '1' });
    });

    it('of parallel replays of one external cookie exactly one signs in; the others land on /login', async () => {
      const agent = request.agent(w.app);
      const callback = await throughGoogle(agent, '?returnUrl=%2Fplan');
      const copy = cookieNamed(callback, 'service_external')!.split(';')[0]!;
      const answers = await Promise.all(Array.from({ length: 6 }, () => request(w.app).get(callback.headers.location!).set('Cookie', copy)));
      expect(answers.map((a) => a.headers.location).sort()).to.deep.equal(['/login', '/login', '/login', '/login', '/login', '/plan']);
      expect(answers.filter((a) => cookieNamed(a, 'service_session') !== undefined)).to.have.length(1);
      expect(await w.db.knex('account_sessions').count({ n: '*' }).first()).to.deep.equal({ n: '1' });
      expect(await w.db.knex('accounts').count({ n: '*' }).first()).to.deep.equal({ n: '1' });
    });

    it('an external cookie without an id (not minted single-use) lands on /login', async () => {
      const key = new Uint8Array(hkdfSync('sha256', w.config.sessionSecret, 'svc-accounts', 'cookie:service_external', 32));
      const now = Math.floor(w.clock.now().getTime() / 1000);
      const identity = { provider: 'google', subject: 'user-1', email: 'ada@example.test', emailVerified: true, displayName: 'Ada Lovelace' };
      const sign = (jti?: string) => {
        const jwt = new SignJWT({ v: { identity, flow: { kind: 'browser', returnUrl: '/plan' } } })
          .setProtectedHeader({ alg: 'HS256' })
          .setAudience('service_external')
          .setIssuedAt(now)
          .setExpirationTime(now + 300);
        return (jti ? jwt.setJti(jti) : jwt).sign(key);
      };
      const withoutId = await request(w.app)
        .get('/api/v1/auth/external-callback')
        .set('Cookie', `service_external=${await sign()}`);
      expect(withoutId.headers.location).to.equal('/login');
      expect(cookieNamed(withoutId, 'service_session')).to.equal(undefined);
      // The same cookie with an id signs in: only the missing id made the difference.
      const withId = await request(w.app)
        .get('/api/v1/auth/external-callback')
        .set('Cookie', `service_external=${await sign('a-unique-id')}`);
      expect(withId.headers.location).to.equal('/plan');
    });

    it('signs a returning person in with three queries: spending the external cookie, the linked account, the new session (a browser without a session has no old id to drop)', async () => {
      await signInWith('google', request.agent(w.app));
      const agent = request.agent(w.app);
      const callback = await throughGoogle(agent, '?returnUrl=%2Fplan');
      const done = await toExternalCallback(agent, callback);
      expect(done.headers.location).to.equal('/plan');
      expect(dbQueries(done)).to.equal(3);
    });

    it('external-callback lands on /login for an unsafe query returnUrl when the challenge named none', async () => {
      const agent = request.agent(w.app);
      const callback = await throughGoogle(agent);
      const res = await agent.get('/api/v1/auth/external-callback?returnUrl=%2F%2Fevil.example');
      expect(res.status).to.equal(302);
      expect(res.headers.location).to.equal('/login');
      expect(callback.status).to.equal(302);
    });

    it('the Google callback answers 404 unknown_login_provider when Google is not configured', async () => {
      const app = w.variant({ google: undefined });
      const res = await request(app).get('/api/v1/auth/callback/google?code=x&state=y');
      expect(res.status).to.equal(404);
      expect(res.body.code).to.equal('unknown_login_provider');
    });
  });

  describe('cookies and the document', () => {
    it('makes the Apple state cookie SameSite=None; Secure when cookies are secure (Apple posts back cross-site)', async () => {
      const app = w.variant({ cookieSecure: true });
      const res = await request(app).get('/api/v1/auth/challenge/apple');
      const attrs = cookieNamed(res, 'service_oauth_apple')!
        .split(';')
        .map((a) => a.trim());
      expect(attrs).to.include.members(['SameSite=None', 'Secure', 'HttpOnly', 'Path=/api/v1/auth/callback/apple']);
      const google = await request(app).get('/api/v1/auth/challenge/google');
      expect(
        cookieNamed(google, 'service_oauth_google')!
          .split(';')
          .map((a) => a.trim()),
      ).to.include.members(['SameSite=Lax', 'Secure']);
    });

    it('documents every social operation, the 302s with a Location header and the codes', () => {
      const doc = buildOpenApiDocument({ title: 't', version: '1' }, w.accounts.router.operations) as {
        paths: Record<
          string,
          Record<
            string,
            { responses: Record<string, { description: string; headers?: Record<string, unknown> }>; requestBody?: { content: Record<string, unknown> } }
          >
        >;
      };
      const challenge = doc.paths['/api/v1/auth/challenge/{provider}']!.get!;
      expect(challenge.responses['302']!.headers).to.have.property('Location');
      expect(challenge.responses['400']!.description).to.include('app_signin_incomplete');
      expect(challenge.responses['404']!.description).to.include('unknown_login_provider');
      expect(doc.paths['/api/v1/auth/external-callback']!.get!.responses['302']!.headers).to.have.property('Location');
      expect(doc.paths['/api/v1/auth/exchange']!.post!.responses['401']!.description).to.include('signin_code_spent');
      const native = doc.paths['/api/v1/auth/idp/native']!.post!;
      for (const c of ['idp_signin_rejected', 'account_not_created']) expect(native.responses['401']!.description).to.include(c);
      expect(native.responses['404']!.description).to.include('idp_signin_unavailable');
      expect(Object.keys(doc.paths['/api/v1/auth/callback/apple']!.post!.requestBody!.content)).to.deep.equal(['application/x-www-form-urlencoded']);
      expect(doc.paths['/api/v1/auth/providers']!.get!.responses['200']).to.be.an('object');
    });

    it('counts the social routes under the shared /api/v1/auth rate limit', async () => {
      const app = w.variant({ authRateLimit: 2 }, TEST_TUNING);
      await request(app).get('/api/v1/auth/providers').expect(200);
      await request(app).get('/api/v1/auth/challenge/google').expect(302);
      const limited = await request(app).get('/api/v1/auth/external-callback');
      expect(limited.status).to.equal(429);
      expect(limited.headers['retry-after']).to.match(/^\d+$/);
    });
  });
});
