import { randomBytes, randomUUID } from 'node:crypto';
import { ManualClock } from '@svc/http-kit';
import { createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { HOUSEHOLD_BOUNDS, migrations, SeriesExtender, SeriesStore } from '../src/index.js';
import { buildEventsApp, MemoryAccess, seed } from './helpers.js';

/**
 * A household's size is bounded (issue 47: 60 unbounded daily series wrote 22,020 events): over a
 * bound → 409 `limit_reached` and nothing written, exact under parallel writers. Small bounds here,
 * the same code as the real ones.
 */
describe('household bounds (events, live events, active series)', () => {
  let db: TestDatabase;
  let app: Express;
  // Sunday 22 November 2026: the live window starts 2026-10-22.
  const clock = new ManualClock('2026-11-22T09:00:00.000Z');
  const access = new MemoryAccess();
  const household = randomUUID();
  const other = randomUUID();
  const owner = randomUUID();
  const base = (h = household) => `/api/v1/households/${h}/events`;
  const bounds = { liveEvents: 40, events: 60, activeSeries: 3 };

  const body = (over: Record<string, unknown> = {}) => ({
    date: '2026-12-01',
    eventType: 'Guests',
    servingTime: '18:00',
    availableCookingMinutes: 30,
    notes: '',
    participants: [],
    ...over,
  });

  before(async () => {
    db = await createTestDatabase([migrations]);
    access.set(household, owner, 'Owner').set(other, owner, 'Owner');
    app = buildEventsApp({ knex: db.knex, clock, access, bounds }).app;
  });
  beforeEach(() => clock.set('2026-11-22T09:00:00.000Z'));
  afterEach(() => db.truncate());
  after(() => db.destroy());

  const post = (b: object, h = household) => request(app).post(base(h)).set('X-Test-User', owner).send(b);
  const count = async (h = household) => Number((await db.knex('meal_events').where('household_id', h).count<{ count: string }[]>('* as count'))[0]!.count);
  const seriesCount = async (h = household) =>
    Number((await db.knex('meal_event_series').where('household_id', h).count<{ count: string }[]>('* as count'))[0]!.count);

  it('the real bounds are the documented ones', () => {
    expect(HOUSEHOLD_BOUNDS).to.deep.equal({ liveEvents: 5_000, events: 50_000, activeSeries: 50 });
  });

  it('the bounds hold whoever writes: past the real live bound a direct INSERT (no bounds set) fails with MEBND and writes nothing', async () => {
    await seed(
      db.knex,
      household,
      Array.from({ length: HOUSEHOLD_BOUNDS.liveEvents }, () => ({ date: '2026-12-24' })),
    );
    const err = await seed(db.knex, household, [{ date: '2026-12-24' }]).then(
      () => undefined,
      (e: { code?: string; constraint?: string }) => e,
    );
    expect(err).to.include({ code: 'MEBND', constraint: 'meal_events_live_per_household' });
    expect(await count()).to.equal(HOUSEHOLD_BOUNDS.liveEvents);
    // A past date does not count toward the live bound.
    await seed(db.knex, household, [{ date: '2026-01-01' }]);
    expect(await count()).to.equal(HOUSEHOLD_BOUNDS.liveEvents + 1);
  });

  it('30 parallel POSTs at a bound of 20 live events: exactly 20 written, the rest 409 limit_reached; another household is not affected', async () => {
    const tight = buildEventsApp({ knex: db.knex, clock, access, bounds: { ...bounds, liveEvents: 20 } }).app;
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        request(tight)
          .post(base())
          .set('X-Test-User', owner)
          .send(body({ date: `2027-01-${String((i % 28) + 1).padStart(2, '0')}` })),
      ),
    );
    expect(answers.filter((r) => r.status !== 201 && r.status !== 409).map((r) => `${r.status} ${JSON.stringify(r.body)}`)).to.deep.equal([]);
    const created = answers.filter((r) => r.status === 201).length;
    const refused = answers.filter((r) => r.status === 409);
    expect(created).to.equal(20);
    expect(refused).to.have.length(10);
    expect(refused[0]!.body).to.include({ code: 'limit_reached', status: 409 });
    expect(refused[0]!.headers['content-type']).to.match(/problem\+json/);
    expect(await count()).to.equal(20);
    expect((await post(body(), other)).status).to.equal(201);
  });

  it('events dated before the live window do not count toward it, but toward every event of the household', async () => {
    await seed(
      db.knex,
      household,
      Array.from({ length: 39 }, () => ({ date: '2026-10-21' })),
    );
    expect((await post(body())).status).to.equal(201); // 1 live
    // 40 events in all; the total bound (60) is reached with 20 more past ones.
    for (let i = 0; i < 20; i++) expect((await post(body({ date: '2025-05-05' }))).status).to.equal(201);
    const over = await post(body({ date: '2025-05-05' }));
    expect(over.status).to.equal(409);
    expect(over.body.code).to.equal('limit_reached');
    expect(await count()).to.equal(60);
  });

  it('a series whose occurrences written ahead pass the bound is refused whole: no series, no occurrence', async () => {
    await seed(
      db.knex,
      household,
      Array.from({ length: 30 }, () => ({ date: '2026-12-24' })),
    );
    const res = await post(body({ date: '2026-11-23', repeat: { frequency: 'daily', count: 11 } }));
    expect(res.status).to.equal(409);
    expect(res.body.code).to.equal('limit_reached');
    expect(await count()).to.equal(30);
    expect(await seriesCount()).to.equal(0);
    expect((await post(body({ date: '2026-11-23', repeat: { frequency: 'daily', count: 10 } }))).status).to.equal(201);
    expect(await count()).to.equal(40);
  });

  it('8 parallel series at a bound of 3 active series: exactly 3 kept; an ended series no longer counts', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, () => post(body({ date: '2026-11-23', repeat: { frequency: 'weekly', count: 2 } }))));
    expect(answers.filter((r) => r.status === 201)).to.have.length(3);
    expect(answers.filter((r) => r.status === 409 && r.body.code === 'limit_reached')).to.have.length(5);
    expect(await seriesCount()).to.equal(3);
    expect(await count()).to.equal(6);
    // A week later the three have ended (their last occurrence was 2026-11-30): a new one fits.
    clock.set('2026-12-08T09:00:00.000Z');
    expect((await post(body({ date: '2026-12-09', repeat: { frequency: 'weekly', count: 2 } }))).status).to.equal(201);
  });

  it('a PUT that moves a past event into the live window at the bound is refused and changes nothing', async () => {
    await seed(
      db.knex,
      household,
      Array.from({ length: 40 }, () => ({ date: '2026-12-24' })),
    );
    const [old] = await seed(db.knex, household, [{ date: '2025-01-01' }]);
    const res = await request(app)
      .put(`${base()}/${old}`)
      .set('X-Test-User', owner)
      .send(body({ date: '2026-12-25' }));
    expect(res.status).to.equal(409);
    expect(res.body.code).to.equal('limit_reached');
    const row = await db.knex('meal_events').where('id', old).first();
    expect(row.date.toISOString?.() ?? String(row.date)).to.not.match(/2026-12-25/);
    // Within the past it may still move.
    expect(
      (
        await request(app)
          .put(`${base()}/${old}`)
          .set('X-Test-User', owner)
          .send(body({ date: '2025-02-01' }))
      ).status,
    ).to.equal(200);
  });

  it('the daily extension writes only what fits, and the rest once there is room', async () => {
    // A weekly series writes 53 occurrences ahead: this household's live bound is 60 here.
    const wide = { ...bounds, liveEvents: 60 };
    const wideApp = buildEventsApp({ knex: db.knex, clock, access, bounds: wide }).app;
    const created = await request(wideApp)
      .post(base())
      .set('X-Test-User', owner)
      .send(body({ date: '2026-11-23', repeat: { frequency: 'weekly' } }));
    expect(created.status).to.equal(201);
    await seed(
      db.knex,
      household,
      Array.from({ length: 60 - (await count()) }, () => ({ date: '2026-12-24' })),
    );
    const extender = new SeriesExtender({ series: new SeriesStore(db.knex), clock, profiles: access.profiles, random: randomBytes, bounds: wide });
    // Two weeks on, the window has two more Mondays (2027-11-29, 2027-12-06): no room for either.
    clock.set('2026-12-07T09:00:00.000Z');
    expect((await extender.extendAll()).written).to.equal(0);
    expect(await count()).to.equal(60);
    // Room for one: the earlier week is written; the later one waits (the window stops before it).
    const single = await db.knex('meal_events').where('household_id', household).whereNull('series_id').first();
    await db.knex('meal_events').where('id', single.id).del();
    expect((await extender.extendAll()).written).to.equal(1);
    const dates = async () =>
      (await db.knex('meal_events').where('household_id', household).whereNotNull('series_id').select(db.knex.raw(`to_char(date, 'YYYY-MM-DD') as d`))).map(
        (r: { d: string }) => r.d,
      );
    expect(await dates())
      .to.include('2027-11-29')
      .and.not.include('2027-12-06');
    // Room again: the week left out is written then, not lost.
    const another = await db.knex('meal_events').where('household_id', household).whereNull('series_id').first();
    await db.knex('meal_events').where('id', another.id).del();
    expect((await extender.extendAll()).written).to.equal(1);
    expect(await dates()).to.include('2027-12-06');
    expect(await count()).to.equal(60);
  });
});
