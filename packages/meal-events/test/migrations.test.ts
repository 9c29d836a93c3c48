import { rollbackMigrations, runMigrations } from '@svc/db';
import { createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import { migrations } from '../src/index.js';

describe('meal-events migrations', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase([]);
  });
  after(() => db.destroy());

  it('run up, down and up again, with the ordering index in place', async () => {
    await runMigrations(db.knex, [migrations]);
    const idx = await db.knex.raw(`select indexdef from pg_indexes where tablename = 'meal_events' and indexname = 'meal_events_household_order_idx'`);
    expect(idx.rows[0].indexdef).to.match(/\(household_id, date, serving_time, id\)/);
    await rollbackMigrations(db.knex, [migrations]);
    expect(await db.knex.schema.hasTable('meal_events')).to.equal(false);
    await runMigrations(db.knex, [migrations]);
    expect(await db.knex.schema.hasTable('meal_events')).to.equal(true);
  });
});
