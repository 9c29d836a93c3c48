import { expect } from 'chai';
import request from 'supertest';
import { ApiRouter, withStringLimits } from '../src/index.js';
import { DEFAULT_MAX_STRING, PartValidator } from '../src/validation.js';
import { app, demoRouter } from './helpers.js';

const ID = '8c9c5a4e-7a54-4a8e-9a43-1f3c8d7e6b5a';

describe('request validation', () => {
  const server = app([demoRouter()]);

  it('names a missing required field', async () => {
    const res = await request(server).post('/api/v1/things').send({});
    expect(res.status).to.equal(400);
    expect(res.body.code).to.equal('validation_failed');
    expect(res.body.errors).to.deep.include({ field: 'name', message: 'is required', in: 'body' });
    expect(res.body.detail).to.contain('name');
  });

  it('refuses null where none is allowed, and a wrong type', async () => {
    const res = await request(server).post('/api/v1/things').send({ name: null, tags: 'x' });
    expect(res.body.code).to.equal('validation_failed');
    expect(res.body.errors.map((e: { field: string }) => e.field)).to.include.members(['name', 'tags']);
  });

  it('answers value_too_long when only lengths fail', async () => {
    const res = await request(server)
      .post('/api/v1/things')
      .send({ name: 'x'.repeat(11) });
    expect(res.status).to.equal(400);
    expect(res.body.code).to.equal('value_too_long');
    expect(res.body.errors[0].field).to.equal('name');
  });

  it('answers validation_failed when a length and a shape both fail', async () => {
    const res = await request(server)
      .post('/api/v1/things')
      .send({ name: 'x'.repeat(11), tags: 3 });
    expect(res.body.code).to.equal('validation_failed');
  });

  it('limits strings without a limit to the default, inside arrays too', async () => {
    const long = 'x'.repeat(DEFAULT_MAX_STRING + 1);
    const res = await request(server)
      .post('/api/v1/things')
      .send({ name: 'ok', tags: ['fine', long] });
    expect(res.body.code).to.equal('value_too_long');
    expect(res.body.errors[0].field).to.equal('tags[1]');
    expect(
      (
        await request(server)
          .post('/api/v1/things')
          .send({ name: 'ok', tags: ['x'.repeat(DEFAULT_MAX_STRING)] })
      ).status,
    ).to.equal(201);
    expect(
      (
        await request(server)
          .post('/api/v1/things')
          .send({ name: 'ok', note: 'x'.repeat(2000) })
      ).status,
    ).to.equal(201);
  });

  it('answers value_too_long for an over-long value of an enumeration or a format', async () => {
    const res = await request(server)
      .post('/api/v1/things')
      .send({ name: 'ok', kind: 'x'.repeat(201) });
    expect(res.status).to.equal(400);
    expect(res.body.code).to.equal('value_too_long');
    const bad = await request(server).post('/api/v1/things').send({ name: 'ok', kind: 'neither' });
    expect(bad.body.code).to.equal('validation_failed');
    const both = await request(server)
      .post('/api/v1/things')
      .send({ name: 'ok', kind: 'x'.repeat(201), tags: 3 });
    expect(both.body.code).to.equal('validation_failed');
  });

  it("lets an operation name a field's own code", async () => {
    const res = await request(server)
      .post('/api/v1/things')
      .send({ name: 'ok', nick: 'x'.repeat(201) });
    expect(res.body.code).to.equal('nick_too_long');
  });

  it('ignores unknown members', async () => {
    const res = await request(server)
      .post('/api/v1/things')
      .send({ name: 'ok', extra: { deep: true } });
    expect(res.status).to.equal(201);
  });

  it('coerces and defaults the query, and checks path formats', async () => {
    const ok = await request(server).get(`/api/v1/things/${ID}?limit=7`).set('X-Test-User', 'u');
    expect(ok.body).to.deep.equal({ id: ID, limit: 7, from: null });
    expect((await request(server).get(`/api/v1/things/${ID}`).set('X-Test-User', 'u')).body.limit).to.equal(50);
    // A path id (format uuid) reaches the handler lower-cased: the same id in any letter case.
    expect((await request(server).get(`/api/v1/things/${ID.toUpperCase()}`).set('X-Test-User', 'u')).body.id).to.equal(ID);
    for (const q of ['limit=0', 'limit=101', 'limit=abc', 'limit=1.5', 'from=2026-02-30', 'from=yesterday', 'limit=1&limit=2']) {
      const res = await request(server).get(`/api/v1/things/${ID}?${q}`).set('X-Test-User', 'u');
      expect(res.status, q).to.equal(400);
      expect(res.body.code).to.equal('validation_failed');
      expect(res.body.errors[0].in).to.equal('query');
    }
    const bad = await request(server).get('/api/v1/things/not-a-uuid').set('X-Test-User', 'u');
    expect(bad.status).to.equal(400);
    expect(bad.body.errors[0]).to.include({ field: 'id', in: 'path' });
  });

  it('answers 401 unauthenticated with no-store on an auth route without a principal, before validating', async () => {
    const res = await request(server).get('/api/v1/things/not-a-uuid');
    expect(res.status).to.equal(401);
    expect(res.body.code).to.equal('unauthenticated');
    const ok = await request(server).get(`/api/v1/things/${ID}`).set('X-Test-User', 'u');
    expect(ok.headers['cache-control']).to.equal('no-store');
  });

  it('adds the default limit only where a string has none', () => {
    const out = withStringLimits({
      type: 'object',
      properties: {
        a: { type: 'string' },
        b: { type: 'string', maxLength: 5 },
        c: { type: 'string', enum: ['x'] },
        d: { type: ['string', 'null'] },
        e: { type: 'string', format: 'uuid' },
      },
    }) as { properties: Record<string, { maxLength?: number }> };
    expect(out.properties.a!.maxLength).to.equal(DEFAULT_MAX_STRING);
    expect(out.properties.b!.maxLength).to.equal(5);
    expect(out.properties.c!.maxLength).to.equal(DEFAULT_MAX_STRING);
    expect(out.properties.d!.maxLength).to.equal(DEFAULT_MAX_STRING);
    expect(out.properties.e!.maxLength).to.equal(DEFAULT_MAX_STRING);
    const long = withStringLimits<Record<string, unknown>>({ type: 'string', enum: ['x'.repeat(300)] });
    expect(long.maxLength).to.equal(300);
  });
});

