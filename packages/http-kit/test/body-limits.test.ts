import { expect } from 'chai';
import request from 'supertest';
import { jsonNestsDeeperThan, MAX_JSON_DEPTH } from '../src/middleware.js';
import { app, demoRouter } from './helpers.js';

describe('JSON nesting limit', () => {
  const server = app([demoRouter()]);
  const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

  it(`answers 400 validation_failed for a body nested deeper than ${MAX_JSON_DEPTH} levels, even thousands deep, without a 5xx`, async () => {
    for (const levels of [MAX_JSON_DEPTH + 1, 5000, 20000]) {
      const body = `{"name":${nested(levels)}}`;
      const res = await request(server).post('/api/v1/things').set('Content-Type', 'application/json').send(body);
      expect(res.status, `${levels} levels`).to.equal(400);
      expect(res.body.code).to.equal('validation_failed');
      expect(res.body.type).to.equal('about:blank');
      expect(res.body.errors).to.deep.equal([{ field: 'body', message: `nests deeper than ${MAX_JSON_DEPTH} levels`, in: 'body' }]);
    }
  });

  it('accepts nesting up to the limit (the schema decides the rest)', async () => {
    const res = await request(server)
      .post('/api/v1/things')
      .set('Content-Type', 'application/json')
      .send(`{"name":"x","tags":${nested(MAX_JSON_DEPTH - 1)}}`);
    expect(res.status).to.not.equal(500);
    expect(res.body.errors?.[0]?.message ?? '').to.not.match(/nests deeper/);
  });

  it('counts only brackets outside strings, and escaped quotes do not end a string', () => {
    const text = (s: string) => new TextEncoder().encode(s);
    expect(jsonNestsDeeperThan(text(`{"a":"${'['.repeat(100)}"}`), 2)).to.equal(false);
    expect(jsonNestsDeeperThan(text(`{"a":"\\"${'{'.repeat(100)}"}`), 2)).to.equal(false);
    expect(jsonNestsDeeperThan(text('[[[1]]]'), 3)).to.equal(false);
    expect(jsonNestsDeeperThan(text('[[[[1]]]]'), 3)).to.equal(true);
  });
});
