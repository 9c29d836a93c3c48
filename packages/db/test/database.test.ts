import { expect } from 'chai';
import type { Knex } from 'knex';
import { createTestDatabase, type TestDatabase } from '../../test-support/src/index.js';
import { apiColumnsSql, BaseModel, createKnex, databaseAnswers, type MigrationSet, rollbackMigrations, runMigrations } from '../src/index.js';
import { jsonRowsSql } from '../src/model.js';

describe('@svc/db', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(() => db.destroy());

  it('maps camelCase fields to snake_case columns', async () => {
    await db.knex.schema.createTable('mapped', (t) => {
      t.increments('id');
      t.string('time_zone_id');
    });
    await db.knex('mapped').insert({ timeZoneId: 'Europe/Oslo' });
    expect(await db.knex('mapped').first()).to.deep.equal({ id: 1, timeZoneId: 'Europe/Oslo' });
  });

  it('jsonRowsSql answers the rows as an array in order, [] for none', async () => {
    await db.knex.schema.createTable('json_rows', (t) => {
      t.integer('id');
      t.text('owner_name');
    });
    await db.knex('json_rows').insert([
      { id: 2, ownerName: 'b' },
      { id: 1, ownerName: 'a' },
      { id: 3, ownerName: 'other' },
    ]);
    const columns = apiColumnsSql('t', ['id', 'ownerName']);
    const many = async (where: string) => (await db.knex.raw(`select ${jsonRowsSql('json_rows t', columns, where, 't.id')} as j`)).rows[0].j;
    expect(await many("t.owner_name <> 'other'")).to.deep.equal([
      { id: 1, ownerName: 'a' },
      { id: 2, ownerName: 'b' },
    ]);
    expect(await many('false')).to.deep.equal([]);
  });

  it('apiColumnsSql selects columns by their camelCase names, timestamps as the API writes them (milliseconds cut)', async () => {
    await db.knex.schema.createTable('api_columns', (t) => {
      t.integer('id');
      t.text('time_zone_id');
      t.timestamp('updated_at', { useTz: true, precision: 6 });
    });
    await db.knex.raw(`insert into api_columns values (1, 'Europe/Oslo', '2026-03-04 05:06:07.999999+00')`);
    const sql = apiColumnsSql('a', ['id', 'timeZoneId', 'updatedAt'], ['updatedAt']);
    const { rows } = await db.knex.raw(`select row_to_json(r) as j from (select ${sql} from api_columns a) r`);
    expect(rows[0].j).to.deep.equal({ id: 1, timeZoneId: 'Europe/Oslo', updatedAt: '2026-03-04T05:06:07.999Z' });
  });

  it("apiColumnsSql writes a model's apiFormats: dates, times to the minute, a jsonb array's objects with only their declared members in order", async () => {
    await db.knex.schema.createTable('api_formats', (t) => {
      t.date('day');
      t.time('at');
      t.jsonb('people');
    });
    // jsonb sorts keys by length and keeps members the API never answers.
    const people = [
      { name: 'Ä "b"\n', memberId: null, formerMemberId: 'x' },
      { memberId: 'm', name: 'z' },
    ];
    await db.knex('api_formats').insert([
      { day: '2026-03-04', at: '07:05:59', people: JSON.stringify(people) },
      { day: '1999-12-31', at: '23:00', people: '[]' },
    ]);
    class Row extends BaseModel {
      static override tableName = 'api_formats';
      static override apiFields = ['day', 'at', 'people'];
      static override apiFormats = { day: 'date', at: 'minutes', people: { members: ['memberId', 'name'] } } as const;
      toApi() {
        return this.apiObject();
      }
    }
    const { rows } = await db.knex.raw(`select row_to_json(r)::text as j from (select ${Row.apiColumnsSql('a')} from api_formats a order by a.day desc) r`);
    expect(rows.map((r: { j: string }) => r.j)).to.deep.equal([
      JSON.stringify({ day: '2026-03-04', at: '07:05', people: people.map((p) => ({ memberId: p.memberId, name: p.name })) }),
      JSON.stringify({ day: '1999-12-31', at: '23:00', people: [] }),
    ]);
    // The instance's side of the same declaration: the fields in order, null for one not held, the members picked.
    expect(JSON.stringify(Row.fromJson({ people, at: '07:05', extra: 1 }).toApi())).to.equal(
      JSON.stringify({ day: null, at: '07:05', people: people.map((p) => ({ memberId: p.memberId, name: p.name })) }),
    );
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

  it('closes a connection whose query timed out on the client, so a transaction left open there never swallows the next write', async () => {
    await db.knex.schema.createTable('leak', (t) => t.integer('id'));
    // transactionPooling: no server-side statement_timeout, so only the client gives up (as with a hung server).
    const k = createKnex(db.url, { poolMax: 1, statementTimeoutMs: 300, transactionPooling: true });
    try {
      const pid = async () => (await k.raw('select pg_backend_pid() as pid')).rows[0].pid as number;
      const before = await pid();
      let failed: unknown;
      try {
        await k.transaction(async (trx) => {
          await trx('leak').insert({ id: 1 });
          await trx.raw('select pg_sleep(4)');
        });
      } catch (err) {
        failed = err;
      }
      expect(failed, 'the transaction failed').to.be.instanceOf(Error);
      // Before the fix this connection went back to the pool inside the open transaction (its
      // ROLLBACK timed out behind the sleep): the insert below answered success and was never committed.
      await k('leak').insert({ id: 2 });
      expect(await db.knex('leak').select('id')).to.deep.equal([{ id: 2 }]);
      expect(await pid()).to.not.equal(before);
    } finally {
      await k.destroy();
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
});
