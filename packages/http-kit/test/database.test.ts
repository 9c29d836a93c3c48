import { expect } from 'chai';
import request from 'supertest';
import { createKnex } from '../../db/src/index.js';
import { createTestDatabase, type TestDatabase } from '../../test-support/src/index.js';
import { instrumentKnex } from '../src/index.js';
import { app, demoRouter } from './helpers.js';

describe('database timing and outages', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(() => db.destroy());

  it('counts each request’s own queries into Server-Timing, also under concurrency', async () => {
    const server = app([demoRouter(db.knex)]);
    const answers = await Promise.all(Array.from({ length: 8 }, () => request(server).get('/api/v1/two-queries').set('X-Diagnostics', '1')));
    for (const res of answers) {
      expect(res.status).to.equal(200);
      expect(res.headers['server-timing']).to.match(/db;dur=[\d.]+;desc="2 queries", first;dur=[\d.]+$/);
      const d = JSON.parse(res.headers['x-diagnostics'] ?? '{}');
      expect(d.db.queries).to.equal(2);
      expect(d.db.ms).to.be.greaterThan(5);
      expect(d.steps.map((s: { name: string }) => s.name)).to.deep.equal(['first']);
    }
  });

  it('answers 503 service_unavailable when the database is down', async () => {
    const dead = instrumentKnex(createKnex('postgres://postgres@127.0.0.1:1/none', { acquireTimeoutMs: 500 }));
    const res = await request(app([demoRouter(dead)])).get('/api/v1/two-queries');
    await dead.destroy();
    expect(res.status).to.equal(503);
    expect(res.body.code).to.equal('service_unavailable');
  });
});
