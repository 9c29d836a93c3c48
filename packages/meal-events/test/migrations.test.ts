import { randomBytes, randomUUID } from 'node:crypto';
import { rollbackMigrations, runMigrations } from '@svc/db';
import { createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import { migrations, relations } from '../src/index.js';
import { seed } from './helpers.js';

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
    expect(await db.knex.schema.hasColumn('meal_events', 'sequence')).to.equal(true);
    expect(await db.knex.schema.hasTable('calendar_feeds')).to.equal(true);
    await rollbackMigrations(db.knex, [migrations]);
    expect(await db.knex.schema.hasTable('meal_events')).to.equal(false);
    expect(await db.knex.schema.hasTable('calendar_feeds')).to.equal(false);
    await runMigrations(db.knex, [migrations]);
    expect(await db.knex.schema.hasTable('meal_events')).to.equal(true);
  });

  it('relations: drop events and feeds of households that are gone, then cascade a household delete to its events and feed', async () => {
    // Stands in for @svc/households' table: the relation needs only its key.
    await db.knex.schema.createTable('households', (t) => t.uuid('id').primary());
    const kept = randomUUID();
    const gone = randomUUID();
    await db.knex('households').insert({ id: kept });
    const [keptEvent] = await seed(db.knex, kept, [{ date: '2026-11-22' }]);
    await seed(db.knex, gone, [{ date: '2026-11-22' }, { date: '2026-11-23' }]);
    const feed = (householdId: string) => ({ householdId, tokenHash: randomBytes(32), sealedToken: randomBytes(60), createdAt: new Date() });
    await db.knex('calendarFeeds').insert([feed(kept), feed(gone)]);

    await runMigrations(db.knex, [relations]);
    expect((await db.knex('mealEvents').select('id')).map((r) => r.id)).to.deep.equal([keptEvent]);
    expect((await db.knex('calendarFeeds').select('householdId')).map((r) => r.householdId)).to.deep.equal([kept]);
    const orphanFeed = await db
      .knex('calendarFeeds')
      .insert(feed(gone))
      .catch((err: { code?: string }) => err);
    expect(orphanFeed).to.have.property('code', '23503');
    const orphan = await seed(db.knex, gone, [{ date: '2026-11-24' }]).catch((err: { code?: string }) => err);
    expect(orphan).to.have.property('code', '23503'); // foreign_key_violation
    await db.knex('households').where({ id: kept }).delete();
    expect(await db.knex('mealEvents').count({ n: '*' }).first()).to.deep.equal({ n: '0' });
    expect(await db.knex('calendarFeeds').count({ n: '*' }).first()).to.deep.equal({ n: '0' });

    await rollbackMigrations(db.knex, [relations]);
    await seed(db.knex, gone, [{ date: '2026-11-22' }]);
    await runMigrations(db.knex, [relations]);
    expect(await db.knex('mealEvents').count({ n: '*' }).first()).to.deep.equal({ n: '0' });
  });
});
