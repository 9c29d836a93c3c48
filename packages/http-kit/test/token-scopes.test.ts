import { expect } from 'chai';
import request from 'supertest';
import { ApiRouter, buildOpenApiDocument, TOKEN_SCOPES } from '../src/index.js';
import { hasBearer } from '../src/middleware.js';
import { app } from './helpers.js';

/** Routes declaring what a token needs; the test principal carries scopes when `x-test-scopes` is sent. */
function scopedRouter(): ApiRouter {
  const api = new ApiRouter({ tags: ['Demo'] });
  const ok = { 200: { description: 'ok' } };
  api.route({ method: 'get', path: '/api/v1/read', operationId: 'read', summary: 'read', auth: true, tokenScope: 'events:read', responses: ok }, (_req, res) =>
    res.json({ ok: true }),
  );
  api.route({ method: 'get', path: '/api/v1/who', operationId: 'who', summary: 'who', auth: true, tokenScope: 'any', responses: ok }, (_req, res) =>
    res.json({ ok: true }),
  );
  api.route(
    {
      method: 'post',
      path: '/api/v1/closed',
      operationId: 'closed',
      summary: 'closed',
      auth: true,
      body: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } },
      responses: ok,
    },
    (_req, res) => res.json({ ok: true }),
  );
  return api;
}

describe('token scopes: the gate every route runs first, and the document', () => {
  const routers = [scopedRouter()];
  const server = app(routers, {
    authenticate: [
      (req, _res, next) => {
        const user = req.get('x-test-user');
        const scopes = req.get('x-test-scopes');
        if (user) req.principal = { userId: user, ...(scopes !== undefined ? { tokenId: 't', scopes: scopes ? scopes.split(',') : [] } : {}) };
        next();
      },
    ],
  });

  it('lets a session through everywhere, a token only where the route names one of its scopes (or any)', async () => {
    for (const path of ['/api/v1/read', '/api/v1/who']) expect((await request(server).get(path).set('x-test-user', 'u')).status, path).to.equal(200);
    expect((await request(server).get('/api/v1/read').set('x-test-user', 'u').set('x-test-scopes', 'events:read,rules:read')).status).to.equal(200);
    expect((await request(server).get('/api/v1/who').set('x-test-user', 'u').set('x-test-scopes', 'rules:read')).status).to.equal(200);
    const refused = await request(server).get('/api/v1/read').set('x-test-user', 'u').set('x-test-scopes', 'events:write');
    expect(refused.status).to.equal(403);
    expect(refused.body.code).to.equal('insufficient_scope');
  });

  it('answers 403 insufficient_scope before validating the input of a route that names no scope', async () => {
    const res = await request(server).post('/api/v1/closed').set('x-test-user', 'u').set('x-test-scopes', TOKEN_SCOPES.join(',')).send({ n: 'not a number' });
    expect(res.status).to.equal(403);
    expect(res.body.code).to.equal('insufficient_scope');
    expect((await request(server).post('/api/v1/closed').set('x-test-user', 'u').send({ n: 'x' })).status).to.equal(400);
  });

  it('documents the bearer scheme and each operation’s scope (none: cookie only; any: an empty list)', () => {
    const doc = buildOpenApiDocument(
      { title: 't', version: '1' },
      routers.flatMap((r) => r.operations),
    ) as {
      paths: Record<string, Record<string, { security: unknown; responses: Record<string, unknown> }>>;
      components: { securitySchemes: Record<string, { type: string; scheme?: string }> };
    };
    expect(doc.components.securitySchemes.accessToken).to.include({ type: 'http', scheme: 'bearer' });
    expect(doc.paths['/api/v1/read']!.get!.security).to.deep.equal([{ sessionCookie: [] }, { accessToken: ['events:read'] }]);
    expect(doc.paths['/api/v1/who']!.get!.security).to.deep.equal([{ sessionCookie: [] }, { accessToken: [] }]);
    expect(doc.paths['/api/v1/closed']!.post!.security).to.deep.equal([{ sessionCookie: [] }]);
    expect(doc.paths['/api/v1/closed']!.post!.responses).to.have.property('403');
  });
});

describe('the cross-site origin guard and a bearer', () => {
  const routers = [scopedRouter()];
  const server = app(routers);

  it('does not apply the cookie rule to a request that carries Authorization: Bearer (judged by the bearer alone)', async () => {
    const post = () =>
      request(server).post('/api/v1/closed').set('x-test-user', 'u').set('Cookie', 'service_session=abc').set('Origin', 'https://evil.example');
    expect((await post().send({ n: 1 })).status).to.equal(403);
    expect((await post().set('Authorization', 'Bearer mp_pat_x').send({ n: 1 })).status).to.equal(200);
    // Another scheme is no bearer: the cookie rule holds.
    expect((await post().set('Authorization', 'Basic dTpw').send({ n: 1 })).status).to.equal(403);
  });

  it('recognises a bearer in any letter case, bare or with a token', () => {
    const req = (authorization?: string) => ({ headers: authorization === undefined ? {} : { authorization } }) as Parameters<typeof hasBearer>[0];
    expect([req('Bearer x'), req('bearer x'), req('BEARER'), req('Bearer\tx')].map(hasBearer)).to.deep.equal([true, true, true, true]);
    expect([req(), req('Basic x'), req('Bearerx'), req('')].map(hasBearer)).to.deep.equal([false, false, false, false]);
  });
});
