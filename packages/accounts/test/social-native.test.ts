import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { generateKeyPair } from 'jose';
import request from 'supertest';
import { dbQueries, sessionCookie, signedUp } from './helpers.js';
import { APPLE_APP_AUDIENCES } from './idp.js';
import { createSocialWorld, type SocialWorld, signInWith, TEST_TUNING } from './social-world.js';

const sha256hex = (s: string) => createHash('sha256').update(s).digest('hex');

describe('social sign-in: POST /auth/idp/native (Sign in with Apple from the app)', () => {
  let w: SocialWorld;
  before(async () => {
    w = await createSocialWorld();
  });
  after(async () => w.close());
  beforeEach(async () => w.reset());

  const native = (body: Record<string, unknown>, app = w.app) => request(app).post('/api/v1/auth/idp/native').send(body);

  async function expectRejected(res: request.Response, code = 'idp_signin_rejected'): Promise<void> {
    expect(res.status, JSON.stringify(res.body)).to.equal(401);
    expect(res.body.code).to.equal(code);
    expect(sessionCookie(res)).to.equal(undefined);
  }

  describe('configuration', () => {
    it('answers 404 idp_signin_unavailable without APPLE_NATIVE_AUDIENCES, also when Apple web sign-in is configured', async () => {
      const token = await w.idp.appleToken();
      for (const app of [w.variant({ apple: { ...w.config.apple!, nativeAudiences: [] } }), w.variant({ apple: undefined })]) {
        const res = await native({ identityToken: token }, app);
        expect(res.status).to.equal(404);
        expect(res.body.code).to.equal('idp_signin_unavailable');
      }
    });

    it('works with native sign-in alone (no Apple web configuration)', async () => {
      const app = w.variant({ google: undefined, apple: { ...w.config.apple!, web: undefined } });
      const res = await native({ identityToken: await w.idp.appleToken() }, app);
      expect(res.status).to.equal(200);
    });
  });

  describe('signing in', () => {
    it('makes a new account named from givenName/familyName, answers 200 MeResponse and sets the session cookie', async () => {
      const res = await native({ identityToken: await w.idp.appleToken(), givenName: 'Ada', familyName: 'Lovelace', rawNonce: null, email: null });
      expect(res.status).to.equal(200);
      expect(res.headers['cache-control']).to.equal('no-store');
      expect(res.body.user).to.include({ email: 'ada@example.test', displayName: 'Ada Lovelace' });
      expect(res.body.emailConfirmed).to.equal(true);
      expect(res.body.hasPassword).to.equal(false);
      const me = await request(w.app).get('/api/v1/me').set('Cookie', sessionCookie(res)!.split(';')[0]!);
      expect(me.body.user.id).to.equal(res.body.user.id);
    });

    it('falls back to the local part of the address, then to "Apple user", for the display name', async () => {
      w.idp.user = { sub: 'a-1', email: 'x7k2p9@privaterelay.example', email_verified: true };
      expect((await native({ identityToken: await w.idp.appleToken() })).body.user.displayName).to.equal('x7k2p9');
      w.idp.user = { sub: 'a-2' };
      const res = await native({ identityToken: await w.idp.appleToken() });
      expect(res.body.user).to.include({ displayName: 'Apple user', email: null });
    });

    it('signs a returning person in with four queries: the token spent, the linked account, the new session, the memberships', async () => {
      await native({ identityToken: await w.idp.appleToken() }).expect(200);
      const again = await native({ identityToken: await w.idp.appleToken() });
      expect(again.status).to.equal(200);
      expect(dbQueries(again)).to.equal(4);
      expect(String(again.headers['server-timing'])).to.match(/verify-id-token;dur=/);
    });

    it('accepts any of the configured audiences', async () => {
      const res = await native({ identityToken: await w.idp.appleToken({ aud: APPLE_APP_AUDIENCES[1] }) });
      expect(res.status).to.equal(200);
    });

    it('signs the same subject in to the same account, whatever names come later, and the web Apple flow shares it', async () => {
      w.idp.user = { sub: 'apple-shared', email: 'grace@example.test', email_verified: true, given_name: 'Grace', family_name: 'Hopper' };
      const first = await native({ identityToken: await w.idp.appleToken(), givenName: 'Grace', familyName: 'Hopper' });
      const second = await native({ identityToken: await w.idp.appleToken(), givenName: 'Other', familyName: 'Name' });
      expect(second.body.user.id).to.equal(first.body.user.id);
      expect(second.body.user.displayName).to.equal('Grace Hopper');
      const browser = request.agent(w.app);
      await signInWith('apple', browser);
      expect((await browser.get('/api/v1/me')).body.user.id).to.equal(first.body.user.id);
    });

    it('links by a verified address to the existing account', async () => {
      const { userId } = await signedUp(w, 'ada@example.test');
      await w.db.knex('accounts').where({ id: userId }).update({ emailConfirmed: true });
      const res = await native({ identityToken: await w.idp.appleToken() });
      expect(res.status).to.equal(200);
      expect(res.body.user.id).to.equal(userId);
      expect(res.body.hasPassword).to.equal(true);
    });

    it('does NOT link by an unverified address: 401 account_not_created, nothing linked or created', async () => {
      const { userId } = await signedUp(w, 'ada@example.test');
      await expectRejected(await native({ identityToken: await w.idp.appleToken({ email_verified: 'false' }) }), 'account_not_created');
      await expectRejected(await native({ identityToken: await w.idp.appleToken({ email_verified: undefined }) }), 'account_not_created');
      expect(await w.db.knex('account_identities').count({ n: '*' }).first()).to.deep.equal({ n: '0' });
      expect((await w.db.knex('accounts').select('id')).map((r) => r.id)).to.deep.equal([userId]);
    });

    it('never links by the address in the body (only the token speaks for Apple)', async () => {
      const { userId } = await signedUp(w, 'ada@example.test');
      await w.db.knex('accounts').where({ id: userId }).update({ emailConfirmed: true });
      w.idp.user = { sub: 'no-mail' };
      const res = await native({ identityToken: await w.idp.appleToken(), email: 'ada@example.test' });
      expect(res.status).to.equal(200);
      expect(res.body.user.id).to.not.equal(userId);
      expect(res.body.user).to.include({ email: null, displayName: 'ada' });
    });

    it('answers 400 for an unreadable body', async () => {
      const res = await native({ rawNonce: 'x' });
      expect(res.status).to.equal(400);
      expect(res.body.code).to.equal('validation_failed');
      const nulled = await native({ identityToken: null });
      expect(nulled.status).to.equal(400);
    });
  });

  describe('tokens Apple did not vouch for: 401 idp_signin_rejected', () => {
    it('a wrong issuer', async () => {
      await expectRejected(await native({ identityToken: await w.idp.appleToken({ iss: 'https://appleid.apple.com.evil.example' }) }));
    });

    it('a wrong audience (the web client id, another app)', async () => {
      await expectRejected(await native({ identityToken: await w.idp.appleToken({ aud: 'test.meals.web' }) }));
      await expectRejected(await native({ identityToken: await w.idp.appleToken({ aud: 'com.evil.app' }) }));
    });

    it('a wrong key: signed by another RSA key under a published kid, and under a kid nobody published', async () => {
      const stranger = await generateKeyPair('RS256');
      await expectRejected(await native({ identityToken: await w.idp.appleToken({}, { key: stranger }) }));
      await expectRejected(await native({ identityToken: await w.idp.appleToken({}, { key: stranger, kid: 'nobody-knows-me' }) }));
    });

    it('a wrong alg: HS256 keyed with the public key, and alg none', async () => {
      const pem = await w.idp.publicKeyPem();
      await expectRejected(await native({ identityToken: await w.idp.appleToken({}, { alg: 'HS256', hmacSecret: pem }) }));
      await expectRejected(await native({ identityToken: await w.idp.appleToken({}, { alg: 'none' }) }));
    });

    it('an expired token (the clock moved past exp), and garbage', async () => {
      const token = await w.idp.appleToken({}, { lifetimeSeconds: 600 });
      w.clock.advance(601_000);
      await expectRejected(await native({ identityToken: token }));
      await expectRejected(await native({ identityToken: 'not.a.jwt' }));
      await expectRejected(await native({ identityToken: '' }));
    });

    it('a token without a subject', async () => {
      await expectRejected(await native({ identityToken: await w.idp.appleToken({ sub: undefined }) }));
    });
  });

  describe('nonce', () => {
    it('needs rawNonce whose SHA-256 hex is the token nonce', async () => {
      const rawNonce = 'raw-nonce-0123456789';
      const token = await w.idp.appleToken({ nonce: sha256hex(rawNonce) });
      await expectRejected(await native({ identityToken: token }));
      await expectRejected(await native({ identityToken: token, rawNonce: null }));
      await expectRejected(await native({ identityToken: token, rawNonce: 'another-nonce' }));
      await expectRejected(await native({ identityToken: token, rawNonce: sha256hex(rawNonce) }));
      expect((await native({ identityToken: token, rawNonce })).status).to.equal(200);
    });

    it('compares the nonce exactly: an upper- or mixed-case hex nonce answers 401 idp_signin_rejected', async () => {
      const rawNonce = 'raw-nonce-0123456789';
      const hex = sha256hex(rawNonce);
      expect(hex).to.match(/[a-f]/);
      const mixed = [...hex].map((c, i) => (i % 2 ? c.toUpperCase() : c)).join('');
      for (const nonce of [hex.toUpperCase(), mixed]) await expectRejected(await native({ identityToken: await w.idp.appleToken({ nonce }), rawNonce }));
      expect((await native({ identityToken: await w.idp.appleToken({ nonce: hex }), rawNonce })).status).to.equal(200);
    });

    it('signs in once per token + rawNonce: a replay, on this instance or another, answers 401 idp_signin_rejected; of ten parallel, one signs in', async () => {
      const rawNonce = 'raw-nonce-replayed';
      const token = await w.idp.appleToken({ nonce: sha256hex(rawNonce) });
      expect((await native({ identityToken: token, rawNonce })).status).to.equal(200);
      await expectRejected(await native({ identityToken: token, rawNonce }));
      await expectRejected(await native({ identityToken: token, rawNonce }, w.variant()));
      // Another token with the same nonce is the same authorization: refused too.
      await expectRejected(await native({ identityToken: await w.idp.appleToken({ nonce: sha256hex(rawNonce), given_name: 'x' }), rawNonce }));
      // Without a nonce the token itself is remembered.
      const plain = await w.idp.appleToken();
      expect((await native({ identityToken: plain })).status).to.equal(200);
      await expectRejected(await native({ identityToken: plain }));

      const burst = await w.idp.appleToken({ nonce: sha256hex('burst') });
      const answers = await Promise.all(Array.from({ length: 10 }, () => native({ identityToken: burst, rawNonce: 'burst' })));
      expect(answers.filter((a) => a.status === 200)).to.have.length(1);
      expect(answers.filter((a) => a.status === 401 && a.body.code === 'idp_signin_rejected')).to.have.length(9);
      // Remembered until the token expires (plus a day), then housekeeping forgets it.
      expect(await w.db.knex('spent_identity_tokens').count({ n: '*' }).first()).to.deep.equal({ n: '3' });
    });

    it('ignores a rawNonce when the token carries no nonce', async () => {
      expect((await native({ identityToken: await w.idp.appleToken(), rawNonce: 'whatever' })).status).to.equal(200);
    });
  });

  describe("Apple's keys", () => {
    it('are fetched once and cached across sign-ins', async () => {
      const app = w.variant();
      w.idp.counts.keys = 0;
      for (let i = 0; i < 3; i++) expect((await native({ identityToken: await w.idp.appleToken() }, app)).status).to.equal(200);
      expect(w.idp.counts.keys).to.equal(1);
    });

    it('are refetched when a token names an unknown key id (Apple rotated its keys)', async () => {
      const app = w.variant();
      w.idp.counts.keys = 0;
      expect((await native({ identityToken: await w.idp.appleToken() }, app)).status).to.equal(200);
      await w.idp.rotate();
      const res = await native({ identityToken: await w.idp.appleToken() }, app);
      expect(res.status).to.equal(200);
      expect(w.idp.counts.keys).to.equal(2);
    });

    it('are not refetched for unknown key ids within the cooldown (made-up kids cannot hammer Apple)', async () => {
      const app = w.variant({}, { ...TEST_TUNING, jwksCooldownMs: 60_000 });
      w.idp.counts.keys = 0;
      expect((await native({ identityToken: await w.idp.appleToken() }, app)).status).to.equal(200);
      const stranger = await generateKeyPair('RS256');
      for (let i = 0; i < 5; i++)
        await expectRejected(await native({ identityToken: await w.idp.appleToken({}, { key: stranger, kid: `made-up-${i}` }) }, app));
      expect(w.idp.counts.keys).to.equal(1);
    });

    it('unreachable, failing or not a key set: 503 service_unavailable (the token may be fine; try again)', async () => {
      for (const mode of ['error', 'drop'] as const) {
        w.idp.keysMode = mode;
        const res = await native({ identityToken: await w.idp.appleToken() }, w.variant());
        expect(res.status, mode).to.equal(503);
        expect(res.body.code).to.equal('service_unavailable');
        expect(res.headers['retry-after']).to.match(/^\d+$/);
      }
      w.idp.keysMode = 'ok';
      const closed = w.variant({ apple: { ...w.config.apple!, keysUrl: 'http://127.0.0.1:9/keys' } });
      expect((await native({ identityToken: await w.idp.appleToken() }, closed)).status).to.equal(503);
      const notJwks = w.variant({}, TEST_TUNING, {
        fetch: async () => new Response('{"nope":1}', { status: 200, headers: { 'content-type': 'application/json' } }),
      });
      expect((await native({ identityToken: await w.idp.appleToken() }, notJwks)).status).to.equal(503);
    });
  });
});