describe('validation answers in one round, in words', () => {
  const api = new ApiRouter();
  api.route(
    {
      method: 'post',
      path: '/api/v1/boxes/{boxId}',
      operationId: 'box',
      summary: 'box',
      params: { type: 'object', required: ['boxId'], properties: { boxId: { type: 'string', format: 'uuid' } } },
      query: { type: 'object', properties: { size: { type: 'integer', minimum: 1, maximum: 10 } } },
      body: {
        type: 'object',
        required: ['when', 'time', 'code'],
        properties: {
          when: { type: 'string', format: 'date' },
          time: { type: 'string', pattern: '^\\d{2}:\\d{2}$', examples: ['18:30'] },
          code: { type: 'string', minLength: 1 },
        },
      },
      responses: { 204: { description: 'ok' } },
    },
    (_req, res) => {
      res.status(204).end();
    },
  );
  const server = app([api]);

  it('names every failing field of path, query and body in one 400', async () => {
    const res = await request(server).post('/api/v1/boxes/not-a-uuid?size=99').send({ when: '2026-13-40', time: '7pm', code: '' });
    expect(res.status).to.equal(400);
    expect(res.body.code).to.equal('validation_failed');
    expect(res.body.errors).to.deep.equal([
      { field: 'boxId', message: 'must be an id (UUID)', in: 'path' },
      { field: 'size', message: 'must be 10 or less', in: 'query' },
      { field: 'when', message: 'must be a date (YYYY-MM-DD)', in: 'body' },
      { field: 'time', message: 'is not in the expected form such as 18:30', in: 'body' },
      { field: 'code', message: 'must not be empty', in: 'body' },
    ]);
    expect(res.body.detail).to.not.match(/\^|\\d|pattern/);
  });

  it('coerces a copy of the query and path, never the request’s own values (arrays included)', () => {
    const query = new PartValidator(
      { type: 'object', properties: { limit: { type: 'integer' }, tags: { type: 'array', items: { type: 'integer' } } } },
      'query',
    );
    const raw = Object.assign(Object.create(null), { limit: '5', tags: ['1', '2'] });
    expect(query.check(raw)).to.deep.equal({ limit: 5, tags: [1, 2] });
    expect(raw.limit).to.equal('5');
    expect(raw.tags).to.deep.equal(['1', '2']);
    const path = new PartValidator({ type: 'object', properties: { id: { type: 'string', format: 'uuid' } }, required: ['id'] }, 'path');
    const params = { id: ID.toUpperCase() };
    expect(path.check(params)).to.deep.equal({ id: ID });
    expect(params.id).to.equal(ID.toUpperCase());
    // Something deeper than strings (a parser of one's own) is cloned whole.
    const nested = { limit: '1', deep: { a: '1' } };
    const loose = new PartValidator({ type: 'object', properties: { limit: { type: 'integer' } } }, 'query');
    expect(loose.check(nested)).to.deep.equal({ limit: 1, deep: { a: '1' } });
    expect(nested.limit).to.equal('1');
  });
});
