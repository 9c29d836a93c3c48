import { expect } from 'chai';
import { runMigrations } from '../../db/src/index.js';
import { createTestDatabase, type TestDatabase } from '../../test-support/src/index.js';
import { idempotencyMigrations, ManualClock, PgConditionalWriteLocks } from '../src/index.js';

describe('If-Match write locks (PgConditionalWriteLocks)', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
    await runMigrations(db.knex, [idempotencyMigrations]);
  });
  after(async () => db?.destroy());

  it("leases by the injected clock, not the database's: a lock left by a dead holder is free 30 s later on that clock, whatever the date", async () => {
    // A fixed date years from the database's now(): only the injected clock may decide the lease.
    const clock = new ManualClock('2031-05-01T12:00:00.000Z');
    const locks = new PgConditionalWriteLocks(db.knex, clock);
    await locks.acquire('/households/1'); // never released: its holder died
    const [row] = await db.knex('conditional_write_locks').select('until');
    expect((row as { until: Date }).until.toISOString()).to.equal('2031-05-01T12:00:30.000Z');
    clock.advance(30_001);
    const release = await locks.acquire('/households/1'); // first try: the lease is over by the clock
    await release();
    expect(await db.knex('conditional_write_locks').count({ n: '*' }).first()).to.deep.equal({ n: '0' });
  });
});
