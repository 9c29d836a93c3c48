import { randomUUID } from 'node:crypto';
import { newRequestContext, runWithContext } from '@svc/http-kit';
import { createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { type EventPosition, type MealEvent, MealEventModel, migrations, ObjectionMealEventStore, type PageRequest, SeriesStore } from '../src/index.js';

describe('ObjectionMealEventStore', () => {
  let db: TestDatabase;
  let store: ObjectionMealEventStore;
  const household = randomUUID();

  before(async () => {
    db = await createTestDatabase([migrations]);
    store = new ObjectionMealEventStore(db.knex);
  });
  after(() => db.destroy());

  /** The plan PostgreSQL would pick if it could avoid sorting and full scans at all. */
  async function plan(q: Knex.QueryBuilder): Promise<string> {
    const { sql, bindings } = q.toSQL();
    return db.knex.transaction(async (trx) => {
      await trx.raw('set local enable_seqscan = off');
      await trx.raw('set local enable_sort = off');
      const res = await trx.raw(`explain ${sql}`, bindings as Knex.RawBinding[]);
      return (res.rows as Record<string, string>[]).map((r) => Object.values(r)[0]).join('\n');
    });
  }

  const position = { date: '2026-11-22', servingTime: '18:00', id: randomUUID() };
  const requests: [string, PageRequest][] = [
    ['the first page', { from: null, to: null, after: null, limit: 50 }],
    ['a page after a cursor', { from: null, to: null, after: position, limit: 50 }],
    ['a filtered page after a cursor', { from: '2026-11-01', to: '2026-12-31', after: position, limit: 100 }],
  ];
  for (const [name, req] of requests) {
    it(`reads ${name} straight from the ordering index, without a sort`, async () => {
      const text = await plan(store.pageQuery(household, req));
      expect(text).to.match(/Index Scan using meal_events_household_order_idx/);
      expect(text).not.to.match(/Sort|Seq Scan/);
      if (req.after) expect(text).to.match(/Index Cond: .*ROW\(date, serving_time, id\) >/);
    });
  }

  it('gives the API shape from a model read without the formatted columns too (select *)', async () => {
    const at = new Date('2026-11-22T09:00:00.000Z');
    const values = { date: '2026-12-31', eventType: 'Away' as const, servingTime: '07:05', availableCookingMinutes: 0, notes: '', participants: [] };
    const created = await store.create(household, randomUUID(), values, at);
    const row = await MealEventModel.bindKnex(db.knex).query().findById(created.id);
    expect(row?.toApi()).to.deep.equal(created);
    expect(JSON.parse(JSON.stringify(row))).to.deep.equal(created);
    expect(await store.get(household, created.id)).to.deep.equal(created);
    expect(await store.get(randomUUID(), created.id)).to.equal(undefined);
  });

  it('reads limit + 1 rows to know whether another page follows', async () => {
    const { sql } = store.pageQuery(household, requests[0]![1]).toSQL();
    expect(sql).to.match(/limit \?/);
    expect(store.pageQuery(household, requests[0]![1]).toSQL().bindings).to.include(51);
  });

  it("page runs pageQuery inside one prepared statement: its text, its values in the order of knex's bindings and then the limit, for every shape", async () => {
    const after = { date: '2026-11-22', servingTime: '18:00', id: randomUUID() };
    for (const from of [null, '2026-11-01']) {
      for (const to of [null, '2026-12-31']) {
        for (const a of [null, after]) {
          const req: PageRequest = { from, to, after: a, limit: 7 };
          const native = store.pageQuery(household, req).toSQL().toNative();
          const statement = store.pageStatement(household, req);
          expect(statement.text).to.contain(`(${native.sql}) q`);
          expect(statement.values).to.deep.equal([...native.bindings, 7]);
          expect(statement.name).to.match(/^meal_events_page_[a-z]+$/);
        }
      }
    }
  });

  it('answers each item of a page exactly as a single read of it does', async () => {
    const own = randomUUID();
    const at = new Date('2026-11-22T09:00:00.123Z');
    for (let i = 0; i < 5; i++) {
      const values = {
        date: `2026-12-0${i + 1}`,
        eventType: 'Guests' as const,
        servingTime: '18:30',
        availableCookingMinutes: 20 + i,
        notes: `n${i}`,
        participants: [{ memberId: null, name: `G${i}` }],
      };
      await store.create(own, randomUUID(), values, new Date(at.getTime() + i));
    }
    const first = await store.page(own, { from: null, to: null, after: null, limit: 3 });
    const firstItems = JSON.parse(first.items) as MealEvent[];
    expect(firstItems).to.have.length(3);
    const last = firstItems.at(-1)!;
    expect(first.last).to.deep.equal({ date: last.date, servingTime: last.servingTime, id: last.id });
    const rest = await store.page(own, { from: null, to: '2026-12-31', after: first.last, limit: 3 });
    expect(rest.last).to.equal(null);
    const items = [...firstItems, ...(JSON.parse(rest.items) as MealEvent[])];
    expect(items.map((e) => e.notes)).to.deep.equal(['n0', 'n1', 'n2', 'n3', 'n4']);
    for (const item of items) expect(item).to.deep.equal(await store.get(own, item.id));
    expect(items[1]!.createdAt).to.equal('2026-11-22T09:00:00.124Z');
  });

  it("writes every page byte for byte as the model answers its rows (select *, toApi, JSON.stringify), and finds the model's next position", async () => {
    const own = randomUUID();
    const members = [randomUUID(), randomUUID()];
    const notes = ['', 'plain', 'quote " back\\slash / slash', 'line\nbreak\ttab\r\u0001\u001f\u007f', 'ünïcödé 🍲 \u2028\u2029', 'x'.repeat(500)];
    const at = new Date('2026-11-22T09:00:00.999Z');
    // Three events at one date and time: the id decides their order.
    for (let i = 0; i < 14; i++) {
      const values = {
        date: `2026-12-${String(1 + Math.floor(i / 3)).padStart(2, '0')}`,
        eventType: (['Guests', 'Away', 'Activity'] as const)[i % 3]!,
        servingTime: i % 3 === 0 ? '07:05' : '18:30',
        availableCookingMinutes: i * 7,
        notes: notes[i % notes.length]!,
        participants:
          i % 4 === 0
            ? []
            : [
                { memberId: members[i % 2]!, name: `Mëmber "${i}"` },
                // A departed member: stored with its former id, which is never answered.
                { memberId: null, name: 'Guest\\', ...(i % 2 ? { formerMemberId: members[0]! } : {}) },
              ],
        reminderMinutes: i % 5 === 0 ? null : i * 10,
      };
      await store.create(own, randomUUID(), values, new Date(at.getTime() + i * 1000));
    }
    // A series of three occurrences: their seriesId.
    await new SeriesStore(db.knex).create(
      {
        id: randomUUID(),
        householdId: own,
        repeat: { frequency: 'weekly', interval: 1, byDay: ['Wed'], until: null, count: 3 },
        template: {
          date: '2026-12-02',
          eventType: 'Guests',
          servingTime: '18:30',
          availableCookingMinutes: 5,
          notes: 'série',
          participants: [],
          reminderMinutes: 15,
        },
        writtenThrough: '2026-12-16',
      },
      ['2026-12-02', '2026-12-09', '2026-12-16'].map((date) => ({ id: randomUUID(), date })),
      at,
    );
    // Microseconds in a timestamp: cut to the millisecond, as pg's driver cuts them.
    await db.knex.raw(`update meal_events set updated_at = '2026-11-22 09:00:00.999999+00' where household_id = ?`, [own]);
    const Event = MealEventModel.bindKnex(db.knex);
    let pages = 0;
    for (const limit of [1, 4, 17, 18, 100]) {
      for (const [from, to] of [
        [null, null],
        ['2026-12-02', null],
        [null, '2026-12-03'],
        ['2026-12-02', '2026-12-09'],
        ['2027-01-01', null],
      ] as const) {
        let after: PageRequest['after'] = null;
        for (let turn = 0; turn < 20; turn++) {
          const req: PageRequest = { from, to, after, limit };
          const page = await store.page(own, req);
          // The model path: every column (`select *`, pg's own Date and time parsing), the model's toApi.
          const q = Event.query().where({ householdId: own });
          if (from) q.where('date', '>=', from);
          if (to) q.where('date', '<=', to);
          if (after) q.whereRaw('(date, serving_time, id) > (?::date, ?::time, ?::uuid)', [after.date, after.servingTime, after.id]);
          const rows = await q.orderBy(['date', 'servingTime', 'id']).limit(limit + 1);
          const items = rows.slice(0, limit).map((r) => r.toApi());
          expect(page.items, JSON.stringify(req)).to.equal(JSON.stringify(items));
          const last = items.at(-1);
          expect(page.last, JSON.stringify(req)).to.deep.equal(
            rows.length > limit && last ? { date: last.date, servingTime: last.servingTime, id: last.id } : null,
          );
          pages++;
          if (!page.last) break;
          after = page.last;
        }
      }
    }
    expect(pages).to.be.greaterThan(40);
    const all = JSON.parse((await store.page(own, { from: null, to: null, after: null, limit: 100 })).items) as MealEvent[];
    expect(all).to.have.length(17);
    expect(all.filter((e) => e.seriesId !== null)).to.have.length(3);
    expect(all.filter((e) => e.reminderMinutes !== null).length).to.be.greaterThan(3);
    expect(JSON.stringify(all)).not.to.contain('formerMemberId');
    expect((await store.page(randomUUID(), { from: null, to: null, after: null, limit: 5 })).items).to.equal('[]');
  });

  it('page reads from the ordering index, limit + 1 rows', async () => {
    const { text, values } = store.pageStatement(household, { from: null, to: null, after: position, limit: 50 });
    const explained = await db.knex.transaction(async (trx) => {
      await trx.raw('set local enable_seqscan = off');
      const bindings: unknown[] = [];
      const sql = text.replace(/\$(\d+)/g, (_m, n: string) => {
        bindings.push(values[Number(n) - 1]);
        return '?';
      });
      const res = await trx.raw(`explain ${sql}`, bindings as Knex.RawBinding[]);
      return (res.rows as Record<string, string>[]).map((r) => Object.values(r)[0]).join('\n');
    });
    expect(explained).to.match(/Index Scan using meal_events_household_order_idx/);
    expect(explained).to.match(/Limit/);
    expect(explained).not.to.match(/Seq Scan/);
    expect(values.at(-1)).to.equal(50);
    expect(values.at(-2)).to.equal(51);
  });

  describe('the list version and the page cache', () => {
    const version = async (hh: string) =>
      ((await db.knex('meal_event_list_versions').where({ household_id: hh }).first('version')) as { version: string } | undefined)?.version ?? '0';
    const values = (notes: string) => ({
      date: '2026-12-01',
      eventType: 'Guests' as const,
      servingTime: '18:00',
      availableCookingMinutes: 10,
      notes,
      participants: [],
    });

    it("moves the version with every statement that changes the household's events, whoever writes, and keeps no row for an empty list", async () => {
      const hh = randomUUID();
      const other = randomUUID();
      expect(await version(hh)).to.equal('0');
      const a = randomUUID();
      await store.create(hh, a, values('a'), new Date());
      await store.create(other, randomUUID(), values('other'), new Date());
      const v1 = await version(hh);
      expect(Number(v1)).to.be.greaterThan(0);
      await store.replace(hh, a, values('a2'), new Date());
      const v2 = await version(hh);
      expect(Number(v2)).to.be.greaterThan(Number(v1));
      // A write that is not the service's (a script, another instance) moves it too.
      await db.knex('meal_events').where({ household_id: hh }).update({ notes: 'by hand' });
      const v3 = await version(hh);
      expect(Number(v3)).to.be.greaterThan(Number(v2));
      // An update that changes no row of this household leaves it alone.
      await db.knex('meal_events').where({ household_id: randomUUID() }).update({ notes: 'nobody' });
      expect(await version(hh)).to.equal(v3);
      await store.create(hh, randomUUID(), values('b'), new Date());
      await store.remove(hh, a);
      const v4 = await version(hh);
      expect(Number(v4)).to.be.greaterThan(Number(v3));
      await db.knex('meal_events').where({ household_id: hh }).delete();
      expect(await db.knex('meal_event_list_versions').where({ household_id: hh })).to.deep.equal([]);
      expect(Number(await version(other))).to.be.greaterThan(0);
      // A TRUNCATE fires no DELETE trigger: its own trigger leaves every list at version 0 (empty).
      await db.knex.raw('truncate meal_events');
      expect(await version(other)).to.equal('0');
      expect(await db.knex('meal_event_list_versions')).to.deep.equal([]);
    });

    /** The page as a request whose read loaded `lent` as the list version (none: undefined), and the statements it ran. */
    const readAs = async (on: ObjectionMealEventStore, hh: string, lent: string | undefined, limit = 10) => {
      const ctx = newRequestContext('test');
      const page = await runWithContext(ctx, () => on.page(hh, { from: null, to: null, after: null, limit }, lent));
      return { page, statements: ctx.db.queries };
    };

    it("a walk over every page (walkPage, the export) reads each page without keeping it: the list route's kept page stays", async () => {
      // Room for about one page of ten short events: any page kept beside it pushes it out.
      const small = new ObjectionMealEventStore(db.knex, { pageCacheBytes: 8_000 });
      const hh = randomUUID();
      for (let i = 0; i < 12; i++) await small.create(hh, randomUUID(), values(`event ${i}`), new Date());
      const v = await version(hh);
      const kept = await readAs(small, hh, v);
      expect(kept.statements).to.equal(1);
      expect((await readAs(small, hh, v)).statements, 'kept').to.equal(0);
      const walk = async (read: (after: EventPosition | null) => Promise<{ items: string; last: EventPosition | null }>) => {
        let after: EventPosition | null = null;
        let n = 0;
        do {
          const page = await read(after);
          n += JSON.parse(page.items).length;
          after = page.last;
        } while (after);
        return n;
      };
      expect(await walk((after) => small.walkPage(hh, { from: null, to: null, after, limit: 1 }))).to.equal(12);
      const again = await readAs(small, hh, v);
      expect(again.statements, 'the walk left the kept page alone').to.equal(0);
      expect(again.page).to.equal(kept.page);
      // The same walk through `page` keeps each page it reads, and pushes the list's page out.
      expect(await walk((after) => small.page(hh, { from: null, to: null, after, limit: 1 }, v))).to.equal(12);
      expect((await readAs(small, hh, v)).statements, 'pushed out by a walk that keeps its pages').to.equal(1);
    });

    it("answers a page again from the cache only under the version the request's session read lent: the same object", async () => {
      const hh = randomUUID();
      await store.create(hh, randomUUID(), values('first'), new Date());
      const v1 = await version(hh);
      const first = await readAs(store, hh, v1);
      expect(first.statements).to.equal(1);
      expect(JSON.parse(first.page.items)).to.have.length(1);
      const again = await readAs(store, hh, v1);
      expect(again.page, 'the same page object').to.equal(first.page);
      expect(again.statements, 'the same version: from the cache').to.equal(0);
      // Nothing lent (outside a request, or the session read lent nothing): a statement, the same page read anew.
      const unlent = await readAs(store, hh, undefined);
      expect(unlent.statements).to.equal(1);
      expect(unlent.page).not.to.equal(first.page);
      expect(unlent.page).to.deep.equal(first.page);
      // The list changed (here by hand, as another instance or a script would): the next request's
      // session read lends the new version, and the page is read again.
      await db.knex('meal_events').where({ household_id: hh }).update({ notes: 'changed' });
      const v2 = await version(hh);
      const changed = await readAs(store, hh, v2);
      expect(changed.statements).to.equal(1);
      expect(changed.page.items).to.contain('"notes":"changed"');
      // A request that still saw the old version (its snapshot was before the change) reads again.
      expect((await readAs(store, hh, v1)).statements).to.equal(1);
      const cached = await readAs(store, hh, v2);
      expect(cached.statements).to.equal(0);
      expect(cached.page).to.deep.equal(changed.page);
    });

    it('keeps no more than its budget of pages, and none with a budget of 0', async () => {
      const hh = randomUUID();
      for (let i = 0; i < 3; i++) await store.create(hh, randomUUID(), values(`n${i}`.repeat(100)), new Date());
      const v = await version(hh);
      for (const [budget, cachedAgain] of [
        [0, false],
        [200, false],
        [1_000_000, true],
      ] as const) {
        const small = new ObjectionMealEventStore(db.knex, { pageCacheBytes: budget });
        expect((await readAs(small, hh, v, 3)).statements).to.equal(1);
        expect((await readAs(small, hh, v, 3)).statements, `budget ${budget}`).to.equal(cachedAgain ? 0 : 1);
      }
    });
  });
});
