import { rollbackMigrations, runMigrations } from '@svc/db';
import { createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import { migrations } from '../src/index.js';

describe('push migrations', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase([]);
  });
  after(() => db.destroy());

  it('run up, down and up again', async () => {
    await runMigrations(db.knex, [migrations]);
    expect(await db.knex.schema.hasTable('push_devices')).to.equal(true);
    await rollbackMigrations(db.knex, [migrations]);
    expect(await db.knex.schema.hasTable('push_devices')).to.equal(false);
    await runMigrations(db.knex, [migrations]);
    expect(await db.knex.schema.hasTable('push_devices')).to.equal(true);
  });
});
