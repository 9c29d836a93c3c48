import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { ApiRouter, createHttpApp, createLogger } from '@svc/http-kit';
import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { createPages } from '../src/pages/index.js';
import { createWorld, linkIn, login, mailsTo, memoryLogger, PASSWORD, PUBLIC_BASE_URL, signedUp, type World } from './helpers.js';

const BREACHED = 'password1234';

/** The request log of the app below. */
const requestLog = memoryLogger();

/** The app as the host builds it: the pages mounted before the JSON pipeline, the API behind. */
function appWithPages(w: World): Express {
  const open = new ApiRouter();
  open.router.use(w.accounts.router.pages);
  return createHttpApp({
    logger: requestLog.logger,
    allowedOrigins: [PUBLIC_BASE_URL],
    open: [open],
    routers: [w.accounts.router],
    authenticate: w.accounts.service.sessions.authenticate,
    authLimiter: w.accounts.router.authLimiter,
  });
}

/** A page opened as the mailed link opens it: on PUBLIC_BASE_URL's host. */
function open(app: Express, url: string): request.Test {
  return request(app).get(url).set('Host', new URL(PUBLIC_BASE_URL).host);
}

/** A form post from the page itself: urlencoded, from the service's own origin. */
function submit(app: Express, pathname: string, fields: Record<string, string>): request.Test {
  return request(app).post(pathname).set('Origin', PUBLIC_BASE_URL).type('form').send(fields);
}

function text(res: request.Response): string {
  return res.text.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
}

/** The value of a hidden field in a page. */
function hiddenValue(page: string, name: string): string | undefined {
  const m = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(page);
  return m?.[1]
    ?.replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');
}

