import { expect } from 'chai';
import { BaseModel, declareRead, standaloneRead } from '../../db/src/index.js';
import { createTestDatabase, type TestDatabase } from '../../test-support/src/index.js';
import { loadStandalone, newRequestContext, preparedQuery, runWithContext } from '../src/index.js';

class Thing extends BaseModel {
  static override tableName = 'standalone_things';
  static override timestamps = ['createdAt'];
}

const H = '00000000-0000-4000-8000-000000000001';
const T1 = '00000000-0000-4000-8000-0000000000a1';

const thingRead = declareRead({
  name: 'test_thing',
  model: Thing,
  scope: { household: 'householdId' },
  arg: { column: 'id', format: 'uuid' },
  fields: ['id', 'createdAt'],
});
const thingOrNone = declareRead({ ...thingRead, name: 'test_thing_or_none', absentIsAnswer: true });
const thingsRead = declareRead({
  name: 'test_things',
  model: Thing,
  scope: { household: 'householdId' },
  fields: ['id'],
  list: { orderBy: [{ column: 'id' }] },
});

describe('loadStandalone: a declared read the kernel did not lend, as a statement of its own', () => {
  let db: TestDatabase;

  before(async () => {
    db = await createTestDatabase();
    await db.knex.raw('create table standalone_things (id uuid primary key, household_id uuid not null, created_at timestamptz not null)');
    await db.knex('standaloneThings').insert({ id: T1, householdId: H, createdAt: '2026-01-02T03:04:05.678901Z' });
  });
  after(() => db.destroy());

  it("answers the statement's value, counted as one query of the request", async () => {
    const ctx = newRequestContext('test');
    const row = await runWithContext(ctx, () =>
      loadStandalone<{ id: string; createdAt: string }>(db.knex, standaloneRead(thingRead), { household: H, arg: T1 }),
    );
    expect(row).to.deep.equal({ id: T1, createdAt: '2026-01-02T03:04:05.678Z' });
    expect(ctx.db.queries).to.equal(1);
    expect(await loadStandalone(db.knex, standaloneRead(thingsRead), { household: H })).to.deep.equal([{ id: T1 }]);
  });

  it('answers null for a single read without its row, false where absence is an answer, [] for a list without rows', async () => {
    const other = '00000000-0000-4000-8000-0000000000a2';
    expect(await loadStandalone(db.knex, standaloneRead(thingRead), { household: H, arg: other })).to.equal(null);
    expect(await loadStandalone(db.knex, standaloneRead(thingOrNone), { household: H, arg: other })).to.equal(false);
    expect(await loadStandalone(db.knex, standaloneRead(thingsRead), { household: other })).to.deep.equal([]);
  });

  it("reports its outcome through knex's own query events, as knex's queries do (the outage log listens to them)", async () => {
    const heard: string[] = [];
    const onResponse = () => heard.push('response');
    const onError = (err: Error) => heard.push(`error: ${err.message}`);
    db.knex.on('query-response', onResponse).on('query-error', onError);
    try {
      await preparedQuery(db.knex, { name: 'test_events_ok', text: 'select 1 as one', values: [] });
      await preparedQuery(db.knex, { name: 'test_events_bad', text: 'select 1/0 as none', values: [] }).catch(() => undefined);
    } finally {
      db.knex.off('query-response', onResponse).off('query-error', onError);
    }
    expect(heard).to.deep.equal(['response', 'error: division by zero']);
  });

  it('runs inside the transaction it is given', async () => {
    const T2 = '00000000-0000-4000-8000-0000000000a3';
    const trx = await db.knex.transaction();
    try {
      await trx('standaloneThings').insert({ id: T2, householdId: H, createdAt: '2026-01-02T03:04:05Z' });
      expect(await loadStandalone(trx, standaloneRead(thingsRead), { household: H })).to.deep.equal([{ id: T1 }, { id: T2 }]);
      expect(await loadStandalone(db.knex, standaloneRead(thingsRead), { household: H })).to.deep.equal([{ id: T1 }]);
    } finally {
      await trx.rollback();
    }
  });
});
