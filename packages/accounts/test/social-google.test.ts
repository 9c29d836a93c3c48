import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import request from 'supertest';
import { GOOGLE_CLIENT, GOOGLE_ISSUER, type GoogleTokenMode } from './idp.js';
import { APP_URI, cookieNamed, createSocialWorld, pkce, type SocialWorld, TEST_TUNING, toExternalCallback } from './social-world.js';

const SOCIAL_SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src/social');

/** Property accesses of a member whose name starts with `_` (`x._y`, `x?._y`, `x['_y']`): private by JavaScript convention. */
function privateMemberAccesses(source: string): string[] {
  // Comments may name such members (to explain why they are not used); code may not.
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  return [...code.matchAll(/(?:\?\.|\.)\s*_[A-Za-z0-9_$]*|\[\s*['"`]_[A-Za-z0-9_$]*['"`]\s*\]/g)].map((m) => m[0]);
}

describe('Google sign-in through a public OpenID Connect client (openid-client)', () => {
  let w: SocialWorld;
  before(async () => {
    w = await createSocialWorld();
  });
  after(async () => w.close());
  beforeEach(async () => w.reset());

  /** Challenge → the IdP's authorize (302 back) → the callback URL on the service, not yet called. */
  async function toCallback(agent: request.Agent, query = ''): Promise<{ callbackPath: string; authorize: URL }> {
    const start = await agent.get(`/api/v1/auth/challenge/google${query}`);
    expect(start.status).to.equal(302);
    const authorize = new URL(start.headers.location!);
    const atIdp = await fetch(authorize, { redirect: 'manual' });
    expect(atIdp.status).to.equal(302);
    const back = new URL(atIdp.headers.get('location')!);
    return { callbackPath: `${back.pathname}${back.search}`, authorize };
  }

  /** The callback ends on `location`, sets no external cookie and leaves nothing in the database. */
  async function expectFailedCallback(res: request.Response, location: string, why: string): Promise<void> {
    expect(res.status, why).to.equal(302);
    expect(res.headers.location, why).to.equal(location);
    expect(res.headers['content-type'] ?? '', why).to.not.match(/json/);
    expect(cookieNamed(res, 'service_external'), why).to.equal(undefined);
    expect(await w.db.knex('accounts').count({ n: '*' }).first(), why).to.deep.equal({ n: '0' });
  }

  function failureReasons(): string[] {
    return w.logLines.filter((l) => l.msg === 'social sign-in failed').map((l) => String(l.reason));
  }

  describe('the round trip, as the contract describes it', () => {
    it('asks for a code with scope openid email profile, S256 PKCE and state; the token endpoint gets the verifier of that challenge, the same redirect_uri and the client secret in the form', async () => {
      const agent = request.agent(w.app);
      const { callbackPath, authorize } = await toCallback(agent);
      const q = authorize.searchParams;
      expect(q.get('response_type')).to.equal('code');
      expect(q.get('scope')).to.equal('openid email profile');
      expect(q.get('code_challenge_method')).to.equal('S256');
      expect(q.get('code_challenge')).to.match(/^[A-Za-z0-9_-]{43}$/);
      expect(q.get('state')).to.match(/^[A-Za-z0-9_-]{43}$/);
      expect(q.get('redirect_uri')).to.equal('https://meals.example.test/api/v1/auth/callback/google');

      const callback = await agent.get(callbackPath);
      expect(callback.headers.location).to.equal('/api/v1/auth/external-callback');
      const form = w.idp.lastGoogleTokenForm!;
      expect(form.get('grant_type')).to.equal('authorization_code');
      expect(form.get('redirect_uri')).to.equal(q.get('redirect_uri'));
      expect(createHash('sha256').update(form.get('code_verifier')!).digest('base64url')).to.equal(q.get('code_challenge'));
      expect(form.get('client_id')).to.equal(GOOGLE_CLIENT.id);
      expect(form.get('client_secret')).to.equal(GOOGLE_CLIENT.secret);
      // The IdP answers userinfo only to a Bearer header (a token in the URL is refused).
      expect(w.idp.counts.userinfo).to.equal(1);
      expect((await toExternalCallback(agent, callback)).headers.location).to.equal('/login');
      expect(await w.db.knex('account_identities').pluck('subject')).to.deep.equal(['user-1']);
    });

    it('of five parallel callbacks with one state cookie and one code, exactly one reaches external-callback; the others land on /login', async () => {
      const agent = request.agent(w.app);
      const start = await agent.get('/api/v1/auth/challenge/google');
      const stateCookie = cookieNamed(start, 'service_oauth_google')!.split(';')[0]!;
      const atIdp = await fetch(start.headers.location!, { redirect: 'manual' });
      const back = new URL(atIdp.headers.get('location')!);
      const answers = await Promise.all(Array.from({ length: 5 }, () => request(w.app).get(`${back.pathname}${back.search}`).set('Cookie', stateCookie)));
      const locations = answers.map((a) => a.headers.location);
      expect(locations.filter((l) => l === '/api/v1/auth/external-callback')).to.have.length(1);
      expect(locations.filter((l) => l === '/login')).to.have.length(4);
      expect(answers.filter((a) => cookieNamed(a, 'service_external') !== undefined)).to.have.length(1);
    });
  });

  describe("the token endpoint's failures land where every failure lands (never a 500)", () => {
    const modes: GoogleTokenMode[] = ['refuse', 'error-json', 'error-html', 'not-json', 'drop'];

    it('400 invalid_grant, 500 with JSON or HTML, a body that is not JSON, a dropped connection: the browser lands on /login', async () => {
      for (const mode of modes) {
        w.idp.googleTokenMode = mode;
        const agent = request.agent(w.app);
        const { callbackPath } = await toCallback(agent, '?returnUrl=%2Fplan');
        await expectFailedCallback(await agent.get(callbackPath), '/login', mode);
      }
      expect(w.idp.counts.googleToken).to.equal(modes.length);
      expect(w.idp.counts.userinfo).to.equal(0);
      const reasons = failureReasons();
      expect(reasons).to.have.length(modes.length);
      for (const reason of reasons) expect(reason).to.match(/^Google token or userinfo call failed: /);
      expect(reasons[0]).to.include('HTTP 400').and.include('invalid_grant');
      expect(reasons[1]).to.include('HTTP 500');
      expect(reasons[2]).to.include('HTTP 500');
      // Nothing secret reaches the log: not the client secret, not the PKCE verifier.
      const log = JSON.stringify(w.logLines);
      expect(log).to.not.include(GOOGLE_CLIENT.secret);
      expect(log).to.not.include(w.idp.lastGoogleTokenForm!.get('code_verifier')!);
    });

    it('a code the IdP does not know (400 from the real check) lands on /login', async () => {
      const agent = request.agent(w.app);
      const { callbackPath } = await toCallback(agent);
      const forged = new URL(callbackPath, 'https://x.invalid');
      forged.searchParams.set('code', 'not-a-code-the-idp-issued');
      await expectFailedCallback(await agent.get(`${forged.pathname}${forged.search}`), '/login', 'unknown code');
      expect(w.idp.lastRefusal).to.equal('unknown or used code');
    });

    it('in the app flow the same failures end on redirectUri?error=account and issue no app code', async () => {
      for (const mode of ['refuse', 'error-json'] as const) {
        w.idp.googleTokenMode = mode;
        const agent = request.agent(w.app);
        const { callbackPath } = await toCallback(agent, `?redirectUri=${encodeURIComponent(APP_URI)}&codeChallenge=${pkce().challenge}`);
        await expectFailedCallback(await agent.get(callbackPath), `${APP_URI}?error=account`, mode);
      }
      expect(await w.db.knex('app_signin_codes').count({ n: '*' }).first()).to.deep.equal({ n: '0' });
    });

    it('a token endpoint that never answers: the callback gives up after providerTimeoutMs and lands on /login', async () => {
      w.idp.googleTokenMode = 'hang';
      const app = w.variant({}, { ...TEST_TUNING, providerTimeoutMs: 100 });
      const agent = request.agent(app);
      const start = await agent.get('/api/v1/auth/challenge/google');
      const atIdp = await fetch(start.headers.location!, { redirect: 'manual' });
      const back = new URL(atIdp.headers.get('location')!);
      await expectFailedCallback(await agent.get(`${back.pathname}${back.search}`), '/login', 'hang');
      expect(failureReasons()[0]).to.match(/abort|timeout/i);
    });
  });

  describe('userinfo and the id_token', () => {
    it('userinfo failing (401, 500) or naming no subject lands on /login', async () => {
      for (const userinfo of [
        { status: 500, claims: {} },
        { status: 200, claims: { sub: '' } },
      ]) {
        w.idp.userinfo = userinfo;
        const agent = request.agent(w.app);
        const { callbackPath } = await toCallback(agent);
        await expectFailedCallback(await agent.get(callbackPath), '/login', JSON.stringify(userinfo));
      }
      // An access token the IdP does not know: its userinfo answers 401.
      w.idp.userinfo = { status: 200, claims: {} };
      const revoked = w.variant({}, TEST_TUNING, {
        fetch: async (url, init) => {
          const answer = await fetch(url, init);
          if (!String(url).endsWith('/google/token')) return answer;
          const body = (await answer.json()) as Record<string, unknown>;
          return Response.json({ ...body, access_token: 'revoked' }, { status: answer.status });
        },
      });
      const agent = request.agent(revoked);
      const start = await agent.get('/api/v1/auth/challenge/google');
      const back = new URL((await fetch(start.headers.location!, { redirect: 'manual' })).headers.get('location')!);
      await expectFailedCallback(await agent.get(`${back.pathname}${back.search}`), '/login', 'revoked');
      expect(w.idp.counts.userinfo).to.equal(3);
    });

    it('an id_token, as Google sends one, is checked on the service clock (iss, aud, exp) and userinfo must name its subject', async () => {
      // Far behind the wall clock: a check on the wall clock would call the token expired.
      w.clock.set('2020-03-01T12:00:00.000Z');
      w.idp.googleIdTokenClaims = {};
      const agent = request.agent(w.app);
      const ok = await agent.get((await toCallback(agent)).callbackPath);
      expect(ok.headers.location).to.equal('/api/v1/auth/external-callback');

      const now = Math.floor(w.clock.now().getTime() / 1000);
      const refused: [string, Record<string, unknown>, Record<string, unknown>][] = [
        ['another audience', { aud: 'someone-else.apps.test', azp: undefined }, {}],
        ['another issuer', { iss: 'https://evil.example' }, {}],
        ['expired by the service clock', { iat: now - 7200, exp: now - 3600 }, {}],
        ['userinfo about someone else', {}, { sub: 'user-2' }],
      ];
      for (const [why, claims, userinfo] of refused) {
        w.idp.googleIdTokenClaims = claims;
        w.idp.userinfo = { status: 200, claims: userinfo };
        const browser = request.agent(w.app);
        const res = await browser.get((await toCallback(browser)).callbackPath);
        expect(res.headers.location, why).to.equal('/login');
        expect(cookieNamed(res, 'service_external'), why).to.equal(undefined);
      }
      expect(GOOGLE_ISSUER).to.equal('https://accounts.google.com');
    });
  });

  describe('only public library API', () => {
    it('the detector finds the kinds of reach-in the old passport code had', () => {
      const old = [
        'harden((strategy as unknown as { _oauth2: OAuth2Client })._oauth2, o.timeoutMs);',
        'const execute = client._executeRequest.bind(client);',
        "client['_executeRequest'] = wrapped;",
        'x?._stateStore.store(req)',
      ].join('\n');
      expect(privateMemberAccesses(old)).to.deep.equal(['._oauth2', '._executeRequest', "['_executeRequest']", '?._stateStore']);
      // Parameters named with a leading underscore (unused by intent) are not member accesses.
      expect(privateMemberAccesses('(_req: Request, _meta: unknown) => done(_meta)')).to.deep.equal([]);
    });

    it('no file of src/social reaches a member whose name starts with `_` (a private part of a library that an upgrade may change)', () => {
      const files = fs.readdirSync(SOCIAL_SRC).filter((f) => f.endsWith('.ts'));
      expect(files).to.include('google.ts');
      const found = files.flatMap((f) => privateMemberAccesses(fs.readFileSync(path.join(SOCIAL_SRC, f), 'utf8')).map((m) => `${f}: ${m}`));
      expect(found).to.deep.equal([]);
    });

    it('src/social imports libraries only by their public entry points (no deep import into a package)', () => {
      const deep: string[] = [];
      for (const f of fs.readdirSync(SOCIAL_SRC).filter((f) => f.endsWith('.ts'))) {
        const source = fs.readFileSync(path.join(SOCIAL_SRC, f), 'utf8');
        for (const [, specifier] of source.matchAll(/\bfrom\s+'([^']+)'/g)) {
          if (specifier!.startsWith('.') || specifier!.startsWith('node:')) continue;
          const parts = specifier!.split('/');
          const depth = specifier!.startsWith('@') ? 2 : 1;
          if (parts.length > depth) deep.push(`${f}: ${specifier}`);
        }
      }
      expect(deep).to.deep.equal([]);
    });
  });
});