describe('pages for the mailed links', () => {
  let w: World;
  let app: Express;
  let rangeApi: http.Server;
  before(async () => {
    // A local range API that knows one breached password.
    const sha1 = createHash('sha1').update(BREACHED).digest('hex').toUpperCase();
    rangeApi = http.createServer((req, res) => {
      const prefix = req.url!.split('/').pop();
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end(prefix === sha1.slice(0, 5) ? `${sha1.slice(5)}:42` : '');
    });
    await new Promise<void>((resolve) => rangeApi.listen(0, '127.0.0.1', resolve));
    w = await createWorld({ config: { passwordBreachApi: `http://127.0.0.1:${(rangeApi.address() as AddressInfo).port}` } });
    app = appWithPages(w);
  });
  after(async () => {
    await w.close();
    rangeApi.closeAllConnections();
    await new Promise((resolve) => rangeApi.close(resolve));
  });
  beforeEach(async () => w.reset());

  async function confirmLink(email: string) {
    const { agent, userId } = await signedUp(w, email);
    await w.deliver();
    const link = linkIn(mailsTo(w, email, /confirm/i)[0]!);
    return { agent, userId, link };
  }

  it('GET /confirm-email shows one form and changes nothing; its headers keep the token private', async () => {
    const { agent, link } = await confirmLink('ada@example.test');
    const res = await open(app, `${link.url.pathname}${link.url.search}`);
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.equal('text/html; charset=utf-8');
    expect(res.headers['referrer-policy']).to.equal('no-referrer');
    expect(res.headers['cache-control']).to.equal('no-store');
    const csp = String(res.headers['content-security-policy']);
    expect(csp).to.match(/default-src 'none'/);
    expect(csp).to.match(/form-action 'self'/);
    expect(csp).to.match(/style-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).to.not.match(/unsafe|script-src/);
    expect(res.text).to.match(/<html lang="en">/);
    expect(res.text).to.match(/<form method="post" action="\/confirm-email">/);
    expect(res.text).to.not.match(/<script/);
    expect(hiddenValue(res.text, 'token')).to.equal(link.params.token);
    expect((await agent.get('/api/v1/me')).body.emailConfirmed).to.equal(false);
    // The stylesheet the page carries is exactly the one the policy allows.
    const style = /<style>([\s\S]*?)<\/style>/.exec(res.text)![1]!;
    expect(csp).to.contain(`'sha256-${createHash('sha256').update(style).digest('base64')}'`);
  });

  it('the form post confirms the address and says so; the token appears in no log line', async () => {
    const { link } = await confirmLink('ada@example.test');
    const res = await submit(app, '/confirm-email', { userId: link.params.userId!, token: link.params.token! });
    expect(res.status).to.equal(200);
    expect(text(res)).to.contain('Your e-mail address is confirmed');
    const me = await login(request.agent(app), 'ada@example.test');
    expect(me.body.emailConfirmed).to.equal(true);
    const pageLines = requestLog.lines.filter((l) => l.msg === 'request' && String(l.route).endsWith(' /confirm-email'));
    expect(pageLines.map((l) => l.route)).to.include('POST /confirm-email');
    expect(JSON.stringify([...w.logLines, ...requestLog.lines])).to.not.contain(link.params.token);
  });

  it('a used or wrong link says it expired and sends a new one (once per five minutes)', async () => {
    const { link, userId } = await confirmLink('ada@example.test');
    const res = await submit(app, '/confirm-email', { userId, token: `${link.params.token}x` });
    expect(res.status).to.equal(400);
    expect(text(res)).to.contain('expired or was already used');
    expect(hiddenValue(res.text, 'intent')).to.equal('resend');
    w.smtp.clear();
    w.clock.advance(5 * 60_000 + 1000);
    const resent = await submit(app, '/confirm-email', { userId, intent: 'resend' });
    expect(resent.status).to.equal(200);
    expect(text(resent)).to.contain('a new link is on its way');
    await w.deliver();
    const fresh = linkIn(mailsTo(w, 'ada@example.test', /confirm/i)[0]!);
    expect(fresh.params.token).to.not.equal(link.params.token);
    const again = await submit(app, '/confirm-email', { userId, intent: 'resend' });
    expect(again.status).to.equal(429);
    expect(text(again)).to.contain('less than five minutes ago');
    const ok = await submit(app, '/confirm-email', { userId, token: fresh.params.token! });
    expect(text(ok)).to.contain('confirmed');
  });

  it('parallel posts of one confirmation link: every answer says confirmed, the token is spent once', async () => {
    const { link } = await confirmLink('ada@example.test');
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => submit(app, '/confirm-email', { userId: link.params.userId!, token: link.params.token! })),
    );
    expect(answers.map((r) => r.status)).to.deep.equal([200, 200, 200, 200, 200, 200]);
    const spent = await w.db.knex('account_tokens').where({ purpose: 'confirm_email' }).whereNotNull('usedAt').count({ n: '*' });
    expect(Number(spent[0]!.n)).to.equal(1);
  });

  it('an incomplete link gets a page that says what to do, not an error body', async () => {
    for (const url of ['/confirm-email', '/confirm-email?userId=nope&token=abc', '/reset-password?token=abc', '/confirm-email-change?userId=x']) {
      const res = await open(app, url);
      expect(res.status, url).to.equal(400);
      expect(res.headers['content-type']).to.equal('text/html; charset=utf-8');
      expect(text(res)).to.contain('This link is incomplete');
    }
  });

  it('refuses a form post from another origin and changes nothing', async () => {
    const { link, agent } = await confirmLink('ada@example.test');
    const res = await request(app)
      .post('/confirm-email')
      .set('Origin', 'https://evil.example')
      .type('form')
      .send({ userId: link.params.userId!, token: link.params.token! });
    expect(res.status).to.equal(403);
    const cross = await request(app)
      .post('/confirm-email')
      .set('Sec-Fetch-Site', 'cross-site')
      .type('form')
      .send({ userId: link.params.userId!, token: link.params.token! });
    expect(cross.status).to.equal(403);
    expect((await agent.get('/api/v1/me')).body.emailConfirmed).to.equal(false);
  });

  it('answers 405 with Allow for other methods', async () => {
    const res = await request(app).put('/reset-password');
    expect(res.status).to.equal(405);
    expect(res.headers.allow).to.equal('GET, HEAD, POST');
    const login = await request(app).post('/login').set('Origin', PUBLIC_BASE_URL).type('form').send({});
    expect(login.status).to.equal(405);
    expect(login.headers.allow).to.equal('GET, HEAD');
  });

  it('a page opened on another host name than PUBLIC_BASE_URL redirects to the same path and query there, before any form', async () => {
    const { link, agent } = await confirmLink('ada@example.test');
    const pathAndQuery = `${link.url.pathname}${link.url.search}`;
    for (const host of ['127.0.0.1:8080', 'localhost', 'meals.example.test:8443', 'other.example.test']) {
      const res = await request(app).get(pathAndQuery).set('Host', host);
      expect(res.status, host).to.equal(302);
      expect(res.headers.location, host).to.equal(`${PUBLIC_BASE_URL}${pathAndQuery}`);
      expect(res.headers['cache-control']).to.equal('no-store');
      expect(res.headers['referrer-policy']).to.equal('no-referrer');
      expect(res.text).to.not.match(/<form/);
    }
    for (const url of ['/login', '/reset-password?email=a%40b.test&token=t']) {
      const res = await request(app).get(url).set('Host', '127.0.0.1');
      expect(res.status, url).to.equal(302);
      expect(res.headers.location, url).to.equal(`${PUBLIC_BASE_URL}${url}`);
    }
    // The same host as a URL compares it: any case, the scheme's default port.
    for (const host of ['MEALS.Example.Test', 'meals.example.test:443']) expect((await open(app, pathAndQuery).set('Host', host)).status, host).to.equal(200);
    expect((await agent.get('/api/v1/me')).body.emailConfirmed).to.equal(false); // a redirect changes nothing either
  });

  it('/login (the link of every notice mail) says how to sign in and mails a reset link from its form', async () => {
    await signedUp(w, 'ada@example.test');
    const res = await open(app, '/login');
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.equal('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).to.match(/form-action 'self'/);
    expect(text(res)).to.contain('Sign in in the Meal Planner app');
    expect(res.text).to.match(/<form method="post" action="\/reset-password">/);
    expect(hiddenValue(res.text, 'intent')).to.equal('forgot');
    expect(res.text).to.match(/<input type="email" id="email" name="email"/);
    const sent = await submit(app, '/reset-password', { intent: 'forgot', email: 'ada@example.test' });
    expect(sent.status).to.equal(200);
    expect(text(sent)).to.contain('a new link is on its way');
    await w.deliver();
    expect(linkIn(mailsTo(w, 'ada@example.test', /Reset your password/).at(-1)!).url.pathname).to.equal('/reset-password');
  });

  it('/login redirects to WEB_CLIENT_URL when a web client signs people in', async () => {
    const pages = createPages({
      service: w.accounts.service,
      authLimiter: w.accounts.router.authLimiter,
      publicBaseUrl: PUBLIC_BASE_URL,
      webClientUrl: 'https://app.example.test/sign-in',
      logger: createLogger({ level: 'silent' }),
    });
    const served = new ApiRouter();
    served.router.use(pages);
    const withClient = createHttpApp({ logger: createLogger({ level: 'silent' }), allowedOrigins: [PUBLIC_BASE_URL], open: [served], routers: [] });
    for (const host of [new URL(PUBLIC_BASE_URL).host, '127.0.0.1']) {
      const res = await request(withClient).get('/login').set('Host', host);
      expect(res.status, host).to.equal(302);
      expect(res.headers.location).to.equal('https://app.example.test/sign-in');
    }
  });

  it('reset: states the rules, refuses a short or breached password without spending the link, then changes it', async () => {
    await signedUp(w, 'ada@example.test');
    await request(app).post('/api/v1/auth/forgot-password').send({ email: 'ada@example.test' }).expect(204);
    await w.deliver();
    const link = linkIn(mailsTo(w, 'ada@example.test', /reset/i)[0]!);
    const page = await open(app, `${link.url.pathname}${link.url.search}`);
    expect(page.status).to.equal(200);
    expect(page.text).to.match(/<label for="newPassword">/);
    expect(page.text).to.match(/autocomplete="new-password"/);
    expect(text(page)).to.contain('Use 8 to 256 characters');
    const fields = { email: hiddenValue(page.text, 'email')!, token: hiddenValue(page.text, 'token')! };
    expect(fields).to.deep.equal({ email: link.params.email, token: link.params.token });

    const short = await submit(app, '/reset-password', { ...fields, newPassword: 'short' });
    expect(short.status).to.equal(400);
    expect(text(short)).to.contain('too short');
    expect(short.text).to.match(/aria-invalid="true"/);
    const pwned = await submit(app, '/reset-password', { ...fields, newPassword: BREACHED });
    expect(pwned.status).to.equal(400);
    expect(text(pwned)).to.contain('appeared in a data breach');
    const long = await submit(app, '/reset-password', { ...fields, newPassword: 'x'.repeat(257) });
    expect(long.status).to.equal(400);
    expect(text(long)).to.contain('too long');

    const done = await submit(app, '/reset-password', { ...fields, newPassword: 'a brand new passphrase' });
    expect(done.status).to.equal(200);
    expect(text(done)).to.contain('Your password is changed');
    expect((await login(request.agent(app), 'ada@example.test', 'a brand new passphrase')).status).to.equal(200);
    expect((await login(request.agent(app), 'ada@example.test', PASSWORD)).status).to.equal(401);
    expect(JSON.stringify([...w.logLines, ...requestLog.lines])).to.not.contain(link.params.token);
  });

  it('reset: parallel posts of one link change the password once; the spent link offers a new one', async () => {
    await signedUp(w, 'ada@example.test');
    await request(app).post('/api/v1/auth/forgot-password').send({ email: 'ada@example.test' }).expect(204);
    await w.deliver();
    const link = linkIn(mailsTo(w, 'ada@example.test', /reset/i)[0]!);
    const answers = await Promise.all(
      ['first passphrase one', 'second passphrase two', 'third passphrase three'].map((p) =>
        submit(app, '/reset-password', { email: link.params.email!, token: link.params.token!, newPassword: p }),
      ),
    );
    expect(answers.map((r) => r.status).sort()).to.deep.equal([200, 400, 400]);
    const spentPage = answers.find((r) => r.status === 400)!;
    expect(text(spentPage)).to.contain('expired or was already used');
    expect(hiddenValue(spentPage.text, 'intent')).to.equal('forgot');

    w.smtp.clear();
    w.clock.advance(5 * 60_000 + 1000);
    const sent = await submit(app, '/reset-password', { email: 'ada@example.test', intent: 'forgot' });
    expect(sent.status).to.equal(200);
    expect(text(sent)).to.contain('a new link is on its way');
    await w.deliver();
    // One new link (beside the notice that the password was reset, which carries none).
    expect(mailsTo(w, 'ada@example.test').filter((m) => m.text.includes('/reset-password?'))).to.have.length(1);
  });

  it('confirm-email-change: the page names the new address and the post makes it the login', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    await agent.post('/api/v1/me/email').send({ newEmail: 'countess@example.test' }).expect(204);
    await w.deliver();
    const link = linkIn(mailsTo(w, 'countess@example.test')[0]!);
    expect(link.url.pathname).to.equal('/confirm-email-change');
    const page = await open(app, `${link.url.pathname}${link.url.search}`);
    expect(text(page)).to.contain('countess@example.test');
    const res = await submit(app, '/confirm-email-change', {
      userId: hiddenValue(page.text, 'userId')!,
      newEmail: hiddenValue(page.text, 'newEmail')!,
      token: hiddenValue(page.text, 'token')!,
    });
    expect(res.status).to.equal(200);
    expect(text(res)).to.contain('From now on you sign in with countess@example.test');
    expect((await login(request.agent(app), 'countess@example.test')).status).to.equal(200);
    const again = await submit(app, '/confirm-email-change', link.params);
    expect(again.status).to.equal(400);
    expect(text(again)).to.contain('no longer works');
  });

  it('counts form posts against the auth rate limit and answers a page with Retry-After', async () => {
    const limited = w.another({ authRateLimit: 2 });
    const open = new ApiRouter();
    open.router.use(limited.accounts.router.pages);
    const small = createHttpApp({ logger: createLogger({ level: 'silent' }), allowedOrigins: [PUBLIC_BASE_URL], open: [open], routers: [] });
    const answers = await Promise.all(Array.from({ length: 4 }, () => submit(small, '/reset-password', { email: 'ada@example.test', intent: 'forgot' })));
    expect(answers.map((r) => r.status).sort()).to.deep.equal([200, 200, 429, 429]);
    const refused = answers.find((r) => r.status === 429)!;
    expect(Number(refused.headers['retry-after'])).to.be.greaterThan(0);
    expect(refused.headers['content-type']).to.equal('text/html; charset=utf-8');
    expect(text(refused)).to.contain('Too many attempts');
  });
});

