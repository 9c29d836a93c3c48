import { randomUUID } from 'node:crypto';
import { ManualClock } from '@svc/http-kit';
import { createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { type MealEvent, migrations } from '../src/index.js';
import { buildEventsApp, MemoryAccess, seed, sortKey, spread } from './helpers.js';

describe('GET /api/v1/households/{householdId}/events', () => {
  let db: TestDatabase;
  let app: Express;
  const access = new MemoryAccess();
  const household = randomUUID();
  const other = randomUUID();
  const owner = randomUUID();
  const junior = randomUUID();
  const stranger = randomUUID();
  const path = `/api/v1/households/${household}/events`;

  before(async () => {
    db = await createTestDatabase([migrations]);
    access.set(household, owner, 'Owner').set(household, junior, 'Junior').set(other, owner, 'Owner');
    app = buildEventsApp({ knex: db.knex, clock: new ManualClock(), access, cursorSecret: 'test secret for cursors' }).app;
  });
  afterEach(() => db.truncate());
  after(() => db.destroy());

  const get = (query: Record<string, string | number | undefined> = {}, user = owner, p = path) => request(app).get(p).query(query).set('X-Test-User', user);

  /** Follows nextCursor to the end; `between` runs after each page. */
  async function walk(
    limit: number,
    extra: Record<string, string> = {},
    between?: (page: number, items: MealEvent[]) => Promise<void>,
  ): Promise<MealEvent[][]> {
    const pages: MealEvent[][] = [];
    let cursor: string | null = null;
    do {
      const res: request.Response = await get({ limit, ...extra, ...(cursor ? { cursor } : {}) }).expect(200);
      expect(res.body.total).to.equal(null);
      expect(res.body).to.have.property('nextCursor');
      pages.push(res.body.items);
      if (res.body.nextCursor !== null) expect(res.body.items).to.have.length(limit);
      cursor = res.body.nextCursor;
      if (between) await between(pages.length, res.body.items);
      expect(pages.length).to.be.below(1000);
    } while (cursor !== null);
    return pages;
  }

  it('answers an empty page with nextCursor null and total null', async () => {
    const res = await get().expect(200);
    expect(res.body).to.deep.equal({ items: [], nextCursor: null, total: null });
  });

  it('returns events earliest first by date, then servingTime, then id (ties ordered by id)', async () => {
    const ids = await seed(db.knex, household, [
      { date: '2026-11-23', servingTime: '12:00' },
      { date: '2026-11-22', servingTime: '19:00' },
      { date: '2026-11-22', servingTime: '18:00' },
      { date: '2026-11-22', servingTime: '18:00' },
      { date: '2026-11-22', servingTime: '18:00' },
      { date: '2026-11-21', servingTime: '23:59' },
    ]);
    const res = await get().expect(200);
    const items: MealEvent[] = res.body.items;
    expect(items.map((e) => e.id)).to.have.members(ids);
    expect(items.map((e) => [e.date, e.servingTime])).to.deep.equal([
      ['2026-11-21', '23:59'],
      ['2026-11-22', '18:00'],
      ['2026-11-22', '18:00'],
      ['2026-11-22', '18:00'],
      ['2026-11-22', '19:00'],
      ['2026-11-23', '12:00'],
    ]);
    const tied = items.slice(1, 4).map((e) => e.id);
    expect(tied).to.deep.equal([...tied].sort());
    expect(res.body.nextCursor).to.equal(null);
  });

  it('answers the meal event fields exactly', async () => {
    await seed(db.knex, household, [{ date: '2026-11-22', servingTime: '18:30', eventType: 'EatingOut' }]);
    const [e] = (await get().expect(200)).body.items;
    expect(Object.keys(e)).to.deep.equal([
      'id',
      'householdId',
      'date',
      'eventType',
      'servingTime',
      'availableCookingMinutes',
      'notes',
      'participants',
      'createdAt',
      'updatedAt',
      'seriesId',
      'reminderMinutes',
    ]);
    expect(e).to.include({
      householdId: household,
      date: '2026-11-22',
      eventType: 'EatingOut',
      servingTime: '18:30',
      availableCookingMinutes: 30,
      notes: '',
      createdAt: '2026-11-22T09:00:00.000Z',
    });
    expect(e.participants).to.deep.equal([]);
  });

  it('defaults limit to 50', async () => {
    await seed(db.knex, household, spread(51));
    const res = await get().expect(200);
    expect(res.body.items).to.have.length(50);
    expect(res.body.nextCursor).to.be.a('string');
  });

  for (const limit of [1, 2, 50, 100]) {
    it(`visits every event exactly once and in order with limit ${limit}`, async () => {
      const ids = await seed(db.knex, household, spread(limit === 1 ? 41 : 237));
      await seed(db.knex, other, spread(10)); // another household's events never show
      const pages = await walk(limit);
      const all = pages.flat();
      expect(all.map((e) => e.id)).to.have.members(ids);
      expect(new Set(all.map((e) => e.id)).size).to.equal(ids.length);
      expect(all.map(sortKey)).to.deep.equal(all.map(sortKey).sort());
      expect(pages.at(-1)!.length).to.be.greaterThan(0);
    });
  }

  it('ends without an empty trailing page when the count is a multiple of the limit', async () => {
    await seed(db.knex, household, spread(100));
    const pages = await walk(50);
    expect(pages.map((p) => p.length)).to.deep.equal([50, 50]);
  });

  it('visits each event once when events are inserted between pages, before and after the cursor', async () => {
    const ids = await seed(db.knex, household, spread(60));
    const added: { before: string[]; after: string[] } = { before: [], after: [] };
    const pages = await walk(7, {}, async (page, items) => {
      if (page > 6) return;
      const last = items.at(-1)!;
      // One on the same date+time just before the cursor's id, one on an earlier day: both behind.
      const [b1, b2] = await seed(
        db.knex,
        household,
        [{ id: '00000000-0000-4000-8000-000000000000', date: last.date, servingTime: last.servingTime }, { date: '2026-10-01' }].slice(page === 1 ? 0 : 1),
      );
      added.before.push(...[b1, b2].filter((x): x is string => x !== undefined));
      // One tied with the cursor's date+time but a higher id, one on a later day: both ahead.
      const [a1, a2] = await seed(db.knex, household, [
        { id: `ffffffff-ffff-4fff-bfff-${String(page).padStart(12, '0')}`, date: last.date, servingTime: last.servingTime },
        { date: '2026-12-24' },
      ]);
      added.after.push(a1!, a2!);
    });
    const seen = pages.flat().map((e) => e.id);
    expect(new Set(seen).size).to.equal(seen.length);
    for (const id of ids) expect(seen).to.include(id);
    for (const id of added.after) expect(seen).to.include(id);
    for (const id of added.before) expect(seen).not.to.include(id);
    const keys = pages.flat().map(sortKey);
    expect(keys).to.deep.equal([...keys].sort());
  });

  it('keeps going when the event under the cursor is deleted', async () => {
    await seed(db.knex, household, spread(10));
    const first = await get({ limit: 3 }).expect(200);
    await db.knex('mealEvents').where({ id: first.body.items[2].id }).delete();
    const second = await get({ limit: 3, cursor: first.body.nextCursor }).expect(200);
    const all = (await get({ limit: 100 }).expect(200)).body.items as MealEvent[];
    expect(second.body.items.map((e: MealEvent) => e.id)).to.deep.equal(all.slice(2, 5).map((e) => e.id));
  });

  describe('from and to', () => {
    beforeEach(async () => {
      await seed(db.knex, household, [
        { date: '2026-10-31', servingTime: '23:59' },
        { date: '2026-11-01', servingTime: '00:00' },
        { date: '2026-11-15' },
        { date: '2026-11-30', servingTime: '23:59' },
        { date: '2026-12-01', servingTime: '00:00' },
      ]);
    });
    const dates = (res: request.Response) => res.body.items.map((e: MealEvent) => e.date);

    it('includes both edge days', async () => {
      expect(dates(await get({ from: '2026-11-01', to: '2026-11-30' }).expect(200))).to.deep.equal(['2026-11-01', '2026-11-15', '2026-11-30']);
    });
    it('takes from alone and to alone', async () => {
      expect(dates(await get({ from: '2026-11-30' }).expect(200))).to.deep.equal(['2026-11-30', '2026-12-01']);
      expect(dates(await get({ to: '2026-11-01' }).expect(200))).to.deep.equal(['2026-10-31', '2026-11-01']);
    });
    it('takes from equal to to as one day', async () => {
      expect(dates(await get({ from: '2026-11-15', to: '2026-11-15' }).expect(200))).to.deep.equal(['2026-11-15']);
    });
    it('answers an empty page for a range without events', async () => {
      expect((await get({ from: '2027-01-01' }).expect(200)).body).to.deep.equal({ items: [], nextCursor: null, total: null });
    });
    it('keeps the filter of the first page when the next request sends only the cursor', async () => {
      const first = await get({ from: '2026-11-01', to: '2026-11-30', limit: 2 }).expect(200);
      expect(dates(first)).to.deep.equal(['2026-11-01', '2026-11-15']);
      const second = await get({ cursor: first.body.nextCursor, limit: 2 }).expect(200);
      expect(dates(second)).to.deep.equal(['2026-11-30']);
      expect(second.body.nextCursor).to.equal(null);
    });
    it('accepts the same from/to again next to the cursor', async () => {
      const first = await get({ from: '2026-11-01', limit: 2 }).expect(200);
      const second = await get({ from: '2026-11-01', cursor: first.body.nextCursor, limit: 10 }).expect(200);
      expect(dates(second)).to.deep.equal(['2026-11-30', '2026-12-01']);
    });
    it('answers 400 invalid_cursor when from or to change under a cursor', async () => {
      const first = await get({ from: '2026-11-01', limit: 1 }).expect(200);
      for (const q of [{ from: '2026-10-01' }, { to: '2026-11-30' }, { from: '2026-11-01', to: '2026-12-31' }]) {
        const res = await get({ ...q, cursor: first.body.nextCursor }).expect(400);
        expect(res.body.code).to.equal('invalid_cursor');
      }
    });
  });

  describe('400 for what does not parse', () => {
    const expectCode = async (query: Record<string, string | number>, code: string) => {
      const res = await get(query).expect(400);
      expect(res.headers['content-type']).to.match(/application\/problem\+json/);
      expect(res.body.code, JSON.stringify(query)).to.equal(code);
    };

    for (const limit of ['0', '101', '-1', 'abc', '1.5', '', '50x']) {
      it(`answers 400 validation_failed for limit=${limit}`, () => expectCode({ limit }, 'validation_failed'));
    }
    for (const d of ['2026-02-30', '2026-13-01', '2026-11-1', 'yesterday', '0000-01-01', '2026-11-22T00:00:00Z', '']) {
      it(`answers 400 validation_failed for from=${d} and to=${d}`, async () => {
        await expectCode({ from: d }, 'validation_failed');
        await expectCode({ to: d }, 'validation_failed');
      });
    }
    it('accepts 29 February in a leap year', () => get({ from: '2028-02-29' }).expect(200));

    describe('dates outside years 1900–9999 or the calendar (never reaching PostgreSQL)', () => {
      for (const d of ['0000-01-01', '1899-12-31', '2026-02-30', '2026-04-31', '2027-02-29', '99999-01-01', '+02026-01-01', '-2026-01-01', '10000-01-01']) {
        for (const field of ['from', 'to']) {
          it(`answers 400 validation_failed naming ${field} for ${field}=${d}`, async () => {
            const res = await get({ [field]: d }).expect(400);
            expect(res.body.code).to.equal('validation_failed');
            expect([...new Set(res.body.errors.map((e: { field: string }) => e.field))]).to.deep.equal([field]);
          });
        }
      }
      it('accepts the edges 1900-01-01 and 9999-12-31', async () => {
        await seed(db.knex, household, [{ date: '1900-01-01' }, { date: '9999-12-31', servingTime: '23:59' }]);
        const res = await get({ from: '1900-01-01', to: '9999-12-31', limit: 1 }).expect(200);
        expect(res.body.items.map((e: MealEvent) => e.date)).to.deep.equal(['1900-01-01']);
        const next = await get({ cursor: res.body.nextCursor }).expect(200);
        expect(next.body.items.map((e: MealEvent) => [e.date, e.servingTime])).to.deep.equal([['9999-12-31', '23:59']]);
      });
    });
    it('answers 400 validation_failed when from is later than to', () => expectCode({ from: '2026-11-02', to: '2026-11-01' }, 'validation_failed'));
    it('answers 400 validation_failed for a householdId that is not a uuid', async () => {
      const res = await get({}, owner, '/api/v1/households/not-a-uuid/events').expect(400);
      expect(res.body.code).to.equal('validation_failed');
    });

    describe('cursors the service did not hand out', () => {
      let good: string;
      beforeEach(async () => {
        await seed(db.knex, household, spread(5));
        good = (await get({ limit: 2 }).expect(200)).body.nextCursor;
      });
      const flip = (s: string, at: number) => s.slice(0, at) + (s[at] === 'A' ? 'B' : 'A') + s.slice(at + 1);

      it('follows a good one, again with the same answer (the second time from the cursors that held)', async () => {
        const first = await get({ cursor: good }).expect(200);
        const again = await get({ cursor: good }).expect(200);
        expect(again.text).to.equal(first.text);
        expect(first.body.items).to.have.length(3);
      });
      for (const [name, make] of [
        ['garbage', () => 'garbage'],
        ['empty', () => ''],
        ['a number', () => '12345'],
        [
          'base64 of a plausible payload without a signature',
          () => Buffer.from('[1,"2026-11-01","18:00","00000000-0000-4000-8000-000000000000",null,null]').toString('base64url'),
        ],
        ['a tampered payload', () => flip(good, 3)],
        ['a tampered signature', () => flip(good, good.length - 5)],
        ['a truncated signature', () => good.slice(0, -2)],
        ['an extra part', () => `${good}.x`],
        ['too long', () => `${good}${'A'.repeat(600)}`],
        ['non-ASCII', () => `${good}é`],
      ] as [string, () => string][]) {
        it(`answers 400 invalid_cursor for ${name}`, () => expectCode({ cursor: make() }, 'invalid_cursor'));
      }
      it("answers 400 invalid_cursor for another household's cursor", async () => {
        await seed(db.knex, other, spread(5));
        const theirs = (await get({ limit: 1 }, owner, `/api/v1/households/${other}/events`).expect(200)).body.nextCursor;
        await get({ cursor: theirs }, owner, `/api/v1/households/${other}/events`).expect(200);
        await expectCode({ cursor: theirs }, 'invalid_cursor');
      });
      it('answers 400 invalid_cursor for a cursor signed with another secret', async () => {
        const otherApp = buildEventsApp({ knex: db.knex, clock: new ManualClock(), access, cursorSecret: 'another secret' }).app;
        const foreign = (await request(otherApp).get(path).query({ limit: 1 }).set('X-Test-User', owner).expect(200)).body.nextCursor;
        await expectCode({ cursor: foreign }, 'invalid_cursor');
      });
    });
  });

  describe('who may read', () => {
    it('lets a Junior read', async () => {
      await seed(db.knex, household, spread(2));
      expect((await get({}, junior).expect(200)).body.items).to.have.length(2);
    });
    it('answers 404 not_found to a non-member, and to anyone for an unknown household', async () => {
      const res = await get({}, stranger).expect(404);
      expect(res.body.code).to.equal('not_found');
      await get({}, owner, `/api/v1/households/${randomUUID()}/events`).expect(404);
    });
    it('answers 401 without a session', async () => {
      const res = await request(app).get(path).expect(401);
      expect(res.body.code).to.equal('unauthenticated');
    });
  });
});
