import { expect } from 'chai';
import type { Knex } from 'knex';
import request from 'supertest';
import { createTestDatabase, type TestDatabase } from '../../test-support/src/index.js';
import { createKnex, databaseAnswers, type MigrationSet, rollbackMigrations, runMigrations } from '../src/index.js';
import { app, demoRouter } from './helpers.js';

describe('database kit', () => {
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

  it('maps camelCase fields to snake_case columns', async () => {
    await db.knex.schema.createTable('mapped', (t) => {
      t.increments('id');
      t.string('time_zone_id');
    });
    await db.knex('mapped').insert({ timeZoneId: 'Europe/Oslo' });
    expect(await db.knex('mapped').first()).to.deep.equal({ id: 1, timeZoneId: 'Europe/Oslo' });
  });

  it('runs each migration once when several instances migrate at the same moment, and rolls back', async () => {
    let ups = 0;
    const set: MigrationSet = {
      name: 'race',
      migrations: [
        {
          name: '001_a',
          up: async (k: Knex) => {
            ups += 1;
            await k.schema.createTable('race_a', (t) => t.increments('id'));
          },
          down: async (k: Knex) => {
            await k.schema.dropTable('race_a');
          },
        },
        {
          name: '002_b',
          up: async (k: Knex) => {
            ups += 1;
            await k.schema.createTable('race_b', (t) => t.increments('id'));
          },
          down: async (k: Knex) => {
            await k.schema.dropTable('race_b');
          },
        },
      ],
    };
    const instances = Array.from({ length: 4 }, () => createKnex(db.url, { poolMax: 3 }));
    try {
      const results = await Promise.all(instances.map((k) => runMigrations(k, [set])));
      expect(ups).to.equal(2);
      expect(results.flat().sort()).to.deep.equal(['race/001_a', 'race/002_b']);
      expect(await db.knex.schema.hasTable('race_b')).to.equal(true);
      await rollbackMigrations(db.knex, [set]);
      expect(await db.knex.schema.hasTable('race_a')).to.equal(false);
    } finally {
      await Promise.all(instances.map((k) => k.destroy()));
    }
  });

  it('tells whether the database answers, quickly when it does not', async () => {
    expect(await databaseAnswers(db.knex)).to.equal(true);
    const dead = createKnex('postgres://postgres@127.0.0.1:1/none', { acquireTimeoutMs: 500 });
    const started = Date.now();
    expect(await databaseAnswers(dead)).to.equal(false);
    expect(Date.now() - started).to.be.below(3000);
    await dead.destroy();
  });

  it('answers 503 service_unavailable when the database is down', async () => {
    const dead = createKnex('postgres://postgres@127.0.0.1:1/none', { acquireTimeoutMs: 500 });
    const res = await request(app([demoRouter(dead)])).get('/api/v1/two-queries');
    await dead.destroy();
    expect(res.status).to.equal(503);
    expect(res.body.code).to.equal('service_unavailable');
  });
});
