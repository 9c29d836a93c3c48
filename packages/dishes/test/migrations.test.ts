import { randomUUID } from 'node:crypto';
import { rollbackMigrations, runMigrations } from '@svc/db';
import { createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import { migrations, relations } from '../src/index.js';

describe('dishes migrations', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(() => db.destroy());

  it('run up, down and up again; the relation cascades a household deletion to its dishes', async () => {
    await runMigrations(db.knex, [migrations]);
    expect(await db.knex.schema.hasTable('dishes')).to.equal(true);
    await rollbackMigrations(db.knex, [migrations]);
    expect(await db.knex.schema.hasTable('dishes')).to.equal(false);
    await runMigrations(db.knex, [migrations]);
    // A stand-in for @svc/households' table, which the relation refers to.
    await db.knex.raw('create table households (id uuid primary key)');
    const [kept, gone] = [randomUUID(), randomUUID()];
    await db.knex('households').insert([{ id: kept }, { id: gone }]);
    const dish = (householdId: string) => ({
      id: randomUUID(),
      householdId,
      name: 'Soup',
      nameKey: 'soup',
      category: 'Soup',
      activeMinutes: 10,
      priceClass: 'Cheap',
      createdAt: new Date(),
      updatedAt: new Date(),
    });
    // A dish of a household that no longer exists is removed when the relation is added.
    await db.knex('dishes').insert([dish(kept), dish(gone), dish(randomUUID())]);
    await runMigrations(db.knex, [relations]);
    expect(await db.knex('dishes').count({ n: '*' }).first()).to.deep.equal({ n: '2' });
    await db.knex('households').where({ id: gone }).delete();
    expect((await db.knex('dishes').select('householdId')).map((r) => r.householdId)).to.deep.equal([kept]);
    // The checks hold whoever writes.
    for (const bad of [{ category: 'Dessert' }, { priceClass: 'Free' }, { activeMinutes: 0 }, { name: '' }]) {
      let refused = false;
      await db
        .knex('dishes')
        .insert({ ...dish(kept), ...bad })
        .catch(() => {
          refused = true;
        });
      expect(refused, JSON.stringify(bad)).to.equal(true);
    }
    await rollbackMigrations(db.knex, [relations]);
    await db.knex('dishes').insert(dish(randomUUID()));
  });
});
