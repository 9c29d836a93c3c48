import { rollbackMigrations, runMigrations } from '@svc/db';
import { createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import { migrations } from '../src/index.js';

describe('meal-rules migrations', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase([migrations]);
  });
  after(async () => {
    await db.destroy();
  });

  it('go down and up again, leaving the table and its household index', async () => {
    await rollbackMigrations(db.knex, [migrations]);
    expect(await db.knex.schema.hasTable('meal_rules')).to.equal(false);
    await runMigrations(db.knex, [migrations]);
    expect(await db.knex.schema.hasTable('meal_rules')).to.equal(true);
    const indexes = await db.knex('pg_indexes').select('indexname').where({ tablename: 'meal_rules' });
    expect(indexes.map((r: { indexname: string }) => r.indexname)).to.include('meal_rules_household_created_idx');
  });

  it('refuses a row whose kind column and payload kind disagree', async () => {
    const row = {
      householdId: '00000000-0000-4000-8000-000000000001',
      kind: 'RepeatAfterDays',
      strength: 'Hard',
      scope: 'Permanent',
      source: 'UserDeclared',
      createdAt: new Date(),
      updatedAt: new Date(),
    };
    await db.knex('meal_rules').insert({ ...row, payload: JSON.stringify({ kind: 'RepeatAfterDays', days: 3 }) });
    let failed = false;
    try {
      await db.knex('meal_rules').insert({ ...row, payload: JSON.stringify({ kind: 'CategoryFrequency' }) });
    } catch {
      failed = true;
    }
    expect(failed).to.equal(true);
  });
});
