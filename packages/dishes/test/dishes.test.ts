import { randomUUID } from 'node:crypto';
import type { HouseholdRole } from '@svc/contracts';
import { expect } from 'chai';
import request from 'supertest';
import { DISH_LIMITS } from '../src/index.js';
import { dishBody, type Harness, startHarness } from './helpers.js';

describe('dishes over HTTP', () => {
  let h: Harness;
  let householdId: string;
  let owner: string;
  let adult: string;
  let junior: string;
  let stranger: string;
  const base = () => `/api/v1/households/${householdId}/dishes`;

  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.db.destroy();
  });
  beforeEach(async () => {
    await h.db.truncate();
    householdId = h.households.household();
    owner = h.households.member(householdId, 'Owner');
    adult = h.households.member(householdId, 'Adult');
    junior = h.households.member(householdId, 'Junior');
    stranger = h.households.member(h.households.household(), 'Owner');
  });

  const as = (user: string | undefined, req: request.Test) => (user ? req.set('X-Test-User', user) : req);
  async function create(body: Record<string, unknown> = dishBody(), user = owner) {
    const res = await as(user, request(h.app).post(base())).send(body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res;
  }

  describe('create, read, replace, delete', () => {
    it('answers 201 with the dish, its Location and an ETag its GET repeats', async () => {
      const res = await create();
      expect(res.body).to.include({ householdId, name: 'Fish cakes with potatoes', category: 'Fish', activeMinutes: 25, priceClass: 'Cheap', madeAgain: true });
      expect(res.body.tags).to.deep.equal(['classic']);
      expect(res.body.createdAt).to.equal('2026-12-01T17:00:00.000Z');
      expect(res.body.updatedAt).to.equal(res.body.createdAt);
      expect(Object.keys(res.body)).to.deep.equal([
        'id',
        'householdId',
        'name',
        'category',
        'activeMinutes',
        'priceClass',
        'tags',
        'madeAgain',
        'createdAt',
        'updatedAt',
      ]);
      expect(res.headers.location).to.equal(`${base()}/${res.body.id}`);
      expect(res.headers.etag).to.be.a('string');
      const got = await as(junior, request(h.app).get(res.headers.location as string));
      expect(got.status).to.equal(200);
      expect(got.body).to.deep.equal(res.body);
      expect(got.headers.etag).to.equal(res.headers.etag);
    });

    it('fills in tags [] and madeAgain false when left out', async () => {
      const res = await create({ name: 'Soup', category: 'Soup', activeMinutes: 10, priceClass: 'Mid' });
      expect(res.body.tags).to.deep.equal([]);
      expect(res.body.madeAgain).to.equal(false);
    });

    it('replaces every field (id and createdAt stay) and accepts what a GET answered', async () => {
      const created = await create();
      h.clock.advance(60_000);
      const got = await as(owner, request(h.app).get(`${base()}/${created.body.id}`));
      const res = await as(adult, request(h.app).put(`${base()}/${created.body.id}`)).send({
        ...got.body,
        name: 'Salmon',
        category: 'Fish',
        tags: undefined,
        madeAgain: undefined,
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.include({
        id: created.body.id,
        name: 'Salmon',
        madeAgain: false,
        createdAt: created.body.createdAt,
        updatedAt: '2026-12-01T17:01:00.000Z',
      });
      expect(res.body.tags).to.deep.equal([]);
      const again = await as(owner, request(h.app).get(`${base()}/${created.body.id}`));
      expect(again.body).to.deep.equal(res.body);
      expect(again.headers.etag).to.equal(res.headers.etag);
    });

    it('answers 412 precondition_failed to a PUT or DELETE with a stale If-Match, and writes nothing', async () => {
      const created = await create();
      const url = `${base()}/${created.body.id}`;
      const stale = created.headers.etag as string;
      const changed = await as(owner, request(h.app).put(url))
        .set('If-Match', stale)
        .send(dishBody({ name: 'Changed' }));
      expect(changed.status).to.equal(200);
      expect(changed.headers.etag).to.not.equal(stale);
      const late = await as(owner, request(h.app).put(url))
        .set('If-Match', stale)
        .send(dishBody({ name: 'Late' }));
      expect(late.status).to.equal(412);
      expect(late.body.code).to.equal('precondition_failed');
      const lateDelete = await as(owner, request(h.app).delete(url)).set('If-Match', stale);
      expect(lateDelete.status).to.equal(412);
      const now = await as(owner, request(h.app).get(url));
      expect(now.body.name).to.equal('Changed');
      expect(
        (
          await as(owner, request(h.app).put(url))
            .set('If-Match', '*')
            .send(dishBody({ name: 'Star' }))
        ).status,
      ).to.equal(200);
      const current = (await as(owner, request(h.app).get(url))).headers.etag as string;
      expect((await as(owner, request(h.app).delete(url)).set('If-Match', current)).status).to.equal(204);
      // If-Match on a deleted dish: 404.
      const gone = await as(owner, request(h.app).put(url)).set('If-Match', '*').send(dishBody());
      expect(gone.status).to.equal(404);
    });

    it('deletes with 204; the dish is gone (404 after), and a second delete is 404', async () => {
      const created = await create();
      const url = `${base()}/${created.body.id}`;
      expect((await as(adult, request(h.app).delete(url))).status).to.equal(204);
      expect((await as(owner, request(h.app).get(url))).status).to.equal(404);
      const again = await as(owner, request(h.app).delete(url));
      expect(again.status).to.equal(404);
      expect(again.body.code).to.equal('not_found');
    });

    it("never shows, changes or deletes another household's dish (404)", async () => {
      const otherHousehold = h.households.household();
      const otherOwner = h.households.member(otherHousehold, 'Owner');
      const theirs = await as(otherOwner, request(h.app).post(`/api/v1/households/${otherHousehold}/dishes`)).send(dishBody());
      const url = `${base()}/${theirs.body.id}`;
      expect((await as(owner, request(h.app).get(url))).status).to.equal(404);
      expect((await as(owner, request(h.app).put(url)).send(dishBody({ name: 'Mine now' }))).status).to.equal(404);
      expect((await as(owner, request(h.app).delete(url))).status).to.equal(404);
      const still = await as(otherOwner, request(h.app).get(`/api/v1/households/${otherHousehold}/dishes/${theirs.body.id}`));
      expect(still.body.name).to.equal('Fish cakes with potatoes');
    });
  });

  describe('validation', () => {
    const bad: [string, Record<string, unknown>, string, string?][] = [
      ['an empty name', { name: '' }, 'name'],
      // Longer than the longest accepted value: value_too_long, as for every string of the API.
      ['a name of 101 characters', { name: 'x'.repeat(101) }, 'name', 'value_too_long'],
      ['a name on two lines', { name: 'Fish\ncakes' }, 'name'],
      ['an unknown category', { category: 'Dessert' }, 'category'],
      ['0 active minutes', { activeMinutes: 0 }, 'activeMinutes'],
      ['601 active minutes', { activeMinutes: 601 }, 'activeMinutes'],
      ['fractional minutes', { activeMinutes: 12.5 }, 'activeMinutes'],
      ['an unknown price class', { priceClass: 'Free' }, 'priceClass'],
      ['21 tags', { tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, 'tags'],
      ['an empty tag', { tags: [''] }, 'tags'],
      ['a tag of 41 characters', { tags: ['x'.repeat(41)] }, 'tags', 'value_too_long'],
      ['madeAgain not a bool', { madeAgain: 'yes' }, 'madeAgain'],
      ['no name', { name: undefined }, 'name'],
    ];
    for (const [what, change, field, code = 'validation_failed'] of bad) {
      it(`answers 400 ${code} to ${what} (POST and PUT), writing nothing`, async () => {
        const res = await as(owner, request(h.app).post(base())).send(dishBody(change));
        expect(res.status).to.equal(400);
        expect(res.body.code).to.equal(code);
        expect(JSON.stringify(res.body.errors)).to.include(field);
        const created = await create();
        const put = await as(owner, request(h.app).put(`${base()}/${created.body.id}`)).send(dishBody(change));
        expect(put.status).to.equal(400);
        expect(put.body.code).to.equal(code);
        expect(await h.db.knex('dishes').count({ n: '*' }).first()).to.deep.equal({ n: '1' });
      });
    }

    it('accepts the bounds: 1 and 100 characters, 1 and 600 minutes, 20 tags of 40', async () => {
      await create(dishBody({ name: 'x', activeMinutes: 1 }));
      await create(dishBody({ name: 'y'.repeat(100), activeMinutes: 600, tags: Array.from({ length: 20 }, (_, i) => `${i}`.padEnd(40, 'z')) }));
    });
  });

  describe('roles', () => {
    type Who = HouseholdRole | 'non-member' | 'signed out';
    const users = (): Record<Who, string | undefined> => ({ Owner: owner, Adult: adult, Junior: junior, 'non-member': stranger, 'signed out': undefined });
    const ops: { name: string; write: boolean; ok: number; call: (id: string) => request.Test }[] = [
      { name: 'list', write: false, ok: 200, call: () => request(h.app).get(base()) },
      { name: 'get', write: false, ok: 200, call: (id) => request(h.app).get(`${base()}/${id}`) },
      {
        name: 'create',
        write: true,
        ok: 201,
        call: () =>
          request(h.app)
            .post(base())
            .send(dishBody({ name: 'New' })),
      },
      {
        name: 'replace',
        write: true,
        ok: 200,
        call: (id) =>
          request(h.app)
            .put(`${base()}/${id}`)
            .send(dishBody({ name: 'New' })),
      },
      { name: 'delete', write: true, ok: 204, call: (id) => request(h.app).delete(`${base()}/${id}`) },
    ];
    for (const who of ['Owner', 'Adult', 'Junior', 'non-member', 'signed out'] as Who[]) {
      for (const op of ops) {
        const status = who === 'signed out' ? 401 : who === 'non-member' ? 404 : who === 'Junior' && op.write ? 403 : op.ok;
        it(`${op.name}: ${who} gets ${status}`, async () => {
          const created = await create();
          const res = await as(users()[who], op.call(created.body.id));
          expect(res.status, JSON.stringify(res.body)).to.equal(status);
          const codes: Record<number, string> = { 401: 'unauthenticated', 403: 'forbidden', 404: 'not_found' };
          if (codes[status]) {
            expect(res.body.code).to.equal(codes[status]);
            // A refused write leaves the dishes as they were.
            const rows = await h.db.knex('dishes').select('name');
            expect(rows.map((r) => r.name)).to.deep.equal(['Fish cakes with potatoes']);
          }
        });
      }
    }
  });

  describe('token scopes', () => {
    it('opens GETs to plans:read and writes to plans:write only', async () => {
      const created = await create();
      const token = (scopes: string, req: request.Test) => as(owner, req).set('X-Test-Scopes', scopes);
      expect((await token('plans:read', request(h.app).get(base()))).status).to.equal(200);
      expect((await token('plans:read', request(h.app).get(`${base()}/${created.body.id}`))).status).to.equal(200);
      expect((await token('plans:read', request(h.app).get('/api/v1/starter-dishes'))).status).to.equal(200);
      const refused = await token('plans:read,rules:write', request(h.app).post(base()).send(dishBody()));
      expect(refused.status).to.equal(403);
      expect(refused.body.code).to.equal('insufficient_scope');
      expect((await token('plans:write', request(h.app).get(base()))).status).to.equal(403);
      expect((await token('rules:read', request(h.app).get('/api/v1/starter-dishes'))).status).to.equal(403);
      expect((await token('plans:write', request(h.app).post(base()).send(dishBody()))).status).to.equal(201);
      expect((await token('plans:write', request(h.app).put(`${base()}/${created.body.id}`).send(dishBody()))).status).to.equal(200);
      expect((await token('plans:write', request(h.app).delete(`${base()}/${created.body.id}`))).status).to.equal(204);
    });
  });

  describe('the list', () => {
    const names = ['banana bread', 'Apple pie', 'apple crumble', 'Cherry soup', 'Ærtesuppe', 'zucchini', 'APPLE PIE', '50% off_soup', '50 x soup'];
    async function seed(): Promise<void> {
      for (const [i, name] of names.entries()) await create(dishBody({ name, category: i % 2 ? 'Soup' : 'Fish' }));
    }
    async function all(query: Record<string, string | number>, user = owner): Promise<{ pages: number; items: { id: string; name: string }[] }> {
      const items: { id: string; name: string }[] = [];
      let cursor: string | null | undefined;
      let pages = 0;
      do {
        const res = await as(user, request(h.app).get(base())).query(cursor ? { ...query, cursor } : query);
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        expect(res.body.items.length).to.be.at.most(Number(query.limit ?? 50));
        items.push(...res.body.items);
        cursor = res.body.nextCursor;
        pages++;
      } while (cursor);
      return { pages, items };
    }
    const byNameThenId = (a: { name: string; id: string }, b: { name: string; id: string }) => {
      const x = a.name.toLowerCase();
      const y = b.name.toLowerCase();
      return x < y ? -1 : x > y ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
    };

    it('orders by name ignoring letter case, then id; pages hold every dish once; nextCursor null on the last page', async () => {
      await seed();
      const one = await as(junior, request(h.app).get(base()));
      expect(one.body.nextCursor).to.equal(null);
      expect(one.body.items).to.have.length(names.length);
      const expected = [...one.body.items].sort(byNameThenId);
      expect(one.body.items.map((d: { id: string }) => d.id)).to.deep.equal(expected.map((d) => d.id));
      expect(one.body.items.slice(0, 4).map((d: { name: string }) => d.name)).to.deep.equal([
        '50 x soup',
        '50% off_soup',
        'apple crumble',
        ...[expected[3]!.name],
      ]);
      for (const limit of [1, 2, 4, 9]) {
        const { items, pages } = await all({ limit });
        expect(
          items.map((d) => d.id),
          `limit ${limit}`,
        ).to.deep.equal(expected.map((d) => d.id));
        expect(pages).to.equal(Math.ceil(names.length / limit));
      }
    });

    it('keeps one category, and the names holding q whatever the letter case (q taken literally)', async () => {
      await seed();
      const soups = await all({ category: 'Soup', limit: 2 });
      expect(soups.items.every((d) => names.indexOf(d.name) % 2 === 1)).to.equal(true);
      expect(soups.items).to.have.length(4);
      const apple = await all({ q: 'aPPle', limit: 1 });
      expect(apple.items.map((d) => d.name).sort()).to.deep.equal(['APPLE PIE', 'Apple pie', 'apple crumble'].sort());
      expect((await all({ q: 'æRTE' })).items.map((d) => d.name)).to.deep.equal(['Ærtesuppe']);
      expect((await all({ q: '%' })).items.map((d) => d.name)).to.deep.equal(['50% off_soup']);
      expect((await all({ q: 'f_s' })).items.map((d) => d.name)).to.deep.equal(['50% off_soup']);
      expect((await all({ q: '_' })).items.map((d) => d.name)).to.deep.equal(['50% off_soup']);
      expect((await all({ q: 'apple', category: 'Soup' })).items.map((d) => d.name)).to.deep.equal(['Apple pie']);
    });

    it('a cursor keeps its filter; sent with another filter, altered, made up or from another household it is 400 invalid_cursor', async () => {
      await seed();
      const first = await as(owner, request(h.app).get(base())).query({ q: 'apple', limit: 1 });
      const cursor = first.body.nextCursor as string;
      const alone = await as(owner, request(h.app).get(base())).query({ cursor, limit: 5 });
      expect(alone.body.items).to.have.length(2);
      expect(alone.body.items.every((d: { name: string }) => d.name.toLowerCase().includes('apple'))).to.equal(true);
      const same = await as(owner, request(h.app).get(base())).query({ cursor, q: 'APPLE', limit: 5 });
      expect(same.status).to.equal(200);
      const refusals = [
        { cursor, q: 'soup' },
        { cursor, category: 'Fish' },
        { cursor: `${cursor.slice(0, -2)}AA` },
        { cursor: 'not-a-cursor' },
        { cursor: `${Buffer.from('[1,"a","00000000-0000-4000-8000-000000000000",null,null]').toString('base64url')}.AAAA` },
      ];
      for (const query of refusals) {
        const res = await as(owner, request(h.app).get(base())).query(query);
        expect(res.status, JSON.stringify(query)).to.equal(400);
        expect(res.body.code).to.equal('invalid_cursor');
      }
      const otherHousehold = h.households.household();
      const otherOwner = h.households.member(otherHousehold, 'Owner');
      const foreign = await as(otherOwner, request(h.app).get(`/api/v1/households/${otherHousehold}/dishes`)).query({ cursor });
      expect(foreign.status).to.equal(400);
      expect(foreign.body.code).to.equal('invalid_cursor');
    });

    it('answers 400 validation_failed to a limit outside 1–100 or an unknown category; 50 by default', async () => {
      for (const query of [{ limit: 0 }, { limit: 101 }, { limit: 'x' }, { category: 'Dessert' }]) {
        const res = await as(owner, request(h.app).get(base())).query(query);
        expect(res.status, JSON.stringify(query)).to.equal(400);
        expect(res.body.code).to.equal('validation_failed');
      }
      await h.db.knex('dishes').insert(
        Array.from({ length: 51 }, (_, i) => ({
          id: randomUUID(),
          householdId,
          name: `Dish ${String(i).padStart(2, '0')}`,
          nameKey: `dish ${String(i).padStart(2, '0')}`,
          category: 'Other',
          activeMinutes: 10,
          priceClass: 'Cheap',
          tags: [],
          madeAgain: false,
          createdAt: new Date(),
          updatedAt: new Date(),
        })),
      );
      const page = await as(owner, request(h.app).get(base()));
      expect(page.body.items).to.have.length(50);
      expect(page.body.nextCursor).to.be.a('string');
      const rest = await as(owner, request(h.app).get(base())).query({ cursor: page.body.nextCursor, limit: 100 });
      expect(rest.body.items.map((d: { name: string }) => d.name)).to.deep.equal(['Dish 50']);
      expect(rest.body.nextCursor).to.equal(null);
    });
  });

  describe('the limit of 2,000 dishes', () => {
    it('lets parallel POSTs at the bound fill it exactly: the rest answer 409 limit_reached and write nothing', async () => {
      const rows = Array.from({ length: DISH_LIMITS.perHousehold - 3 }, (_, i) => ({
        id: randomUUID(),
        householdId,
        name: `Dish ${i}`,
        nameKey: `dish ${i}`,
        category: 'Other',
        activeMinutes: 10,
        priceClass: 'Cheap',
        tags: [],
        madeAgain: false,
        createdAt: new Date(),
        updatedAt: new Date(),
      }));
      await h.db.knex.batchInsert('dishes', rows, 500);
      // Another household's dishes do not count.
      const otherHousehold = h.households.household();
      const otherOwner = h.households.member(otherHousehold, 'Owner');
      const answers = await Promise.all([
        ...Array.from({ length: 8 }, (_, i) => as(owner, request(h.app).post(base())).send(dishBody({ name: `Parallel ${i}` }))),
        as(otherOwner, request(h.app).post(`/api/v1/households/${otherHousehold}/dishes`)).send(dishBody()),
      ]);
      const ours = answers.slice(0, 8);
      expect(ours.filter((r) => r.status === 201)).to.have.length(3);
      const refused = ours.filter((r) => r.status !== 201);
      expect(refused).to.have.length(5);
      for (const r of refused) {
        expect(r.status).to.equal(409);
        expect(r.body.code).to.equal('limit_reached');
      }
      expect(answers[8]!.status).to.equal(201);
      const { n } = (await h.db.knex('dishes').where({ householdId }).count({ n: '*' }).first()) as { n: string };
      expect(Number(n)).to.equal(DISH_LIMITS.perHousehold);
      // Room again after a delete.
      const one = await h.db.knex('dishes').where({ householdId }).first('id');
      expect((await as(owner, request(h.app).delete(`${base()}/${one.id}`))).status).to.equal(204);
      expect((await as(owner, request(h.app).post(base())).send(dishBody())).status).to.equal(201);
      expect((await as(owner, request(h.app).post(base())).send(dishBody())).status).to.equal(409);
    });

    it('holds whoever writes: a direct INSERT past the bound fails with DIBND and writes nothing', async () => {
      const row = (i: number) => ({
        id: randomUUID(),
        householdId,
        name: `Dish ${i}`,
        nameKey: `dish ${i}`,
        category: 'Other',
        activeMinutes: 10,
        priceClass: 'Cheap',
        tags: [],
        madeAgain: false,
        createdAt: new Date(),
        updatedAt: new Date(),
      });
      await h.db.knex.batchInsert(
        'dishes',
        Array.from({ length: DISH_LIMITS.perHousehold }, (_, i) => row(i)),
        500,
      );
      const err = await h.db
        .knex('dishes')
        .insert([row(-1), row(-2)])
        .then(
          () => undefined,
          (e: { code?: string }) => e,
        );
      expect(err).to.include({ code: 'DIBND' });
      const { n } = (await h.db.knex('dishes').where({ householdId }).count({ n: '*' }).first()) as { n: string };
      expect(Number(n)).to.equal(DISH_LIMITS.perHousehold);
    });
  });
});
