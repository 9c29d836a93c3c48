import { rollbackMigrations, runMigrations } from '@svc/db';
import * as jobs from '@svc/jobs';
import { createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import { migrations } from '../src/index.js';

describe('push migrations', () => {
  let db: TestDatabase;
  before(async () => {
    // The delivery queue lives in @svc/jobs' tables, which the host migrates first.
    db = await createTestDatabase([jobs.migrations]);
  });
  after(() => db.destroy());

  it('run up, down and up again', async () => {
    await runMigrations(db.knex, [migrations]);
    expect(await db.knex.schema.hasTable('push_devices')).to.equal(true);
    expect(await db.knex.schema.hasTable('push_inbox')).to.equal(true);
    await rollbackMigrations(db.knex, [migrations]);
    expect(await db.knex.schema.hasTable('push_devices')).to.equal(false);
    await runMigrations(db.knex, [migrations]);
    expect(await db.knex.schema.hasTable('push_devices')).to.equal(true);
  });
});
