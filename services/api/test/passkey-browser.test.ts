/**
 * Passkeys in a real browser, the way a web client uses the API: Chromium (playwright-core, the
 * system's chromium as in browser.test.ts) with a virtual authenticator (DevTools protocol
 * `WebAuthn.enable` + `WebAuthn.addVirtualAuthenticator`, resident keys and user verification)
 * opens a small page served by this test on the service's origin; the page signs up, registers a
 * passkey, signs out and signs in with it through fetch and `navigator.credentials`. A second
 * instance on the same database checks that challenges are single use everywhere.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@svc/http-kit';
import { expect } from 'chai';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import request from 'supertest';
import { loadConfig } from '../src/config.js';
import { buildService, type Service } from '../src/service.js';
import { ensureChromium, FLAGS } from './chromium.js';
import { type LiveServer, startLiveServer } from './live.js';

const SECRET = 'passkey-browser-test-secret-0123456789abcdef';

/** The web client: same-origin fetch and the WebAuthn ceremonies, with JSON in and out as the API speaks it. */
const CLIENT_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>passkey client</title></head><body><p>passkey client</p>
<script>
const b64u = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
const fromB64u = (s) => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (s.length % 4)) % 4)), (c) => c.charCodeAt(0));
async function api(method, path, body) {
  const res = await fetch(path, { method, credentials: 'same-origin', headers: body === undefined ? {} : { 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
window.client = {
  api,
  async register(name) {
    const options = (await api('POST', '/api/v1/me/passkeys/options', {})).body;
    const publicKey = { ...options, challenge: fromB64u(options.challenge), user: { ...options.user, id: fromB64u(options.user.id) },
      excludeCredentials: (options.excludeCredentials || []).map((c) => ({ ...c, id: fromB64u(c.id) })) };
    const cred = await navigator.credentials.create({ publicKey });
    const response = { id: cred.id, rawId: b64u(cred.rawId), type: cred.type, authenticatorAttachment: cred.authenticatorAttachment,
      clientExtensionResults: cred.getClientExtensionResults(),
      response: { clientDataJSON: b64u(cred.response.clientDataJSON), attestationObject: b64u(cred.response.attestationObject), transports: cred.response.getTransports() } };
    return api('POST', '/api/v1/me/passkeys', { name, response });
  },
  async assertion() {
    const options = (await api('POST', '/api/v1/auth/passkey/options', {})).body;
    const publicKey = { ...options, challenge: fromB64u(options.challenge), allowCredentials: (options.allowCredentials || []).map((c) => ({ ...c, id: fromB64u(c.id) })) };
    const cred = await navigator.credentials.get({ publicKey });
    return { id: cred.id, rawId: b64u(cred.rawId), type: cred.type, clientExtensionResults: cred.getClientExtensionResults(),
      response: { clientDataJSON: b64u(cred.response.clientDataJSON), authenticatorData: b64u(cred.response.authenticatorData),
        signature: b64u(cred.response.signature), userHandle: cred.response.userHandle ? b64u(cred.response.userHandle) : undefined } };
  },
  async signIn(assertion) {
    return api('POST', '/api/v1/auth/passkey', { response: assertion || (await this.assertion()) });
  },
};
</script></body></html>`;

describe('passkeys in a real browser (virtual authenticator)', function () {
  this.timeout(180_000);
  let live: LiveServer;
  let other: Service;
  let context: BrowserContext;
  let profile: string;
  let page: Page;

  before(async function () {
    const chromiumPath = ensureChromium();
    if ('reason' in chromiumPath) {
      if (process.env.CI) throw new Error(`the browser tests need chromium: ${chromiumPath.reason}`);
      console.log(`      (skipped: ${chromiumPath.reason}; install Debian's chromium to run them)`);
      this.skip();
    }
    // localhost, not 127.0.0.1: an IP address cannot be an RP ID.
    live = await startLiveServer({ SESSION_SECRET: SECRET, AUTH_RATE_LIMIT: '1000000' }, { hostName: 'localhost' });
    const config = loadConfig({
      DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'svc-live-2-')),
      SESSION_SECRET: SECRET,
      PUBLIC_BASE_URL: live.url,
      PASSWORD_BREACH_API: 'off',
      SMTP_URL: live.smtp.url,
    });
    other = await buildService({ config, knex: live.db.knex, logger: createLogger({ level: 'silent' }), startMailer: false });
    profile = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-chromium-'));
    context = await chromium.launchPersistentContext(profile, { executablePath: chromiumPath.path, headless: true, args: FLAGS });
    page = await context.newPage();
    // The client page is the test's own, served on the service's origin (the service never sees this request).
    await page.route(`${live.url}/passkey-client.html`, (route) => route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: CLIENT_PAGE }));
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
    await page.goto(`${live.url}/passkey-client.html`);
  });

  after(async () => {
    await context?.close();
    if (profile) fs.rmSync(profile, { recursive: true, force: true });
    await other?.close();
    await live?.close();
  });

  type Answer = { status: number; body: Record<string, unknown> & { code?: string } };
  const call = (method: string, p: string, body?: unknown) =>
    page.evaluate(([m, u, b]) => (globalThis as unknown as { client: { api: (...a: unknown[]) => Promise<Answer> } }).client.api(m, u, b), [
      method,
      p,
      body,
    ] as const);

  it('registers a passkey, signs out, and signs in with it (a discoverable credential; the session says passkey)', async () => {
    const signUp = await call('POST', '/api/v1/auth/register', { email: 'pia@example.test', password: 'correct horse battery', displayName: 'Pia' });
    expect(signUp.status).to.equal(200);
    const added = await page.evaluate(() => (globalThis as unknown as { client: { register(n: string): Promise<Answer> } }).client.register('Laptop'));
    expect(added.status, JSON.stringify(added.body)).to.equal(201);
    expect(added.body).to.include({ name: 'Laptop', lastUsedAt: null });
    const list = await call('GET', '/api/v1/me/passkeys');
    expect((list.body.items as unknown[]).length).to.equal(1);
    expect((await call('GET', '/api/v1/me/logins')).body).to.include({ passkeys: 1, totp: false });
    const notice = await live.smtp.waitFor((m) => m.subject === 'A passkey was added to your account');
    expect(notice.to).to.deep.equal(['pia@example.test']);

    expect((await call('POST', '/api/v1/auth/logout', {})).status).to.equal(204);
    expect((await call('GET', '/api/v1/me')).status).to.equal(401);

    const signedIn = await page.evaluate(() => (globalThis as unknown as { client: { signIn(): Promise<Answer> } }).client.signIn());
    expect(signedIn.status, JSON.stringify(signedIn.body)).to.equal(200);
    expect((signedIn.body.user as { email: string }).email).to.equal('pia@example.test');
    const sessions = await call('GET', '/api/v1/me/sessions');
    expect((sessions.body.items as { current: boolean; method: string }[]).find((s) => s.current)?.method).to.equal('passkey');
    expect(((await call('GET', '/api/v1/me/passkeys')).body.items as { lastUsedAt: string | null }[])[0]!.lastUsedAt).to.not.equal(null);
  });

  it('a challenge is used once on every instance: an assertion replayed on a second instance is refused; a fresh one signs in there', async () => {
    const assertion = await page.evaluate(() => (globalThis as unknown as { client: { assertion(): Promise<unknown> } }).client.assertion());
    const first = await request(live.service.app).post('/api/v1/auth/passkey').send({ response: assertion });
    expect(first.status).to.equal(200);
    const replay = await request(other.app).post('/api/v1/auth/passkey').send({ response: assertion });
    expect(replay.status).to.equal(401);
    expect(replay.body.code).to.equal('invalid_credentials');
    const fresh = await page.evaluate(() => (globalThis as unknown as { client: { assertion(): Promise<unknown> } }).client.assertion());
    const there = await request(other.app).post('/api/v1/auth/passkey').send({ response: fresh });
    expect(there.status, JSON.stringify(there.body)).to.equal(200);
    // An assertion whose signature was tampered with does not verify.
    const bad = (await page.evaluate(() => (globalThis as unknown as { client: { assertion(): Promise<unknown> } }).client.assertion())) as {
      response: { signature: string };
    };
    bad.response.signature = `${bad.response.signature.slice(0, -4)}AAAA`;
    const refused = await request(other.app).post('/api/v1/auth/passkey').send({ response: bad });
    expect(refused.status).to.equal(401);
  });

  it('a locked account still signs in with its passkey', async () => {
    for (let i = 0; i < 6; i++) await request(live.service.app).post('/api/v1/auth/login').send({ email: 'pia@example.test', password: 'wrong password!' });
    const locked = await request(live.service.app).post('/api/v1/auth/login').send({ email: 'pia@example.test', password: 'correct horse battery' });
    expect(locked.status).to.equal(423);
    const signedIn = await page.evaluate(() => (globalThis as unknown as { client: { signIn(): Promise<Answer> } }).client.signIn());
    expect(signedIn.status).to.equal(200);
  });

  it('removes the passkey (409 last_sign_in_method while it is the only way in; a notice), after which it signs in no more', async () => {
    const list = await call('GET', '/api/v1/me/passkeys');
    const id = (list.body.items as { id: string }[])[0]!.id;
    // Without a password (an account made by social sign-in, say) the passkey is the last way in.
    const { passwordHash } = await live.db.knex('accounts').where({ email: 'pia@example.test' }).first();
    await live.db.knex('accounts').where({ email: 'pia@example.test' }).update({ passwordHash: null });
    const last = await call('DELETE', `/api/v1/me/passkeys/${id}`);
    expect(last.status).to.equal(409);
    expect(last.body.code).to.equal('last_sign_in_method');
    await live.db.knex('accounts').where({ email: 'pia@example.test' }).update({ passwordHash });
    expect((await call('DELETE', `/api/v1/me/passkeys/${id}`)).status).to.equal(204);
    await live.smtp.waitFor((m) => m.subject === 'A passkey was removed from your account');
    expect((await call('GET', '/api/v1/me/logins')).body.passkeys).to.equal(0);
    const refused = await page.evaluate(() => (globalThis as unknown as { client: { signIn(): Promise<Answer> } }).client.signIn());
    expect(refused.status).to.equal(401);
    expect(refused.body.code).to.equal('invalid_credentials');
  });
});
