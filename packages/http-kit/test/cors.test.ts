import { expect } from 'chai';
import request from 'supertest';
import { CORS_MAX_AGE_SECONDS, parseOrigin } from '../src/index.js';
import { app, demoRouter } from './helpers.js';

const WEB = 'http://localhost:5173';
const OTHER_SITE_WEB = 'https://meals.example.org';
const EVIL = 'http://localhost:6666';

describe('CORS for the origins given (CORS_ORIGINS)', () => {
  const server = app([demoRouter()], { corsOrigins: [WEB, OTHER_SITE_WEB] });
  const plain = app([demoRouter()]);

  it('answers an allowed origin with its own origin, credentials and the headers a client reads', async () => {
    const res = await request(server).get('/api/v1/ping').set('Origin', WEB);
    expect(res.status).to.equal(200);
    expect(res.headers['access-control-allow-origin']).to.equal(WEB);
    expect(res.headers['access-control-allow-credentials']).to.equal('true');
    const exposed = res.headers['access-control-expose-headers']!.split(',');
    for (const h of ['X-Trace-Id', 'Retry-After', 'ETag', 'Location', 'Server-Timing']) expect(exposed).to.include(h);
    expect(res.headers.vary).to.match(/Origin/);
  });

  it('answers its preflight 204 with the methods, the request headers and Access-Control-Max-Age', async () => {
    const res = await request(server)
      .options('/api/v1/things')
      .set('Origin', WEB)
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'content-type, x-app-version');
    expect(res.status).to.equal(204);
    expect(res.headers['access-control-allow-origin']).to.equal(WEB);
    expect(res.headers['access-control-allow-credentials']).to.equal('true');
    expect(res.headers['access-control-allow-methods']).to.contain('PATCH');
    expect(res.headers['access-control-allow-headers']!.toLowerCase()).to.contain('content-type').and.contain('x-app-version');
    expect(res.headers['access-control-max-age']).to.equal(String(CORS_MAX_AGE_SECONDS));
  });

  it('carries the CORS headers on an error answer too, so the client can read its problem', async () => {
    const res = await request(server).post('/api/v1/things').set('Origin', WEB).set('Content-Type', 'application/json').send('{');
    expect(res.status).to.equal(400);
    expect(res.headers['access-control-allow-origin']).to.equal(WEB);
  });

  it('gives an origin not on the list, and a request without one, no CORS header at all; its preflight is not allowed', async () => {
    const res = await request(server).get('/api/v1/ping').set('Origin', EVIL);
    expect(res.status).to.equal(200);
    expect(Object.keys(res.headers).filter((h) => h.startsWith('access-control-'))).to.deep.equal([]);
    expect(res.headers.vary).to.match(/Origin/);
    const pre = await request(server).options('/api/v1/things').set('Origin', EVIL).set('Access-Control-Request-Method', 'POST');
    // Whatever the routes answer an OPTIONS, without Access-Control-Allow-Origin the browser refuses.
    expect(Object.keys(pre.headers).filter((h) => h.startsWith('access-control-'))).to.deep.equal([]);
    const none = await request(server).get('/api/v1/ping');
    expect(none.headers['access-control-allow-origin']).to.equal(undefined);
  });

  it('lets a cookie-carrying state change and a sign-in from an allowed origin through the CSRF check, also from another site; refuses others', async () => {
    const from = (origin: string, site: string) =>
      request(server)
        .post('/api/v1/things')
        .set('Cookie', 'service_session=abc')
        .set('Origin', origin)
        .set('Sec-Fetch-Site', site)
        .set('Content-Type', 'application/json')
        .send({ name: 'x' });
    expect((await from(WEB, 'same-site')).status).to.equal(201);
    expect((await from(OTHER_SITE_WEB, 'cross-site')).status).to.equal(201);
    expect((await from('http://localhost:8080', 'same-origin')).status).to.equal(201);
    const refused = await from(EVIL, 'same-site');
    expect(refused.status).to.equal(403);
    expect(refused.body.code).to.equal('forbidden');
    expect((await from('https://evil.example', 'cross-site')).status).to.equal(403);
  });

  it('with no origins given there is no CORS: no headers, no preflight, and another origin is refused as before', async () => {
    const res = await request(plain).get('/api/v1/ping').set('Origin', WEB);
    expect(Object.keys(res.headers).filter((h) => h.startsWith('access-control-'))).to.deep.equal([]);
    expect(res.headers.vary ?? '').to.not.match(/Origin/);
    const pre = await request(plain).options('/api/v1/things').set('Origin', WEB).set('Access-Control-Request-Method', 'POST');
    expect(pre.headers['access-control-allow-origin']).to.equal(undefined);
    const post = await request(plain).post('/api/v1/things').set('Cookie', 'service_session=abc').set('Origin', WEB).send({ name: 'x' });
    expect(post.status).to.equal(403);
  });

  it('takes exact origins only', () => {
    expect(parseOrigin('https://app.example.com')).to.equal('https://app.example.com');
    expect(parseOrigin('http://localhost:5173')).to.equal('http://localhost:5173');
    for (const bad of ['https://app.example.com/', 'https://app.example.com/app', '*', 'app.example.com', 'ftp://x.example', 'https://APP.example.com']) {
      expect(() => parseOrigin(bad), bad).to.throw(/origin/);
    }
  });
});
