import fs from 'node:fs';
import { linksIn } from '@svc/test-support';
import { expect } from 'chai';
import request from 'supertest';
import { type Harness, linkTo, startHarness } from './harness.js';
import { deadMailedLinks } from './mailed-links.js';

describe('pages the service serves to people', () => {
  let h: Harness;
  let off: Harness;
  before(async () => {
    h = await startHarness();
    off = await startHarness({ WEB_PAGES: 'off' });
  });
  after(async () => {
    await h.close();
    await off.close();
  });

  it('serves the mailed links by default, at the paths the mails use', async () => {
    await request(h.app).post('/api/v1/auth/register').send({ email: 'pages@example.test', password: 'correct horse battery', displayName: 'P' }).expect(200);
    const [mail] = await h.mailsTo('pages@example.test');
    const link = linkTo(mail!, '/confirm-email');
    const res = await request(h.app).get(`${link.pathname}${link.search}`).set('Host', link.host);
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.equal('text/html; charset=utf-8');
    for (const path of ['/confirm-email-change', '/reset-password']) expect((await request(h.app).get(path).set('Host', link.host)).status, path).to.equal(400); // a page: "incomplete link"
    expect((await request(h.app).get('/login').set('Host', link.host)).status).to.equal(200);
  });

  it('a mailed link opened on another host name (127.0.0.1 for localhost) redirects to PUBLIC_BASE_URL before showing its form', async () => {
    await request(h.app)
      .post('/api/v1/auth/register')
      .send({ email: 'elsewhere@example.test', password: 'correct horse battery', displayName: 'E' })
      .expect(200);
    const [mail] = await h.mailsTo('elsewhere@example.test');
    const link = linkTo(mail!, '/confirm-email');
    expect(link.origin).to.equal('http://localhost:8080');
    // supertest asks 127.0.0.1:<its port>, as a browser does that was given the instance's address.
    const res = await request(h.app).get(`${link.pathname}${link.search}`);
    expect(res.status).to.equal(302);
    expect(res.headers.location).to.equal(link.href);
    expect(res.text).to.not.contain('<form');
    // Another port of the same name too (an instance's own port beside the balancer's)...
    expect((await request(h.app).get(`${link.pathname}${link.search}`).set('Host', 'localhost:8081')).status).to.equal(302);
    // ...but a proxy that passes the name alone (nginx's $host drops the port) gets the page, not a loop.
    expect((await request(h.app).get(`${link.pathname}${link.search}`).set('Host', 'localhost')).status).to.equal(200);
  });

  it('/login redirects to WEB_CLIENT_URL when one is set, and GET / links to it', async () => {
    const client = await startHarness({ WEB_CLIENT_URL: 'https://app.example.test/sign-in' });
    try {
      const res = await request(client.app).get('/login').set('Host', 'localhost:8080');
      expect(res.status).to.equal(302);
      expect(res.headers.location).to.equal('https://app.example.test/sign-in');
      expect((await request(client.app).get('/')).text).to.contain('<a href="https://app.example.test/sign-in">Open Meal Planner</a>');
    } finally {
      await client.close();
    }
  });

  it('GET / answers a small page: the service, its version, links to the API reference, the OpenAPI document and health, each of which answers', async () => {
    const res = await request(h.app).get('/');
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.equal('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).to.equal("default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
    const version = (JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
    expect(res.text).to.contain('<h1>Household meal-planning service</h1>');
    expect(res.text).to.contain(`Version ${version}.`);
    expect(res.text).to.not.match(/<script|<form|https?:\/\//);
    const links = [...res.text.matchAll(/<a href="([^"]+)">/g)].map((m) => m[1]!);
    expect(links).to.deep.equal(['/api/v1/docs', '/api/v1/openapi.json', '/healthz', '/readyz']);
    for (const link of links) expect((await request(h.app).get(link)).status, link).to.equal(200);
    expect((await request(h.app).get('/api/v1/openapi.json')).body.info.version).to.equal(version);
    expect((await request(h.app).head('/')).status).to.equal(200);
  });

  it('GET /favicon.ico, which a browser asks for beside every page: 204, cached for a day (not a 404 problem)', async () => {
    const res = await request(h.app).get('/favicon.ico');
    expect(res.status).to.equal(204);
    expect(res.headers['cache-control']).to.equal('public, max-age=86400');
    expect(res.text ?? '').to.equal('');
    expect((await request(h.app).head('/favicon.ico')).status).to.equal(204);
  });

  it('every link in every kind of mail the service sends opens something (2xx or 3xx): the pages, and /login of every notice', async () => {
    const before = h.smtp.mails.length;
    const password = 'correct horse battery';
    const agent = request.agent(h.app);
    const register = { email: 'every-mail@example.test', password, displayName: 'Every Mail' };
    await agent.post('/api/v1/auth/register').send(register).expect(200); // confirm your address
    await request(h.app).post('/api/v1/auth/register').send(register).expect(200); // you already have an account
    await agent.post('/api/v1/me/email').send({ newEmail: 'every-mail-new@example.test' }).expect(204); // confirm the new address; the heads-up
    const [change] = await h.mailsTo('every-mail-new@example.test');
    const changeLink = linkTo(change!, '/confirm-email-change');
    const fields = Object.fromEntries(changeLink.searchParams);
    await request(h.app).post('/api/v1/auth/confirm-email-change').send(fields).expect(204); // the address changed
    await request(h.app).post('/api/v1/auth/forgot-password').send({ email: 'every-mail-new@example.test' }).expect(204); // reset your password
    const reset = (await h.mailsTo('every-mail-new@example.test')).find((m) => m.subject === 'Reset your password')!;
    const resetFields = Object.fromEntries(linkTo(reset, '/reset-password').searchParams);
    await request(h.app)
      .post('/api/v1/auth/reset-password')
      .send({ ...resetFields, newPassword: 'another good passphrase' })
      .expect(204); // password reset
    const again = request.agent(h.app);
    await again.post('/api/v1/auth/login').send({ email: 'every-mail-new@example.test', password: 'another good passphrase' }).expect(200);
    await again.post('/api/v1/me/password').send({ currentPassword: 'another good passphrase', newPassword: password }).expect(204); // password changed
    await again.get('/api/v1/me/export').expect(200); // your data was exported
    await h.service.accounts.deliverDueMail(); // before the deletion, which deletes the mail still waiting for the person
    await again.delete('/api/v1/me').send({ password }).expect(204); // account deleted
    await h.service.accounts.deliverDueMail();
    const mails = h.smtp.mails.slice(before);
    expect(mails.length, mails.map((m) => m.subject).join(' | ')).to.be.at.least(10);
    const paths = new Set(mails.flatMap((m) => linksIn(m.text).map((u) => u.pathname)));
    expect([...paths].sort()).to.deep.equal(['/confirm-email', '/confirm-email-change', '/login', '/reset-password']);
    expect(await deadMailedLinks(h.app, 'http://localhost:8080', mails)).to.deep.equal([]);
  });

  it('WEB_PAGES=off leaves them to a web client: 404 problem+json', async () => {
    for (const path of ['/confirm-email', '/confirm-email-change', '/reset-password', '/login']) {
      const res = await request(off.app).get(`${path}?userId=x&token=y`);
      expect(res.status, path).to.equal(404);
      expect(res.headers['content-type']).to.match(/^application\/problem\+json/);
    }
  });

  it('serves the API reference and Redoc from this origin, under a policy that allows only that', async () => {
    const page = await request(h.app).get('/api/v1/docs');
    expect(page.status).to.equal(200);
    expect(page.text).to.contain('<redoc spec-url="/api/v1/openapi.json"');
    expect(page.text).to.contain('<script src="/api/v1/docs/redoc.standalone.js">');
    expect(page.text).to.not.match(/https?:\/\//); // no CDN
    const csp = String(page.headers['content-security-policy']);
    expect(csp).to.contain("default-src 'none'");
    expect(csp).to.contain("script-src 'self'");
    expect(csp).to.contain("connect-src 'self'");
    expect(csp).to.not.match(/script-src[^;]*unsafe/);
    const bundle = await request(h.app).get('/api/v1/docs/redoc.standalone.js');
    expect(bundle.status).to.equal(200);
    expect(bundle.headers['content-type']).to.equal('text/javascript; charset=utf-8');
    expect(bundle.headers['cache-control']).to.match(/max-age=86400/);
  });
});
