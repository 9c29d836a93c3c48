import { expect } from 'chai';
import request from 'supertest';
import { ApiRouter, buildOpenApiDocument } from '../src/index.js';
import { jsonBody } from '../src/middleware.js';
import { app, demoRouter } from './helpers.js';

/** A provider callback that declares a form body (Sign in with Apple posts one cross-site). */
function callbackRouter(): ApiRouter {
  const api = new ApiRouter({ tags: ['Demo'] });
  api.route<{ code?: string; state?: string }>(
    {
      method: 'post',
      path: '/api/v1/auth/callback/demo',
      operationId: 'demoCallback',
      summary: 'form_post callback',
      bodyContentType: 'application/x-www-form-urlencoded',
      body: { type: 'object', properties: { code: { type: 'string' }, state: { type: 'string' } } },
      responses: { 302: { description: 'onwards' } },
    },
    (req, res) => {
      res.json({ got: req.input.body });
    },
  );
  return api;
}

describe('form bodies: only on routes that declare them', () => {
  const server = app([demoRouter(), callbackRouter()]);

  it('parses a urlencoded form on the declaring route, cross-site Origin included when no session cookie rides along', async () => {
    const res = await request(server).post('/api/v1/auth/callback/demo').set('Origin', 'https://appleid.apple.com').type('form').send('code=abc&state=xyz');
    expect(res.status).to.equal(200);
    expect(res.body.got).to.deep.equal({ code: 'abc', state: 'xyz' });
  });

  it('still takes JSON on the declaring route', async () => {
    const res = await request(server).post('/api/v1/auth/callback/demo').send({ code: 'j' });
    expect(res.status).to.equal(200);
    expect(res.body.got).to.deep.equal({ code: 'j' });
  });

  it('refuses forms on every other route with 400 validation_failed, the handler never running', async () => {
    const res = await request(server).post('/api/v1/things').type('form').send('name=x');
    expect(res.status).to.equal(400);
    expect(res.body.code).to.equal('validation_failed');
  });

  it('refuses other media types on the declaring route (multipart, text) and forms on another method or a near path', async () => {
    const multipart = await request(server).post('/api/v1/auth/callback/demo').set('Content-Type', 'multipart/form-data; boundary=x').send('--x--');
    expect(multipart.status).to.equal(400);
    const text = await request(server).post('/api/v1/auth/callback/demo').set('Content-Type', 'text/plain').send('code=abc');
    expect(text.status).to.equal(400);
    const near = await request(server).post('/api/v1/auth/callback/demo2').type('form').send('code=abc');
    expect(near.status).to.equal(400);
    expect(near.body.code).to.equal('validation_failed');
  });

  it('refuses a NUL in a form value', async () => {
    const res = await request(server).post('/api/v1/auth/callback/demo').type('form').send('code=a%00b');
    expect(res.status).to.equal(400);
    expect(res.body.code).to.equal('validation_failed');
  });

  it('keeps the cross-site origin guard for a form that carries the session cookie', async () => {
    const res = await request(server)
      .post('/api/v1/auth/callback/demo')
      .set('Cookie', 'service_session=abc')
      .set('Origin', 'https://evil.example')
      .type('form')
      .send('code=abc');
    expect(res.status).to.equal(403);
    expect(res.body.code).to.equal('forbidden');
  });

  it('documents the form media type in the OpenAPI document', () => {
    const doc = buildOpenApiDocument({ title: 't', version: '1' }, callbackRouter().operations) as {
      paths: Record<string, Record<string, { requestBody: { content: Record<string, unknown> } }>>;
    };
    expect(Object.keys(doc.paths['/api/v1/auth/callback/demo']!.post!.requestBody.content)).to.deep.equal(['application/x-www-form-urlencoded']);
  });

  it('accepts only literal paths as form routes', () => {
    expect(() => jsonBody({ formRoutes: [{ method: 'post', path: '/api/v1/things/{id}' }] })).to.throw(/literal path/);
    expect(() => jsonBody({ formRoutes: [{ method: 'post', path: '/api/v1/things/:id' }] })).to.throw(/literal path/);
  });
});
