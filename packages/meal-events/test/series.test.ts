import { randomUUID } from 'node:crypto';
import { ManualClock } from '@svc/http-kit';
import { createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { migrations } from '../src/index.js';
import { buildEventsApp, MemoryAccess } from './helpers.js';

/** Series of repeating events (issue 33, decisions.md §8 "Meals that repeat"), through HTTP on a real PostgreSQL. */
describe('meal event series (repeat, scopes, GET series)', () => {
  let db: TestDatabase;
  let app: Express;
  // Sunday 22 November 2026, 10:00 in Oslo: the window runs to 2027-11-23.
  const clock = new ManualClock('2026-11-22T09:00:00.000Z');
  const access = new MemoryAccess();
  const household = randomUUID();
  const owner = randomUUID();
  const adult = randomUUID();
  const junior = randomUUID();
  const stranger = randomUUID();
  const member = randomUUID();
  const base = `/api/v1/households/${household}/events`;
  const seriesPath = (id: string) => `/api/v1/households/${household}/series/${id}`;

  const body = (over: Record<string, unknown> = {}) => ({
    date: '2026-11-24',
    eventType: 'Activity',
    servingTime: '17:00',
    availableCookingMinutes: 20,
    notes: 'Football',
    participants: [{ memberId: member, name: 'Ada' }],
    ...over,
  });

  before(async () => {
    db = await createTestDatabase([migrations]);
    access.set(household, owner, 'Owner').set(household, adult, 'Adult').set(household, junior, 'Junior').addMember(household, member);
    app = buildEventsApp({ knex: db.knex, clock, access }).app;
  });
  beforeEach(() => clock.set('2026-11-22T09:00:00.000Z'));
  afterEach(() => db.truncate());
  after(() => db.destroy());

  const post = (b: object, user = owner) => request(app).post(base).set('X-Test-User', user).send(b);
  const put = (id: string, b: object, scope?: string, user = owner) =>
    request(app)
      .put(`${base}/${id}${scope ? `?scope=${scope}` : ''}`)
      .set('X-Test-User', user)
      .send(b);
  const del = (id: string, scope?: string, user = owner) =>
    request(app)
      .delete(`${base}/${id}${scope ? `?scope=${scope}` : ''}`)
      .set('X-Test-User', user);
  /** Every event of the household, in list order (all pages). */
  const all = async (user = owner) => {
    const out: Record<string, unknown>[] = [];
    let cursor: string | null = null;
    do {
      const res: request.Response = await request(app)
        .get(base)
        .query({ limit: 100, ...(cursor ? { cursor } : {}) })
        .set('X-Test-User', user)
        .expect(200);
      out.push(...res.body.items);
      cursor = res.body.nextCursor;
    } while (cursor);
    return out as { id: string; date: string; seriesId: string | null; notes: string; servingTime: string; eventType: string }[];
  };
  const dates = async () => (await all()).map((e) => e.date);
  const getSeries = (id: string, user = owner) => request(app).get(seriesPath(id)).set('X-Test-User', user);

  describe('POST with repeat', () => {
    it('weekly, byDay defaulting to the weekday of date: 201 with the first occurrence, every Tuesday to 366 days after today written, GET series', async () => {
      const res = await post({ ...body(), repeat: { frequency: 'weekly' } }).expect(201);
      expect(res.body).to.deep.include({ ...body(), householdId: household });
      expect(res.body.seriesId).to.match(/^[0-9a-f-]{36}$/);
      const events = await all();
      expect(events).to.have.length(53); // Tuesdays from 2026-11-24 to 2027-11-23
      expect(events[0]).to.deep.equal(res.body);
      expect(events.at(-1)!.date).to.equal('2027-11-23');
      expect(new Set(events.map((e) => e.seriesId))).to.deep.equal(new Set([res.body.seriesId]));
      expect(events.every((e) => new Date(`${e.date}T00:00:00Z`).getUTCDay() === 2)).to.equal(true);
      expect((await getSeries(res.body.seriesId).expect(200)).body).to.deep.equal({
        id: res.body.seriesId,
        repeat: { frequency: 'weekly', interval: 1, byDay: ['Tue'], until: null, count: null },
        template: { ...body(), reminderMinutes: null },
        exceptions: [],
      });
      // The one-event GET answers the occurrence with its seriesId too.
      const one = await request(app).get(`${base}/${events[3]!.id}`).set('X-Test-User', owner).expect(200);
      expect(one.body).to.deep.equal(events[3]);
    });

    it('weekly every other week on Tuesday and Saturday, count 5 (the first included)', async () => {
      await post({ ...body(), repeat: { frequency: 'weekly', interval: 2, byDay: ['Sat', 'Tue'], count: 5 } }).expect(201);
      expect(await dates()).to.deep.equal(['2026-11-24', '2026-11-28', '2026-12-08', '2026-12-12', '2026-12-22']);
    });

    it('daily every third day until a date, inclusive', async () => {
      await post({ ...body(), repeat: { frequency: 'daily', interval: 3, until: '2026-12-06' } }).expect(201);
      expect(await dates()).to.deep.equal(['2026-11-24', '2026-11-27', '2026-11-30', '2026-12-03', '2026-12-06']);
    });

    it('monthly repeats the day of the month and skips months without it', async () => {
      await post({ ...body({ date: '2027-01-31' }), repeat: { frequency: 'monthly', count: 4 } }).expect(201);
      expect(await dates()).to.deep.equal(['2027-01-31', '2027-03-31', '2027-05-31', '2027-07-31']);
    });

    it('a daily series without end may start today (366 occurrences besides today’s)', async () => {
      await post({ ...body({ date: '2026-11-22' }), repeat: { frequency: 'daily' } }).expect(201);
      expect(await all()).to.have.length(367);
    });

    const refused = async (b: object, field: string) => {
      const res = await post(b).expect(400);
      expect(res.body.code).to.equal('validation_failed');
      expect(res.body.errors.map((e: { field: string }) => e.field)).to.include(field);
      expect(await all()).to.deep.equal([]);
    };

    it('400 naming the field: a date that does not fit, until with count, byDay on a rule not weekly, a rule with no occurrence, too many at once, bad values', async () => {
      await refused({ ...body(), repeat: { frequency: 'weekly', byDay: ['Mon'] } }, 'date');
      await refused({ ...body(), repeat: { frequency: 'daily', until: '2026-12-01', count: 3 } }, 'repeat.count');
      await refused({ ...body(), repeat: { frequency: 'daily', byDay: ['Tue'] } }, 'repeat.byDay');
      await refused({ ...body(), repeat: { frequency: 'daily', until: '2026-11-23' } }, 'repeat.until');
      await refused({ ...body({ date: '2027-12-01' }), repeat: { frequency: 'monthly' } }, 'date');
      await refused({ ...body({ date: '2026-06-01' }), repeat: { frequency: 'daily' } }, 'repeat');
      await refused({ ...body(), repeat: { frequency: 'daily', interval: 53 } }, 'repeat.interval');
      await refused({ ...body(), repeat: { frequency: 'daily', interval: 0 } }, 'repeat.interval');
      await refused({ ...body(), repeat: { frequency: 'daily', count: 367 } }, 'repeat.count');
      await refused({ ...body(), repeat: { frequency: 'yearly' } }, 'repeat.frequency');
      await refused({ ...body(), repeat: { frequency: 'weekly', byDay: ['Tue', 'Funday'] } }, 'repeat.byDay[1]');
    });

    it('roles as for events: an Adult creates, a Junior gets 403, a non-member 404; every member reads the series, a non-member gets 404', async () => {
      const { seriesId } = (await post({ ...body(), repeat: { frequency: 'weekly', count: 2 } }, adult).expect(201)).body;
      await post({ ...body(), repeat: { frequency: 'weekly', count: 2 } }, junior).expect(403);
      await post({ ...body(), repeat: { frequency: 'weekly', count: 2 } }, stranger).expect(404);
      await getSeries(seriesId, junior).expect(200);
      await getSeries(seriesId, stranger).expect(404);
      await getSeries(randomUUID()).expect(404);
      expect(await all()).to.have.length(2);
    });

    it('creates the series and a year of occurrences in one statement (batch insert), the bounds held by its own triggers, beside the zone and the members lock', async () => {
      const statements: string[] = [];
      const listener = (q: { sql: string }) => statements.push(q.sql);
      db.knex.on('query', listener);
      try {
        await post({ ...body({ participants: [] }), repeat: { frequency: 'weekly' } }).expect(201);
      } finally {
        db.knex.off('query', listener);
      }
      expect(statements.filter((s) => /insert/i.test(s))).to.have.length(1);
      // Issue 47's bounds are counted by the INSERT's triggers: no transaction, no statement more (issue 44).
      expect(statements).to.have.length(1);
      expect(await all()).to.have.length(53);
    });
  });

  describe('PUT and DELETE with scope', () => {
    const weekly = async (over: Record<string, unknown> = {}) => {
      const first = (await post({ ...body(), repeat: { frequency: 'weekly', count: 6, ...over } }).expect(201)).body;
      return { first, events: await all() };
    };

    it('scope=this (the default): one occurrence changed, kept in its series, its original date in exceptions', async () => {
      const { first, events } = await weekly();
      const moved = await put(events[2]!.id, body({ date: '2026-12-09', notes: 'Moved' })).expect(200);
      expect(moved.body).to.deep.include({ id: events[2]!.id, date: '2026-12-09', notes: 'Moved', seriesId: first.seriesId });
      await put(events[3]!.id, body({ date: '2026-12-15', notes: 'Cup final' }), 'this').expect(200);
      expect((await getSeries(first.seriesId).expect(200)).body.exceptions).to.deep.equal(['2026-12-08', '2026-12-15']);
      expect((await all()).map((e) => e.notes)).to.deep.equal(['Football', 'Football', 'Moved', 'Cup final', 'Football', 'Football']);
    });

    it('DELETE scope=this: that occurrence goes and its original date is listed in exceptions', async () => {
      const { first, events } = await weekly();
      await del(events[1]!.id).expect(204);
      expect(await dates()).to.deep.equal(['2026-11-24', '2026-12-08', '2026-12-15', '2026-12-22', '2026-12-29']);
      expect((await getSeries(first.seriesId).expect(200)).body.exceptions).to.deep.equal(['2026-12-01']);
    });

    it('PUT scope=following: the old series ends the day before, a new series with the same rule starts at the body’s date with the body as template', async () => {
      const { first, events } = await weekly({ count: null });
      const split = events[2]!; // 2026-12-08
      const res = await put(split.id, body({ date: '2026-12-10', servingTime: '18:00', notes: 'Thursdays now' }), 'following');
      expect(res.status).to.equal(400); // 2026-12-10 is a Thursday: the weekly rule on Tuesday does not fit it
      expect(res.body.errors[0].field).to.equal('date');
      const moved = await put(split.id, body({ servingTime: '18:00', notes: 'Later kick-off', date: '2026-12-08' }), 'following').expect(200);
      expect(moved.body.id).to.equal(split.id);
      expect(moved.body.seriesId).to.not.equal(first.seriesId);
      const old = (await getSeries(first.seriesId).expect(200)).body;
      expect(old.repeat).to.deep.equal({ frequency: 'weekly', interval: 1, byDay: ['Tue'], until: '2026-12-07', count: null });
      const fresh = (await getSeries(moved.body.seriesId).expect(200)).body;
      expect(fresh.template).to.deep.equal({ ...body({ servingTime: '18:00', notes: 'Later kick-off', date: '2026-12-08' }), reminderMinutes: null });
      expect(fresh.repeat).to.deep.equal({ frequency: 'weekly', interval: 1, byDay: ['Tue'], until: null, count: null });
      const after = await all();
      expect(after).to.have.length(53);
      expect(after.slice(0, 2).map((e) => [e.seriesId, e.servingTime])).to.deep.equal([
        [first.seriesId, '17:00'],
        [first.seriesId, '17:00'],
      ]);
      expect(after.slice(2).every((e) => e.seriesId === moved.body.seriesId && e.servingTime === '18:00')).to.equal(true);
    });

    it('PUT scope=following with a count: the new series takes what is left of it', async () => {
      const { events } = await weekly({ count: 6 });
      const moved = await put(events[4]!.id, body({ notes: 'x', date: '2026-12-22' }), 'following').expect(200);
      expect((await getSeries(moved.body.seriesId).expect(200)).body.repeat.count).to.equal(2);
      expect((await all()).map((e) => e.notes)).to.deep.equal(['Football', 'Football', 'Football', 'Football', 'x', 'x']);
    });

    it('DELETE scope=following: this and every later occurrence go, the series ends the day before', async () => {
      const { first, events } = await weekly();
      await put(events[4]!.id, body({ notes: 'exception after the split', date: '2026-12-22' })).expect(200);
      await del(events[3]!.id, 'following').expect(204);
      expect(await dates()).to.deep.equal(['2026-11-24', '2026-12-01', '2026-12-08']);
      const series = (await getSeries(first.seriesId).expect(200)).body;
      expect(series.repeat.until).to.equal('2026-12-14');
      expect(series.exceptions).to.deep.equal([]);
    });

    it('scope=following on the first occurrence leaves no old series (GET 404)', async () => {
      const { first } = await weekly();
      await del(first.id, 'following').expect(204);
      expect(await all()).to.deep.equal([]);
      await getSeries(first.seriesId).expect(404);
    });

    it('PUT scope=all: every occurrence gets the body, earlier exceptions included, the seriesId stays; deleted ones stay deleted', async () => {
      const { first, events } = await weekly();
      await put(events[1]!.id, body({ date: '2026-12-02', notes: 'Wednesday once' })).expect(200);
      await del(events[2]!.id).expect(204);
      const res = await put(events[4]!.id, body({ date: '2026-12-22', notes: 'New coach', servingTime: '16:30' }), 'all').expect(200);
      expect(res.body.seriesId).to.equal(first.seriesId);
      const after = await all();
      expect(after.map((e) => [e.date, e.notes, e.servingTime, e.seriesId])).to.deep.equal(
        ['2026-11-24', '2026-12-01', '2026-12-15', '2026-12-22', '2026-12-29'].map((d) => [d, 'New coach', '16:30', first.seriesId]),
      );
      const series = (await getSeries(first.seriesId).expect(200)).body;
      expect(series.template).to.deep.equal({ ...body({ notes: 'New coach', servingTime: '16:30' }), reminderMinutes: null });
      expect(series.exceptions).to.deep.equal(['2026-12-08']);
    });

    it('DELETE scope=all: every occurrence goes and GET of the series answers 404', async () => {
      const { first, events } = await weekly();
      await del(events[2]!.id, 'all').expect(204);
      expect(await all()).to.deep.equal([]);
      await getSeries(first.seriesId).expect(404);
    });

    it('parallel scoped writes on one series (following, all, this, PUT and DELETE) wait for each other: no 500, no deadlock, each occurrence once', async () => {
      const first = (await post({ ...body({ participants: [] }), repeat: { frequency: 'weekly' } }).expect(201)).body;
      const events = await all();
      const b = (i: number, notes: string) => body({ participants: [], date: events[i]!.date, notes });
      const answers = await Promise.all([
        put(events[10]!.id, b(10, 'following 10'), 'following'),
        put(events[20]!.id, b(20, 'following 20'), 'following'),
        del(events[30]!.id, 'following'),
        put(events[5]!.id, b(5, 'this 5')),
        del(events[15]!.id),
        put(events[2]!.id, b(2, 'all'), 'all'),
        put(events[25]!.id, b(25, 'all again'), 'all'),
        del(events[12]!.id),
        put(events[40]!.id, b(40, 'this 40'), 'this'),
      ]);
      for (const res of answers) expect([200, 204, 404], res.text).to.include(res.status);
      const after = await all();
      const keys = after.map((e) => `${e.seriesId} ${e.date}`);
      expect(new Set(keys).size).to.equal(keys.length);
      // Every occurrence's series is there to GET.
      for (const id of new Set(after.map((e) => e.seriesId))) await getSeries(id!).expect(200);
      expect(after.length).to.be.greaterThan(9);
      void first;
    });

    it('an unknown scope is 400; a scope on a single event is ignored; a Junior gets 403, a non-member 404', async () => {
      const { events } = await weekly();
      const bad = await put(events[0]!.id, body(), 'some').expect(400);
      expect(bad.body.errors[0].field).to.equal('scope');
      await del(events[0]!.id, 'every').expect(400);
      const single = (await post(body({ date: '2026-11-25' })).expect(201)).body;
      expect(single.seriesId).to.equal(null);
      expect((await put(single.id, body({ date: '2026-11-26', notes: 'moved' }), 'all').expect(200)).body).to.deep.include({
        date: '2026-11-26',
        seriesId: null,
      });
      await del(single.id, 'following').expect(204);
      await put(events[0]!.id, body(), 'all', junior).expect(403);
      await del(events[0]!.id, 'all', junior).expect(403);
      await del(events[0]!.id, 'all', stranger).expect(404);
      expect(await all()).to.have.length(6);
    });
  });
});
