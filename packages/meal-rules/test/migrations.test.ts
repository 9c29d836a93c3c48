import { randomUUID } from 'node:crypto';
import { rollbackMigrations, runMigrations } from '@svc/db';
import { createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import { migrations, ObjectionMealRuleStore, relations } from '../src/index.js';
import { SAMPLES } from './helpers.js';

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

  it('relations: drop rules of households that are gone, then cascade a household delete to its rules', async () => {
    // Stands in for @svc/households' table: the relation needs only its key.
    await db.knex.schema.createTable('households', (t) => t.uuid('id').primary());
    await db.knex('meal_rules').delete();
    const store = new ObjectionMealRuleStore(db.knex);
    const now = new Date('2026-11-22T09:00:00.000Z');
    const kept = randomUUID();
    const gone = randomUUID();
    await db.knex('households').insert({ id: kept });
    const keptRule = await store.create(kept, SAMPLES.CategoryFrequency, 'UserDeclared', now);
    await store.create(gone, SAMPLES.RepeatAfterDays, 'UserDeclared', now);

    await runMigrations(db.knex, [relations]);
    expect((await db.knex('meal_rules').select('id')).map((r) => r.id)).to.deep.equal([keptRule.id]);
    const orphan = await store
      .create(gone, SAMPLES.RepeatAfterDays, 'UserDeclared', now)
      .catch((err: unknown) => err as { nativeError?: { code?: string }; code?: string });
    expect((orphan as { nativeError?: { code?: string } }).nativeError?.code ?? (orphan as { code?: string }).code).to.equal('23503'); // foreign_key_violation
    await db.knex('households').where({ id: kept }).delete();
    expect(await db.knex('meal_rules').count({ n: '*' }).first()).to.deep.equal({ n: '0' });

    await rollbackMigrations(db.knex, [relations]);
    await store.create(gone, SAMPLES.RepeatAfterDays, 'UserDeclared', now);
    await runMigrations(db.knex, [relations]);
    expect(await db.knex('meal_rules').count({ n: '*' }).first()).to.deep.equal({ n: '0' });
    await rollbackMigrations(db.knex, [relations]);
    await db.knex.schema.dropTable('households');
  });
});
