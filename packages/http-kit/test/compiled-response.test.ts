import { expect } from 'chai';
import request from 'supertest';
import { ApiRouter } from '../src/index.js';
import { app } from './helpers.js';

const Item = {
  type: 'object',
  required: ['id', 'when', 'note', 'tags', 'count'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    when: { type: 'string', format: 'date' },
    note: { type: ['string', 'null'] },
    tags: { type: 'array', items: { type: 'string' } },
    count: { type: 'integer' },
    nested: { type: 'object', properties: { a: { type: 'string' } } },
    // A union (as a rule's payload): written as JSON.stringify writes it, whichever branch it is.
    choice: {
      oneOf: [
        { type: 'object', required: ['kind', 'n'], properties: { kind: { const: 'A' }, n: { type: 'integer' } } },
        {
          type: 'object',
          required: ['kind', 'time'],
          properties: { kind: { const: 'B' }, time: { type: 'string' }, days: { type: 'array', items: { type: 'string' } } },
        },
      ],
    },
  },
} as const;
const Page = {
  type: 'object',
  required: ['items', 'next', 'total'],
  properties: { items: { type: 'array', items: Item }, next: { type: ['string', 'null'] }, total: { type: 'null' } },
} as const;

const bodies: unknown[] = [
  { items: [], next: null, total: null },
  {
    items: [
      {
        id: '00000000-0000-4000-8000-000000000001',
        when: '2026-12-01',
        note: 'quote " back\\slash \u0000 \u2028 é 🍲',
        tags: ['a', 'b'],
        count: 3,
        nested: { a: 'x', b: 2 },
        choice: { kind: 'B', days: ['Mon', 'Tue'], time: '18:00', n: 1.5 },
      },
      {
        id: '00000000-0000-4000-8000-000000000002',
        when: '2026-12-02',
        note: null,
        tags: [],
        count: 0,
        choice: { kind: 'A', n: 2 },
        unnamed: { deep: [1, 'two', null] },
      },
    ],
    next: 'cursor"1',
    total: null,
    extra: true,
  },
];

describe('compiled response serializers (compiledResponse)', () => {
  let turn = 0;
  const api = new ApiRouter();
  api.route(
    {
      method: 'get',
      path: '/api/v1/page',
      operationId: 'page',
      summary: 'page',
      compiledResponse: true,
      responses: { 200: { description: 'page', schema: Page } },
    },
    (_req, res) => {
      res.json(bodies[turn++ % bodies.length]);
    },
  );
  api.route(
    {
      method: 'get',
      path: '/api/v1/teapot',
      operationId: 'teapot',
      summary: 'teapot',
      compiledResponse: true,
      responses: { 200: { description: 'page', schema: Page } },
    },
    (_req, res) => {
      res.status(418).json({ not: 'a page' });
    },
  );
  api.route(
    {
      method: 'get',
      path: '/api/v1/misfit',
      operationId: 'misfit',
      summary: 'misfit',
      compiledResponse: true,
      responses: { 200: { description: 'page', schema: Page } },
    },
    (_req, res) => {
      // `id` is a string by the schema: the serializer would write "" for null.
      res.json({ items: [{ ...(bodies[1] as { items: object[] }).items[1], id: null }], next: null, total: null });
    },
  );
  const server = app([api]);

  it('writes exactly what JSON.stringify writes, fields the schema does not name included', async () => {
    for (const body of bodies) {
      const res = await request(server).get('/api/v1/page');
      expect(res.status).to.equal(200);
      expect(res.headers['content-type']).to.equal('application/json; charset=utf-8');
      expect(res.text).to.equal(JSON.stringify(body));
    }
  });

  it('answers HEAD with the same head and no body', async () => {
    turn = 1;
    const res = await request(server).head('/api/v1/page');
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.equal('application/json; charset=utf-8');
    expect(Number(res.headers['content-length'])).to.equal(Buffer.byteLength(JSON.stringify(bodies[1])));
    expect(res.text ?? '').to.equal('');
  });

  it('fails an answer the schema would coerce (outside production), instead of writing another value', async () => {
    const res = await request(server).get('/api/v1/misfit');
    expect(res.status).to.equal(500);
    expect(res.text).to.not.include('"id":""');
  });

  it('leaves a status without a compiled serializer to Express', async () => {
    const res = await request(server).get('/api/v1/teapot');
    expect(res.status).to.equal(418);
    expect(res.text).to.equal('{"not":"a page"}');
  });
});
