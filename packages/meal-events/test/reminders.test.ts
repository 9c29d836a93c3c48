import { randomUUID } from 'node:crypto';
import type { MealReminder } from '@svc/contracts';
import { ManualClock } from '@svc/http-kit';
import * as jobs from '@svc/jobs';
import { createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import type { Express } from 'express';
import type { Knex } from 'knex';
import request from 'supertest';
import { EventReminders, jobSources, migrations, queues, REMINDER_QUEUE, SeriesExtender, SeriesStore } from '../src/index.js';
import { reminderNotificationId } from '../src/service/reminders.js';
import { buildEventsApp, MemoryAccess } from './helpers.js';

const quiet = { info() {}, warn() {}, error() {} };

/** Reminders of meal events (decisions.md §8): enqueued with the write, moved and cancelled by changes, sent once at their time. */
describe('meal event reminders', () => {
  let db: TestDatabase;
  let app: Express;
  let queue: jobs.JobQueue;
  let reminders: EventReminders;
  const clock = new ManualClock('2026-11-22T09:00:00.000Z');
  const access = new MemoryAccess();
  const home = randomUUID();
  const owner = randomUUID();
  const [adaMember, boMember, kidMember] = [randomUUID(), randomUUID(), randomUUID()];
  const [ada, bo] = [randomUUID(), randomUUID()];
  /** member id → account, as @svc/households answers it (the kid has no account). */
  const accounts = new Map<string, string>();
  const sent: MealReminder[] = [];
  /** Set by a test: the SeriesStore the app's service writes through. */
  let seriesStore: SeriesStore | undefined;

  before(async () => {
    db = await createTestDatabase([jobs.migrations, migrations, queues, jobs.sourceMigrations(jobSources)]);
    access.set(home, owner, 'Owner').zone(home, 'Europe/Oslo');
    for (const m of [adaMember, boMember, kidMember]) access.addMember(home, m);
    queue = new jobs.JobQueue({ knex: db.knex, clock, logger: quiet, random: () => 0.5 });
    reminders = new EventReminders({
      knex: db.knex,
      jobs: queue,
      clock,
      memberAccounts: async () => new Map(accounts),
      send: async (r) => void sent.push(r),
    });
    reminders.define();
  });
  beforeEach(() => {
    clock.set('2026-11-22T09:00:00.000Z');
    accounts.clear();
    accounts.set(adaMember, ada).set(boMember, bo);
    sent.length = 0;
    seriesStore = undefined;
    app = buildEventsApp({ knex: db.knex, clock, access, reminders }).app;
  });
  afterEach(async () => {
    await db.knex.raw('delete from pgboss.job');
    await db.knex.raw('truncate meal_event_series_extension_days, meal_event_series, meal_events cascade');
  });
  after(() => db.destroy());

  const events = `/api/v1/households/${home}/events`;
  const body = (over: Record<string, unknown> = {}) => ({
    date: '2026-11-25',
    eventType: 'Guests',
    servingTime: '18:00',
    availableCookingMinutes: 60,
    notes: '',
    participants: [{ memberId: adaMember, name: 'Ada' }],
    reminderMinutes: 30,
    ...over,
  });
  const post = (b: Record<string, unknown>) => request(app).post(events).set('X-Test-User', owner).send(b);
  const put = (id: string, b: Record<string, unknown>, scope = '') => request(app).put(`${events}/${id}${scope}`).set('X-Test-User', owner).send(b);

  /** The reminder jobs waiting, by their instant. */
  const waiting = async () => {
    const { rows } = await db.knex.raw(`select data->'p'->>'e' as e, data->>'f' as f from pgboss.job where name = ? and state = 'created' order by 2`, [
      REMINDER_QUEUE,
    ]);
    return rows as { e: string; f: string }[];
  };
  /**
   * The clock moves to `at`; every reminder job due by then (its instant, which is the injected
   * clock's) is made due in the database's time too, and every due job runs.
   */
  const runAt = async (at: string, knex: Knex = db.knex) => {
    clock.set(at);
    await knex.raw(`update pgboss.job set start_after = now() where name = ? and state = 'created' and (data->>'f')::timestamptz <= ?::timestamptz`, [
      REMINDER_QUEUE,
      at,
    ]);
    return queue.runDue();
  };
  /** Runs every reminder due up to `until`, each half a minute after its instant (as a runner polling each second would). */
  const runUntil = async (until: string) => {
    let ran = 0;
    for (;;) {
      const next = (await waiting()).find((w) => w.f <= until);
      if (!next) return ran;
      ran += await runAt(new Date(Date.parse(next.f) + 30_000).toISOString());
    }
  };

  it('POST answers reminderMinutes, enqueues the reminder at the serving time less its minutes in the household zone, and sends it once at that time', async () => {
    const event = (await post(body()).expect(201)).body;
    expect(event.reminderMinutes).to.equal(30);
    expect((await request(app).get(`${events}/${event.id}`).set('X-Test-User', owner).expect(200)).body.reminderMinutes).to.equal(30);
    // 18:00 in Oslo on 25 November is 17:00Z; 30 minutes before: 16:30Z.
    expect(await waiting()).to.deep.equal([{ e: event.id, f: '2026-11-25T16:30:00.000Z' }]);
    await runAt('2026-11-25T16:29:00.000Z');
    expect(sent).to.have.length(0);
    await runAt('2026-11-25T16:30:20.000Z');
    expect(sent).to.have.length(1);
    expect(sent[0]).to.deep.include({
      householdId: home,
      eventId: event.id,
      date: '2026-11-25',
      servingTime: '18:00',
      eventType: 'Guests',
      minutes: 30,
      userIds: [ada],
      id: reminderNotificationId(event.id, '2026-11-25T16:30:00.000Z'),
    });
    // Nothing is left to run, and nothing goes twice.
    expect(await runAt('2026-11-25T17:30:00.000Z')).to.equal(0);
    expect(sent).to.have.length(1);
  });

  it('a job made due early (by the database) waits for the injected time: nothing goes before the reminder’s instant', async () => {
    await post(body()).expect(201);
    await db.knex.raw(`update pgboss.job set start_after = now() where name = ?`, [REMINDER_QUEUE]);
    expect(await queue.runDue()).to.equal(1);
    expect(sent).to.have.length(0);
    await runAt('2026-11-25T16:31:00.000Z');
    expect(sent).to.have.length(1);
  });

  it('without reminderMinutes (or null) an event answers null and enqueues nothing; 0–10080 only', async () => {
    const { reminderMinutes: _, ...plain } = body();
    expect((await post(plain).expect(201)).body.reminderMinutes).to.equal(null);
    expect((await post(body({ reminderMinutes: null })).expect(201)).body.reminderMinutes).to.equal(null);
    expect(await waiting()).to.deep.equal([]);
    for (const bad of [-1, 10081, 1.5, '30']) expect((await post(body({ reminderMinutes: bad })).expect(400)).body.code).to.equal('validation_failed');
    await post(body({ reminderMinutes: 10080, date: '2026-12-20' })).expect(201);
    await post(body({ reminderMinutes: 0 })).expect(201);
    expect(await waiting()).to.have.length(2);
  });

  it('a reminder whose time has passed when the event is written is not sent', async () => {
    // Serving at 10:15 Oslo (09:15Z) today, reminder 30 minutes before: 08:45Z, already past at 09:00Z.
    const event = (await post(body({ date: '2026-11-22', servingTime: '10:15' })).expect(201)).body;
    expect(event.reminderMinutes).to.equal(30);
    expect(await waiting()).to.deep.equal([]);
    await runAt('2026-11-22T10:00:00.000Z');
    expect(sent).to.have.length(0);
  });

  it('reminds the participants with accounts; when none has one, every member with an account; a departed member is skipped', async () => {
    await post(
      body({
        participants: [
          { memberId: adaMember, name: 'Ada' },
          { memberId: boMember, name: 'Bo' },
          { memberId: null, name: 'Gran' },
        ],
      }),
    ).expect(201);
    await post(
      body({
        servingTime: '18:05',
        participants: [
          { memberId: kidMember, name: 'Kid' },
          { memberId: null, name: 'Gran' },
        ],
      }),
    ).expect(201);
    await post(body({ servingTime: '18:10', participants: [] })).expect(201);
    const departed = (await post(body({ servingTime: '18:15', participants: [{ memberId: boMember, name: 'Bo' }] })).expect(201)).body;
    // This event's participant is unlinked as a departure leaves it (MembershipListener): memberId null, formerMemberId kept.
    await db.knex.raw(`update meal_events set participants = ?::jsonb where id = ?`, [
      JSON.stringify([{ memberId: null, name: 'Bo', formerMemberId: boMember }]),
      departed.id,
    ]);
    await runAt('2026-11-25T17:00:00.000Z');
    const byTime = Object.fromEntries(sent.map((r) => [r.servingTime, [...r.userIds].sort()]));
    expect(byTime['18:00']).to.deep.equal([ada, bo].sort());
    expect(byTime['18:05']).to.deep.equal([ada, bo].sort());
    expect(byTime['18:10']).to.deep.equal([ada, bo].sort());
    expect(byTime).to.not.have.property('18:15');
  });

  it('a participant whose member left before the reminder is skipped (their account is no longer a member’s)', async () => {
    await post(
      body({
        participants: [
          { memberId: adaMember, name: 'Ada' },
          { memberId: boMember, name: 'Bo' },
        ],
      }),
    ).expect(201);
    accounts.delete(boMember);
    await runAt('2026-11-25T16:31:00.000Z');
    expect(sent.map((r) => r.userIds)).to.deep.equal([[ada]]);
  });

  it('PUT moves the reminder (the old job sends nothing); PUT with null and DELETE cancel it', async () => {
    const moved = (await post(body()).expect(201)).body;
    const cleared = (await post(body({ servingTime: '19:00' })).expect(201)).body;
    const deleted = (await post(body({ servingTime: '20:00' })).expect(201)).body;
    expect((await put(moved.id, body({ servingTime: '21:00', reminderMinutes: 60 })).expect(200)).body.reminderMinutes).to.equal(60);
    expect((await put(cleared.id, body({ servingTime: '19:00', reminderMinutes: null })).expect(200)).body.reminderMinutes).to.equal(null);
    await request(app).delete(`${events}/${deleted.id}`).set('X-Test-User', owner).expect(204);
    await runAt('2026-11-26T00:00:00.000Z');
    // Only the moved one, at its new time (21:00 Oslo = 20:00Z, less an hour).
    expect(sent.map((r) => [r.eventId, r.servingTime, r.minutes, r.at.toISOString()])).to.deep.equal([[moved.id, '21:00', 60, '2026-11-25T19:00:00.000Z']]);
  });

  it('parallel PUTs of one event: exactly one reminder goes, at the time of the version that was stored last', async () => {
    const event = (await post(body()).expect(201)).body;
    const times = ['17:00', '17:30', '18:30', '19:00', '19:30', '20:00'];
    await Promise.all(times.map((t) => put(event.id, body({ servingTime: t })).expect(200)));
    const stored = (await request(app).get(`${events}/${event.id}`).set('X-Test-User', owner).expect(200)).body;
    await runAt('2026-11-26T00:00:00.000Z');
    expect(sent).to.have.length(1);
    expect(sent[0]!.servingTime).to.equal(stored.servingTime);
  });

  it('a write that fails leaves no reminder job (it is enqueued in the write’s transaction)', async () => {
    const res = await post(body({ participants: [{ memberId: randomUUID(), name: 'Stranger' }] })).expect(400);
    expect(res.body.code).to.equal('validation_failed');
    expect(await waiting()).to.deep.equal([]);
  });

  describe('series', () => {
    it('every occurrence reminds like a single event, in the household zone across DST (17:00 local before and after)', async () => {
      // Weekly on Sundays from 22 March 2026: 29 March is the first Sunday of summer time in Oslo.
      clock.set('2026-03-16T09:00:00.000Z');
      const first = (await post(body({ date: '2026-03-22', servingTime: '17:00', reminderMinutes: 60, repeat: { frequency: 'weekly', count: 3 } })).expect(201))
        .body;
      expect(first.reminderMinutes).to.equal(60);
      expect((await waiting()).map((w) => w.f)).to.deep.equal(['2026-03-22T15:00:00.000Z', '2026-03-29T14:00:00.000Z', '2026-04-05T14:00:00.000Z']);
      const series = (await request(app).get(`/api/v1/households/${home}/series/${first.seriesId}`).set('X-Test-User', owner).expect(200)).body;
      expect(series.template.reminderMinutes).to.equal(60);
      await runUntil('2026-04-06T00:00:00.000Z');
      expect(sent.map((r) => r.date)).to.deep.equal(['2026-03-22', '2026-03-29', '2026-04-05']);
    });

    it('scope=all moves every occurrence’s reminder; scope=following and scope=this move theirs; the old jobs send nothing', async () => {
      const first = (await post(body({ date: '2026-11-23', repeat: { frequency: 'daily', count: 4 } })).expect(201)).body;
      const list = (await request(app).get(`${events}?from=2026-11-23&to=2026-11-26`).set('X-Test-User', owner).expect(200)).body.items;
      expect(list).to.have.length(4);
      // all: 19:00, an hour before.
      await put(first.id, body({ date: '2026-11-23', servingTime: '19:00', reminderMinutes: 60 }), '?scope=all').expect(200);
      // following from the third: 20:00, ten minutes before.
      const third = (await put(list[2].id, body({ date: '2026-11-25', servingTime: '20:00', reminderMinutes: 10 }), '?scope=following').expect(200)).body;
      // this, the second: no reminder.
      await put(list[1].id, body({ date: '2026-11-24', servingTime: '19:00', reminderMinutes: null }), '?scope=this').expect(200);
      await runUntil('2026-11-27T00:00:00.000Z');
      expect(sent.map((r) => [r.date, r.servingTime, r.minutes])).to.deep.equal([
        ['2026-11-23', '19:00', 60],
        ['2026-11-25', '20:00', 10],
        ['2026-11-26', '20:00', 10],
      ]);
      expect(sent[1]!.eventId).to.equal(third.id);
    });

    it('occurrences written by the daily extension remind too', async () => {
      await post(body({ date: '2026-11-23', servingTime: '12:00', reminderMinutes: 15, repeat: { frequency: 'weekly' } })).expect(201);
      const before = (await waiting()).length;
      clock.set('2026-12-30T09:00:00.000Z');
      const extender = new SeriesExtender({
        series: new SeriesStore(db.knex),
        clock,
        profiles: access.profiles,
        random: (n) => Buffer.from(randomUUID().replaceAll('-', ''), 'hex').subarray(0, n),
      });
      const { written } = await extender.extendAll();
      expect(written).to.be.greaterThan(0);
      const after = await waiting();
      expect(after.length - before).to.equal(written);
      // The newest occurrence's reminder: 12:00 Oslo less 15 minutes.
      const last = after.at(-1)!;
      const { rows } = await db.knex.raw(`select to_char(date, 'YYYY-MM-DD') as d from meal_events where id = ?`, [last.e]);
      expect(last.f).to.equal(new Date(`${rows[0].d}T10:45:00.000Z`).toISOString());
    });

    it('scope=this writes the replacement and the exception in ONE transaction: a fault between them leaves neither', async () => {
      const first = (await post(body({ date: '2026-11-23', repeat: { frequency: 'daily', count: 3 } })).expect(201)).body;
      class FaultySeriesStore extends SeriesStore {
        override async addException(): Promise<void> {
          throw new Error('fault between the update and the exception');
        }
      }
      seriesStore = new FaultySeriesStore(db.knex);
      const faulty = buildEventsApp({ knex: db.knex, clock, access, reminders, series: seriesStore }).app;
      const jobsBefore = await waiting();
      await request(faulty)
        .put(`${events}/${first.id}`)
        .set('X-Test-User', owner)
        .send(body({ date: '2026-11-23', servingTime: '21:00' }))
        .expect(500);
      const stored = (await request(app).get(`${events}/${first.id}`).set('X-Test-User', owner).expect(200)).body;
      expect(stored.servingTime).to.equal('18:00');
      const series = (await request(app).get(`/api/v1/households/${home}/series/${first.seriesId}`).set('X-Test-User', owner).expect(200)).body;
      expect(series.exceptions).to.deep.equal([]);
      expect(await waiting()).to.deep.equal(jobsBefore);
      // Without the fault: both.
      await put(first.id, body({ date: '2026-11-23', servingTime: '21:00' })).expect(200);
      expect(
        (await request(app).get(`/api/v1/households/${home}/series/${first.seriesId}`).set('X-Test-User', owner).expect(200)).body.exceptions,
      ).to.deep.equal(['2026-11-23']);
    });
  });
});
