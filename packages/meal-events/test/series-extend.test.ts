import { randomUUID } from 'node:crypto';
import { ManualClock } from '@svc/http-kit';
import * as jobs from '@svc/jobs';
import { createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { migrations, queues, SERIES_EXTEND_QUEUE, SeriesExtender, SeriesScheduler, SeriesStore } from '../src/index.js';
import { buildEventsApp, MemoryAccess } from './helpers.js';

const quiet = { info() {}, warn() {}, error() {} };

/** The daily window extension: parallel extenders and two queue runners write each occurrence once. */
describe('series window extension (daily, through @svc/jobs)', () => {
  let db: TestDatabase;
  let app: Express;
  const clock = new ManualClock('2026-11-22T09:00:00.000Z');
  const access = new MemoryAccess();
  const oslo = randomUUID();
  const newYork = randomUUID();
  const owner = randomUUID();

  before(async () => {
    db = await createTestDatabase([jobs.migrations, migrations, queues]);
    access.set(oslo, owner, 'Owner').set(newYork, owner, 'Owner').zone(oslo, 'Europe/Oslo').zone(newYork, 'America/New_York');
    app = buildEventsApp({ knex: db.knex, clock, access }).app;
  });
  beforeEach(() => clock.set('2026-11-22T09:00:00.000Z'));
  afterEach(async () => {
    await db.knex.raw(`delete from pgboss.job where name = ?`, [SERIES_EXTEND_QUEUE]);
    await db.knex.raw('truncate meal_event_series_extension_days, meal_event_series, meal_events cascade');
  });
  after(() => db.destroy());

  const body = { eventType: 'Activity', servingTime: '17:00', availableCookingMinutes: 20, notes: 'Football', participants: [] };
  /** 12 series: daily and weekly in two zones. */
  const makeSeries = async () => {
    for (const h of [oslo, newYork])
      for (let i = 0; i < 3; i++) {
        await request(app)
          .post(`/api/v1/households/${h}/events`)
          .set('X-Test-User', owner)
          .send({ ...body, date: '2026-11-23', repeat: { frequency: 'daily', interval: i + 1 } })
          .expect(201);
        await request(app)
          .post(`/api/v1/households/${h}/events`)
          .set('X-Test-User', owner)
          .send({ ...body, date: '2026-11-24', repeat: { frequency: 'weekly', byDay: ['Tue', 'Thu'] } })
          .expect(201);
      }
  };
  const extender = (batch = 2) =>
    new SeriesExtender({
      series: new SeriesStore(db.knex),
      clock,
      profiles: access.profiles,
      random: (n) => Buffer.from(randomUUID().replaceAll('-', ''), 'hex').subarray(0, n),
      batch,
    });
  /** (series, original date) pairs written more than once, and the last date per household. */
  const state = async () => {
    const doubles = await db.knex.raw('select series_id, original_date, count(*) from meal_events group by 1, 2 having count(*) > 1');
    const last = await db.knex.raw(`select household_id as h, to_char(max(date), 'YYYY-MM-DD') as d, count(*)::int as n from meal_events group by 1`);
    return { doubles: doubles.rows.length, last: Object.fromEntries(last.rows.map((r: { h: string; d: string; n: number }) => [r.h, [r.d, r.n]])) };
  };

  it('parallel direct calls of the extender write every occurrence up to the new window once, each in its household’s zone', async () => {
    await makeSeries();
    const before = await state();
    expect(before.last[oslo][0]).to.equal('2027-11-23');
    expect(before.last[newYork][0]).to.equal('2027-11-23');
    // 30 days later, 00:30 in Oslo (23 December) but still 18:30 on 22 December in New York.
    clock.set('2026-12-22T23:30:00.000Z');
    const runs = await Promise.all([extender().extendAll(), extender().extendAll(), extender(1).extendAll(), extender(5).extendAll()]);
    const after = await state();
    expect(after.doubles).to.equal(0);
    expect(after.last[oslo][0]).to.equal('2027-12-24');
    expect(after.last[newYork][0]).to.equal('2027-12-23');
    // Oslo: 31 more days (daily 1: 31, daily 2: 16 or 15, daily 3: 10 or 11, weekly Tue+Thu: 9 or so): the sum of runs is what was written.
    const written = runs.reduce((n, r) => n + r.written, 0);
    expect(after.last[oslo][1] + after.last[newYork][1] - before.last[oslo][1] - before.last[newYork][1]).to.equal(written);
    expect(written).to.be.greaterThan(0);
    // Again the same day: nothing more.
    expect((await extender().extendAll()).written).to.equal(0);
  });

  it('two instances: their timers enqueue the day’s job once, and two queue runners in parallel write each occurrence once', async () => {
    await makeSeries();
    const store = new SeriesStore(db.knex);
    const instances = [0, 1].map(() => {
      const queue = new jobs.JobQueue({ knex: db.knex, clock, logger: quiet, concurrency: 4 });
      const scheduler = new SeriesScheduler(queue, extender(1), store, clock);
      scheduler.define();
      return { queue, scheduler };
    });
    clock.set('2027-01-10T12:00:00.000Z');
    const ticks = await Promise.all(instances.map((i) => i.scheduler.tick()));
    expect(ticks.filter(Boolean)).to.have.length(1);
    expect(await Promise.all(instances.map((i) => i.scheduler.tick()))).to.deep.equal([false, false]);
    // A second job of the same day (an operator's, a retry) races the first on the other runner.
    await instances[0]!.queue.enqueue(SERIES_EXTEND_QUEUE, { day: '2027-01-10' });
    const ran = await Promise.all(instances.map((i) => i.queue.runDue()));
    expect(ran[0]! + ran[1]!).to.equal(2);
    const after = await state();
    expect(after.doubles).to.equal(0);
    expect(after.last[oslo][0]).to.equal('2028-01-11');
    expect(after.last[newYork][0]).to.equal('2028-01-11');
    const { rows } = await db.knex.raw(`select count(*)::int as n from meal_event_series where written_through < '2028-01-11'`);
    expect(rows[0].n).to.equal(0);
    // The next day's tick enqueues the next job.
    clock.set('2027-01-11T00:10:00.000Z');
    expect(await instances[1]!.scheduler.tick()).to.equal(true);
  });
});
