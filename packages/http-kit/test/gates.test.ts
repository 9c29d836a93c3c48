import { expect } from 'chai';
import request from 'supertest';
import { parseAppVersionFloors } from '../src/index.js';
import { app, demoRouter } from './helpers.js';

describe('the app-version gate', () => {
  const server = app([demoRouter()], { appVersionFloors: { ios: '2.4.0', android: '2.3.1' } });

  it('answers 426 app-version-unsupported below the platform floor', async () => {
    for (const v of ['ios/2.3.9', 'ios/1', 'android/2.3.0', 'android/2.3.0.9', 'ios/2.3.99.99']) {
      const res = await request(server).get('/api/v1/ping').set('X-App-Version', v);
      expect(res.status, v).to.equal(426);
      expect(res.body.type).to.equal('app-version-unsupported');
      expect(res.headers['content-type']).to.match(/problem\+json/);
      // RFC 9110 §15.5.22: a 426 names what to upgrade to, with the upgrade connection option.
      expect(res.headers.upgrade, v).to.equal(v.startsWith('ios') ? 'ios-app/2.4.0' : 'android-app/2.3.1');
      expect(res.headers.connection).to.match(/upgrade/i);
    }
  });

  it('passes builds at or above the floor, compared numerically', async () => {
    for (const v of ['ios/2.4.0', 'ios/2.4', 'ios/2.10.0', 'android/2.3.1', 'android/10.0.0.1']) {
      expect((await request(server).get('/api/v1/ping').set('X-App-Version', v)).status, v).to.equal(200);
    }
  });

  it('never turns away a caller without the header or with a malformed one', async () => {
    expect((await request(server).get('/api/v1/ping')).status).to.equal(200);
    for (const v of ['ios', 'ios/', 'ios/abc', 'web/1.0.0', 'ios/1.2.3.4.5', '2.0.0', 'ios 1.0', 'iOS/1.0', 'ANDROID/1.0']) {
      expect((await request(server).get('/api/v1/ping').set('X-App-Version', v)).status, v).to.equal(200);
    }
  });

  it('parses floors and rejects malformed ones', () => {
    expect(parseAppVersionFloors('ios=2.4.0, android=2.3.1')).to.deep.equal({ ios: '2.4.0', android: '2.3.1' });
    expect(parseAppVersionFloors('')).to.deep.equal({});
    expect(() => parseAppVersionFloors('ios:2')).to.throw();
    expect(() => parseAppVersionFloors('web=1.0')).to.throw();
  });
});

describe('the cross-site origin guard', () => {
  const server = app([demoRouter()]);

  it('refuses a cookie-carrying state change from a foreign Origin with 403 forbidden', async () => {
    const res = await request(server).post('/api/v1/things').set('Cookie', 'service_session=abc').set('Origin', 'https://evil.example').send({ name: 'x' });
    expect(res.status).to.equal(403);
    expect(res.body.code).to.equal('forbidden');
  });

  it('lets the own origin, no Origin, and cookie-less requests through', async () => {
    expect(
      (await request(server).post('/api/v1/things').set('Cookie', 'service_session=abc').set('Origin', 'http://localhost:8080').send({ name: 'x' })).status,
    ).to.equal(201);
    expect((await request(server).post('/api/v1/things').set('Cookie', 'service_session=abc').send({ name: 'x' })).status).to.equal(201);
    expect((await request(server).post('/api/v1/things').set('Origin', 'https://evil.example').send({ name: 'x' })).status).to.equal(201);
    expect((await request(server).post('/api/v1/things').set('Cookie', 'other=1').set('Origin', 'https://evil.example').send({ name: 'x' })).status).to.equal(
      201,
    );
  });

  it('refuses a cookie-carrying state change marked Sec-Fetch-Site: cross-site, with or without an Origin', async () => {
    const res = await request(server).post('/api/v1/things').set('Cookie', 'service_session=abc').set('Sec-Fetch-Site', 'cross-site').send({ name: 'x' });
    expect(res.status).to.equal(403);
    expect(res.body.code).to.equal('forbidden');
    for (const site of ['same-origin', 'none']) {
      expect(
        (await request(server).post('/api/v1/things').set('Cookie', 'service_session=abc').set('Sec-Fetch-Site', site).send({ name: 'x' })).status,
      ).to.equal(201);
    }
    // No cookie: an app or a server, not a victim's browser session.
    expect((await request(server).post('/api/v1/things').set('Sec-Fetch-Site', 'cross-site').send({ name: 'x' })).status).to.equal(201);
  });
});

describe('login CSRF: sign-in paths without a session cookie', () => {
  const server = app([demoRouter()], { signInPaths: ['/api/v1/things'] });

  it('refuses a foreign Origin or Sec-Fetch-Site: cross-site on a sign-in path, and lets the own origin and apps through', async () => {
    const foreign = await request(server).post('/api/v1/things').set('Origin', 'https://evil.example').send({ name: 'x' });
    expect(foreign.status).to.equal(403);
    expect(foreign.body.code).to.equal('forbidden');
    expect((await request(server).post('/api/v1/things').set('Origin', 'null').send({ name: 'x' })).status).to.equal(403);
    expect((await request(server).post('/api/v1/things').set('Sec-Fetch-Site', 'cross-site').send({ name: 'x' })).status).to.equal(403);
    expect((await request(server).post('/api/v1/things').set('Origin', 'http://localhost:8080').send({ name: 'x' })).status).to.equal(201);
    expect((await request(server).post('/api/v1/things').send({ name: 'x' })).status).to.equal(201);
  });

  it('treats every state-changing literal /api/v1/auth/* path as a sign-in path by default', async () => {
    const { ApiRouter } = await import('../src/index.js');
    const auth = new ApiRouter();
    auth.route(
      { method: 'post', path: '/api/v1/auth/login', operationId: 'login', summary: 'login', responses: { 204: { description: 'ok' } } },
      (_req, res) => {
        res.status(204).end();
      },
    );
    const withAuth = app([auth]);
    expect((await request(withAuth).post('/api/v1/auth/login').set('Origin', 'https://evil.example').send({})).status).to.equal(403);
    expect((await request(withAuth).post('/api/v1/auth/login').send({})).status).to.equal(204);
  });
});
