import { expect } from 'chai';
import request from 'supertest';
import { type Harness, linkTo, startHarness } from './harness.js';

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
    const res = await request(h.app).get(`${link.pathname}${link.search}`);
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.equal('text/html; charset=utf-8');
    for (const path of ['/confirm-email-change', '/reset-password']) expect((await request(h.app).get(path)).status, path).to.equal(400); // a page: "incomplete link"
  });

  it('WEB_PAGES=off leaves them to a web client: 404 problem+json', async () => {
    for (const path of ['/confirm-email', '/confirm-email-change', '/reset-password']) {
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