describe('mail written to files when no SMTP server is set', () => {
  let w: World;
  before(async () => {
    w = await createWorld({ config: { smtpUrl: undefined } });
  });
  after(async () => w.close());

  it('writes a plain-text copy beside each .eml with the link whole on one line', async () => {
    const { userId } = await signedUp(w, 'a-rather-long-address-for-wrapping@example.test');
    await w.accounts.service.deliverDueMail();
    const dir = path.join(w.config.dataDir, 'mail');
    const files = fs.readdirSync(dir).sort();
    expect(files.filter((f) => f.endsWith('.eml'))).to.have.length(1);
    const txt = files.find((f) => f.endsWith('.txt'));
    expect(txt).to.be.a('string');
    expect(fs.statSync(path.join(dir, txt!)).mode & 0o777).to.equal(0o600);
    const body = fs.readFileSync(path.join(dir, txt!), 'utf8');
    const line = body.split('\n').find((l) => l.startsWith(`${PUBLIC_BASE_URL}/confirm-email?`));
    expect(line).to.be.a('string');
    const url = new URL(line!);
    expect(url.searchParams.get('userId')).to.equal(userId);
    expect(url.searchParams.get('token')).to.match(/^[A-Za-z0-9_-]{22,}$/);
    const logged = w.logLines.find((l) => l.msg === 'mail written to file');
    expect(logged?.text).to.equal(path.join(dir, txt!));
    expect(JSON.stringify(logged)).to.not.contain(url.searchParams.get('token'));
  });
});
