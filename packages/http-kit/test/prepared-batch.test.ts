import { expect } from 'chai';
import request from 'supertest';
import { createKnex } from '../../db/src/index.js';
import { createTestDatabase, type TestDatabase } from '../../test-support/src/index.js';
import { ApiRouter, instrumentKnex, type PreparedStatement } from '../src/index.js';
// Internal to http-kit (the kernel's RequestReads runs it): tested here through its module.
import { PreparedBatch } from '../src/knex-timing.js';
import { app } from './helpers.js';

interface Row {
  batch_index: number;
  key: string;
  value: string;
}

describe('PreparedBatch: the lookups of one turn in one statement', () => {
  let db: TestDatabase;
  /** Every statement the batch ran, with its keys. */
  let runs: string[][];
  const statementFor =
    (name = 'test_prepared_batch_lookup') =>
    (keys: readonly string[]): PreparedStatement => {
      runs.push([...keys]);
      return {
        name,
        text: `select q.batch_index::int as batch_index, t.key, t.value
                 from unnest($1::text[]) with ordinality as q(key, batch_index)
                 join batch_things t on t.key = q.key`,
        values: [keys],
      };
    };

  before(async () => {
    db = await createTestDatabase();
    await db.knex.schema.createTable('batch_things', (t) => {
      t.text('key').primary();
      t.text('value').notNullable();
    });
    await db.knex('batch_things').insert(Array.from({ length: 300 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })));
  });
  after(() => db.destroy());
  beforeEach(() => {
    runs = [];
  });

  it('answers the lookups asked for in one turn with one statement, each with only its own row (none: undefined)', async () => {
    const batch = new PreparedBatch<string, Row>(db.knex, { statement: statementFor() });
    const keys = ['k3', 'missing', 'k1', 'k3', 'k299'];
    const rows = await Promise.all(keys.map((k) => batch.load(k)));
    expect(runs).to.deep.equal([keys]);
    expect(rows.map((r) => r?.value)).to.deep.equal(['v3', undefined, 'v1', 'v3', 'v299']);
    // The same key asked twice gets a row of its own each time (nothing is shared between callers).
    expect(rows[0]).to.not.equal(rows[3]);
    // One alone is one statement too.
    expect((await batch.load('k7'))?.value).to.equal('v7');
    expect(runs).to.have.length(2);
  });

  it('lookups of different turns go in different statements; more than `max` in one turn in several', async () => {
    const batch = new PreparedBatch<string, Row>(db.knex, { statement: statementFor(), max: 100 });
    const first = batch.load('k1');
    await new Promise((resolve) => setImmediate(resolve));
    const second = batch.load('k2');
    expect((await first)?.value).to.equal('v1');
    expect((await second)?.value).to.equal('v2');
    expect(runs).to.deep.equal([['k1'], ['k2']]);

    runs = [];
    const many = Array.from({ length: 250 }, (_, i) => `k${i}`);
    const rows = await Promise.all(many.map((k) => batch.load(k)));
    expect(rows.map((r) => r?.value)).to.deep.equal(many.map((_, i) => `v${i}`));
    expect(runs.map((r) => r.length)).to.deep.equal([100, 100, 50]);
  });

  it('a statement that fails fails every lookup it carried, and the next turn runs again', async () => {
    let fail = true;
    const batch = new PreparedBatch<string, Row>(db.knex, {
      statement: (keys) =>
        fail ? { name: 'test_prepared_batch_broken', text: 'select * from no_such_table where $1::text[] is not null', values: [keys] } : statementFor()(keys),
    });
    const results = await Promise.allSettled(['k1', 'k2', 'k3'].map((k) => batch.load(k)));
    expect(results.map((r) => r.status)).to.deep.equal(['rejected', 'rejected', 'rejected']);
    expect(String((results[0] as PromiseRejectedResult).reason)).to.match(/no_such_table/);
    fail = false;
    expect((await batch.load('k4'))?.value).to.equal('v4');

    const throwing = new PreparedBatch<string, Row>(db.knex, {
      statement: () => {
        throw new Error('cannot build');
      },
    });
    const thrown = await Promise.allSettled([throwing.load('a'), throwing.load('b')]);
    expect(thrown.map((r) => r.status)).to.deep.equal(['rejected', 'rejected']);
  });

  it('parallel requests share statements, and each counts the one it waited for as its own query', async () => {
    const knex = instrumentKnex(createKnex(db.url));
    try {
      const batch = new PreparedBatch<string, Row>(knex, { statement: statementFor('test_prepared_batch_http') });
      let arrived = 0;
      let open = () => {};
      const gate = new Promise<void>((resolve) => {
        open = resolve;
      });
      const api = new ApiRouter();
      api.route(
        { method: 'get', path: '/api/v1/things/{key}', operationId: 'thing', summary: 'thing', responses: { 200: { description: 'ok' } } },
        async (req, res) => {
          // The requests wait for each other, so they all ask in one turn, as requests a busy
          // instance parsed in one turn do.
          arrived++;
          if (arrived === 30) open();
          await gate;
          const row = await batch.load(req.params.key as string);
          res.json({ value: row?.value ?? null });
        },
      );
      const server = app([api]).listen(0);
      try {
        const agent = request(server);
        const answers = await Promise.all(
          Array.from({ length: 30 }, (_, i) =>
            agent
              .get(`/api/v1/things/k${i}`)
              .set('X-Diagnostics', '1')
              .then((r) => r),
          ),
        );
        answers.forEach((res, i) => {
          expect(res.status).to.equal(200);
          expect(res.body).to.deep.equal({ value: `v${i}` });
          const d = JSON.parse(res.headers['x-diagnostics'] ?? '{}');
          expect(d.db.queries, `request ${i}`).to.equal(1);
          expect(d.db.ms).to.be.greaterThan(0);
        });
        // One statement read every key, once.
        expect(runs).to.have.length(1);
        expect([...runs[0]!].sort()).to.deep.equal(Array.from({ length: 30 }, (_, i) => `k${i}`).sort());
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    } finally {
      await knex.destroy();
    }
  });
});
