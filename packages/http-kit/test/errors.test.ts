import { expect } from 'chai';
import request from 'supertest';
import {
  ApiRouter,
  AuthenticationError,
  ConflictError,
  InputError,
  LockedError,
  NotAllowedError,
  NotFoundError,
  ServiceUnavailableError,
  TooManyRequestsError,
  toProblem,
  UpgradeRequiredError,
} from '../src/index.js';
import { app, demoRouter } from './helpers.js';

const PROBLEM_KEYS = ['type', 'title', 'status', 'detail', 'instance', 'code', 'traceId'];

function expectProblem(res: request.Response, status: number, code: string) {
  expect(res.status).to.equal(status);
  expect(res.headers['content-type']).to.match(/^application\/problem\+json/);
  expect(res.body).to.include.all.keys(...PROBLEM_KEYS);
  expect(res.body.status).to.equal(status);
  expect(res.body.code).to.equal(code);
  expect(res.body.traceId).to.equal(res.headers['x-trace-id']);
  expect(JSON.stringify(res.body)).to.not.match(/at .*\.(ts|js):\d+/);
}

describe('problem+json answers', () => {
  const server = app([demoRouter()]);

  it('answers an unknown route with 404 not_found', async () => {
    const res = await request(server).get('/api/v1/nowhere');
    expectProblem(res, 404, 'not_found');
    expect(res.body.type).to.equal('about:blank');
    expect(res.body.instance).to.equal('/api/v1/nowhere');
  });

  it('answers a wrong method with 405 method_not_allowed and Allow', async () => {
    const res = await request(server).put('/api/v1/things/8c9c5a4e-7a54-4a8e-9a43-1f3c8d7e6b5a').send({});
    expectProblem(res, 405, 'method_not_allowed');
    expect(res.headers.allow).to.equal('GET, HEAD');
  });

  it('answers malformed JSON with 400 validation_failed', async () => {
    const res = await request(server).post('/api/v1/things').set('Content-Type', 'application/json').send('{"name": "x",');
    expectProblem(res, 400, 'validation_failed');
  });

  it('answers an over-large body with 413 payload_too_large', async () => {
    const res = await request(server)
      .post('/api/v1/things')
      .send({ name: 'x', note: 'y'.repeat(70_000) });
    expectProblem(res, 413, 'payload_too_large');
  });

  it('refuses a state change whose body is not JSON', async () => {
    for (const [type, body] of [
      ['application/x-www-form-urlencoded', 'name=x'],
      ['text/plain', '{"name":"x"}'],
      ['multipart/form-data; boundary=x', '--x--'],
    ]) {
      const res = await request(server).post('/api/v1/things').set('Content-Type', type!).send(body);
      expectProblem(res, 400, 'validation_failed');
    }
  });

  it('refuses a NUL character in the body, a key, the query or the path', async () => {
    expectProblem(await request(server).post('/api/v1/things').send({ name: 'a\u0000' }), 400, 'validation_failed');
    expectProblem(
      await request(server)
        .post('/api/v1/things')
        .send({ name: 'a', tags: ['ok', 'b\u0000'] }),
      400,
      'validation_failed',
    );
    expectProblem(
      await request(server)
        .post('/api/v1/things')
        .send({ name: 'a', ['k\u0000']: 1 }),
      400,
      'validation_failed',
    );
    expectProblem(await request(server).get('/api/v1/ping?x=%00'), 400, 'validation_failed');
    expectProblem(await request(server).get('/api/v1/pi%00ng'), 400, 'validation_failed');
  });

  it('answers 401 before any input error on a session-required operation', async () => {
    const cases = [
      request(server).post('/api/v1/private').set('Content-Type', 'text/plain').send('x'),
      request(server).post('/api/v1/private').set('Content-Type', 'application/json').send('{bad'),
      request(server).post('/api/v1/private').send({ name: 'a\u0000' }),
      request(server).post('/api/v1/private?x=%00').send({ name: 'a' }),
      request(server)
        .post('/api/v1/private')
        .send({ name: 'x', pad: 'y'.repeat(70_000) }),
    ];
    for (const res of await Promise.all(cases)) expectProblem(res, 401, 'unauthenticated');
  });

  it('answers the input error after the session check passes, and on unknown routes', async () => {
    expectProblem(
      await request(server).post('/api/v1/private').set('X-Test-User', 'u').set('Content-Type', 'application/json').send('{bad'),
      400,
      'validation_failed',
    );
    expectProblem(
      await request(server)
        .post('/api/v1/private')
        .set('X-Test-User', 'u')
        .send({ name: 'x', pad: 'y'.repeat(70_000) }),
      413,
      'payload_too_large',
    );
    expectProblem(await request(server).post('/api/v1/nowhere').set('Content-Type', 'application/json').send('{bad'), 400, 'validation_failed');
    expectProblem(await request(server).get('/api/v1/nowhere%00'), 400, 'validation_failed');
    expect((await request(server).post('/api/v1/private').set('X-Test-User', 'u').send({ name: 'fine' })).status).to.equal(200);
  });

  it('hides an unexpected error behind 500 internal_error', async () => {
    const res = await request(server).get('/api/v1/boom');
    expectProblem(res, 500, 'internal_error');
    expect(JSON.stringify(res.body)).to.not.contain('secret internal detail');
  });

  it('maps each error class to its status, code, type and headers', () => {
    const cases: [Error, number, string][] = [
      [new InputError('wrong_current_password', 'no'), 400, 'wrong_current_password'],
      [new AuthenticationError(), 401, 'unauthenticated'],
      [new NotAllowedError(), 403, 'forbidden'],
      [new NotFoundError(), 404, 'not_found'],
      [new ConflictError('already_member', 'x'), 409, 'already_member'],
      [new LockedError(), 423, 'account_locked'],
      [new UpgradeRequiredError('old'), 426, 'app_version_unsupported'],
      [new TooManyRequestsError('rate_limited', 'slow', 2.2), 429, 'rate_limited'],
      [new ServiceUnavailableError(), 503, 'service_unavailable'],
      [Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }), 503, 'service_unavailable'],
    ];
    for (const [err, status, code] of cases) {
      const p = toProblem(err, { traceId: 't', instance: '/x' });
      expect(p.status, code).to.equal(status);
      expect(p.body.code).to.equal(code);
      expect(p.body.traceId).to.equal('t');
      expect(p.body.type).to.equal(status === 426 ? 'app-version-unsupported' : 'about:blank');
    }
    expect(toProblem(new TooManyRequestsError('rate_limited', 'x', 2.2), { traceId: 't' }).headers['Retry-After']).to.equal('3');
    const until = new Date('2026-11-23T10:00:00Z');
    expect(toProblem(new TooManyRequestsError('ai_paused', 'x', until), { traceId: 't' }).headers['Retry-After']).to.equal('Mon, 23 Nov 2026 10:00:00 GMT');
    expect(toProblem(new TooManyRequestsError('quota_exceeded', 'x'), { traceId: 't' }).headers).to.not.have.property('Retry-After');
  });

  it('answers a thrown HttpError from a handler with its own code and headers', async () => {
    const api = new ApiRouter();
    api.route({ method: 'get', path: '/api/v1/slow', operationId: 'slow', summary: 's', responses: { 200: { description: 'x' } } }, () => {
      throw new TooManyRequestsError('rate_limited', 'slow down', 30);
    });
    const res = await request(app([api])).get('/api/v1/slow');
    expectProblem(res, 429, 'rate_limited');
    expect(res.headers['retry-after']).to.equal('30');
  });
});
