/**
 * Dishes in the composed service (decisions.md §9 "Dishes"): a household's own dishes over the
 * real session, tokens with and without plans:read / plans:write, ETag / If-Match, Idempotency-Key,
 * the changes feed's `dish` items, the cascade of a household's deletion, parallel POSTs at the
 * 2,000 bound, and the starter library in both languages.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import { type Harness, signUp, startHarness } from './harness.js';

const DISH = { name: 'Fiskekaker med potet og gulrot', category: 'Fish', activeMinutes: 25, priceClass: 'Cheap', tags: ['klassiker'], madeAgain: true };

describe('dishes in the composed service', function () {
  this.timeout(120_000);
  let h: Harness;
  let owner: request.Agent;
  let junior: request.Agent;
  let outsider: request.Agent;
  let householdId: string;
  const base = () => `/api/v1/households/${householdId}/dishes`;

  before(async () => {
    h = await startHarness({ AUTH_RATE_LIMIT: '1000000', TOKEN_RATE_LIMIT: '1000000' });
    owner = await signUp(h.app, 'dish-owner@example.test', 'Dish Owner');
    householdId = (await owner.post('/api/v1/households').send({ name: 'Dishes', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' }).expect(201)).body.id;
    junior = await signUp(h.app, 'dish-junior@example.test', 'Dish Junior');
    const { code } = (await owner.post(`/api/v1/households/${householdId}/invitations`).send({ role: 'Junior' }).expect(201)).body;
    await junior.post('/api/v1/invitations/accept').send({ code }).expect(200);
    outsider = await signUp(h.app, 'dish-outsider@example.test', 'Dish Outsider');
  });
  after(async () => h?.close());

  const tokenOf = async (agent: request.Agent, scopes: string[]): Promise<string> =>
    (
      await agent
        .post('/api/v1/me/tokens')
        .send({ name: scopes.join(' ') || 'none', scopes })
        .expect(201)
    ).body.token;
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

  it('creates, reads, replaces and deletes a dish with the session; Junior reads but may not write; an outsider gets 404', async () => {
    const made = await owner.post(base()).send(DISH);
    expect(made.status, JSON.stringify(made.body)).to.equal(201);
    expect(made.headers.location).to.equal(`${base()}/${made.body.id}`);
    expect(made.body).to.include({ householdId, name: DISH.name, madeAgain: true });
    const got = await junior.get(made.headers.location as string);
    expect(got.status).to.equal(200);
    expect(got.body).to.deep.equal(made.body);
    expect(got.headers.etag).to.equal(made.headers.etag);
    const list = await junior.get(base());
    expect(list.body).to.deep.equal({ items: [made.body], nextCursor: null });
    const refused = await junior.put(`${base()}/${made.body.id}`).send(DISH);
    expect(refused.status).to.equal(403);
    expect(refused.body.code).to.equal('forbidden');
    expect((await junior.post(base()).send(DISH)).status).to.equal(403);
    expect((await outsider.get(base())).status).to.equal(404);
    expect((await outsider.get(`${base()}/${made.body.id}`)).status).to.equal(404);
    expect((await outsider.post(base()).send(DISH)).status).to.equal(404);
    const replaced = await owner.put(`${base()}/${made.body.id}`).send({ ...DISH, name: 'Fiskeboller i hvit saus', tags: [] });
    expect(replaced.status).to.equal(200);
    expect(replaced.body).to.include({ id: made.body.id, name: 'Fiskeboller i hvit saus', createdAt: made.body.createdAt });
    expect((await owner.delete(`${base()}/${made.body.id}`)).status).to.equal(204);
    expect((await owner.get(`${base()}/${made.body.id}`)).status).to.equal(404);
  });

  it('answers 412 precondition_failed to a write with a stale If-Match, and honours the current ETag', async () => {
    const made = (await owner.post(base()).send(DISH).expect(201)) as request.Response;
    const url = `${base()}/${made.body.id}`;
    const first = made.headers.etag as string;
    const changed = await owner
      .put(url)
      .set('If-Match', first)
      .send({ ...DISH, activeMinutes: 30 });
    expect(changed.status).to.equal(200);
    for (const write of [owner.put(url).set('If-Match', first).send(DISH), owner.delete(url).set('If-Match', first)]) {
      const res = await write;
      expect(res.status).to.equal(412);
      expect(res.body.code).to.equal('precondition_failed');
    }
    expect((await owner.get(url)).body.activeMinutes).to.equal(30);
    // Two writers holding the same tag: exactly one passes.
    const tag = (await owner.get(url)).headers.etag as string;
    const both = await Promise.all([
      owner
        .put(url)
        .set('If-Match', tag)
        .send({ ...DISH, name: 'A' }),
      owner
        .put(url)
        .set('If-Match', tag)
        .send({ ...DISH, name: 'B' }),
    ]);
    expect(both.map((r) => r.status).sort()).to.deep.equal([200, 412]);
    expect((await owner.delete(url).set('If-Match', (await owner.get(url)).headers.etag as string)).status).to.equal(204);
  });

  it('replays a POST with the same Idempotency-Key: one dish, the same answer', async () => {
    const key = randomUUID();
    const one = await owner
      .post(base())
      .set('Idempotency-Key', key)
      .send({ ...DISH, name: 'Once' });
    const two = await owner
      .post(base())
      .set('Idempotency-Key', key)
      .send({ ...DISH, name: 'Once' });
    expect(one.status).to.equal(201);
    expect(two.status).to.equal(201);
    expect(two.body).to.deep.equal(one.body);
    const rows = await h.db.knex('dishes').where({ householdId, name: 'Once' });
    expect(rows).to.have.length(1);
    expect(
      (
        await owner
          .post(base())
          .set('Idempotency-Key', key)
          .send({ ...DISH, name: 'Other' })
      ).status,
    ).to.equal(422);
    await owner.delete(`${base()}/${one.body.id}`).expect(204);
  });

  it('opens dish and starter GETs to a token with plans:read and dish writes to plans:write; 403 insufficient_scope otherwise', async () => {
    const dish = (await owner.post(base()).send(DISH).expect(201)).body;
    const read = await tokenOf(owner, ['plans:read']);
    const write = await tokenOf(owner, ['plans:write']);
    const other = await tokenOf(owner, ['households:read', 'events:read', 'events:write', 'rules:read', 'rules:write']);
    const c = () => request(h.app);
    expect((await c().get(base()).set(bearer(read))).status).to.equal(200);
    expect((await c().get(`${base()}/${dish.id}`).set(bearer(read))).body).to.deep.equal(dish);
    expect((await c().get('/api/v1/starter-dishes?language=nb').set(bearer(read))).status).to.equal(200);
    const cases: [string, request.Test][] = [
      ['POST with plans:read', c().post(base()).set(bearer(read)).send(DISH)],
      ['PUT with plans:read', c().put(`${base()}/${dish.id}`).set(bearer(read)).send(DISH)],
      ['DELETE with plans:read', c().delete(`${base()}/${dish.id}`).set(bearer(read))],
      ['GET list with plans:write', c().get(base()).set(bearer(write))],
      ['GET one with plans:write', c().get(`${base()}/${dish.id}`).set(bearer(write))],
      ['GET list with every other scope', c().get(base()).set(bearer(other))],
      ['GET starter with every other scope', c().get('/api/v1/starter-dishes').set(bearer(other))],
      ['POST with every other scope', c().post(base()).set(bearer(other)).send(DISH)],
    ];
    for (const [what, req] of cases) {
      const res = await req;
      expect(res.status, what).to.equal(403);
      expect(res.body.code, what).to.equal('insufficient_scope');
    }
    const made = await c()
      .post(base())
      .set(bearer(write))
      .send({ ...DISH, name: 'By token' });
    expect(made.status).to.equal(201);
    expect((await c().put(`${base()}/${made.body.id}`).set(bearer(write)).send(DISH)).status).to.equal(200);
    expect((await c().delete(`${base()}/${made.body.id}`).set(bearer(write))).status).to.equal(204);
    // A Junior's token is still a Junior: reads, never writes.
    const juniorWrite = await tokenOf(junior, ['plans:read', 'plans:write']);
    expect((await c().get(base()).set(bearer(juniorWrite))).status).to.equal(200);
    expect((await c().post(base()).set(bearer(juniorWrite)).send(DISH)).status).to.equal(403);
    await owner.delete(`${base()}/${dish.id}`).expect(204);
  });

  it('reports a dish in the changes feed: an upsert whose value is its GET, a delete with a null value', async () => {
    const start = (await owner.get(`/api/v1/households/${householdId}/changes`)).body.nextCursor as string;
    const dish = (
      await owner
        .post(base())
        .send({ ...DISH, name: 'In the feed' })
        .expect(201)
    ).body;
    await owner
      .put(`${base()}/${dish.id}`)
      .send({ ...DISH, name: 'In the feed, renamed' })
      .expect(200);
    const kept = (
      await owner
        .post(base())
        .send({ ...DISH, name: 'Kept' })
        .expect(201)
    ).body;
    const feed = await owner.get(`/api/v1/households/${householdId}/changes?since=${encodeURIComponent(start)}`);
    expect(feed.status, JSON.stringify(feed.body)).to.equal(200);
    const items = feed.body.items as { resource: string; id: string; change: string; value: unknown }[];
    expect(items.map((i) => `${i.resource}:${i.id}:${i.change}`)).to.deep.equal([`dish:${dish.id}:upsert`, `dish:${kept.id}:upsert`]);
    expect(items[0]!.value).to.deep.equal((await owner.get(`${base()}/${dish.id}`)).body);
    expect((items[0]!.value as { name: string }).name).to.equal('In the feed, renamed');
    await owner.delete(`${base()}/${dish.id}`).expect(204);
    const after = await owner.get(`/api/v1/households/${householdId}/changes?since=${encodeURIComponent(feed.body.nextCursor)}`);
    expect(after.body.items).to.deep.equal([{ resource: 'dish', id: dish.id, change: 'delete', at: after.body.items[0].at, value: null }]);
    await owner.delete(`${base()}/${kept.id}`).expect(204);
  });

  it('lets parallel POSTs at the 2,000 bound fill it exactly; the rest answer 409 limit_reached', async () => {
    const now = new Date();
    const rows = Array.from({ length: 1996 }, (_, i) => ({
      id: randomUUID(),
      household_id: householdId,
      name: `Seeded ${i}`,
      name_key: `seeded ${i}`,
      category: 'Other',
      active_minutes: 10,
      price_class: 'Cheap',
      tags: [],
      made_again: false,
      created_at: now,
      updated_at: now,
    }));
    await h.db.knex.batchInsert('dishes', rows, 500);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => owner.post(base()).send({ ...DISH, name: `Parallel ${i}` })));
    expect(answers.filter((r) => r.status === 201)).to.have.length(4);
    const refused = answers.filter((r) => r.status !== 201);
    expect(refused.map((r) => [r.status, r.body.code])).to.deep.equal(Array.from({ length: 6 }, () => [409, 'limit_reached']));
    const [counted] = await h.db.knex('dishes').where({ household_id: householdId }).count({ n: '*' });
    expect(Number(counted!.n)).to.equal(2000);
  });

  it("deletes a household's dishes with the household", async () => {
    expect(Number((await h.db.knex('dishes').where({ household_id: householdId }).count({ n: '*' }))[0]!.n)).to.be.greaterThan(0);
    expect((await owner.delete(`/api/v1/households/${householdId}`).send({ confirmName: 'Dishes' })).status).to.equal(204);
    expect(Number((await h.db.knex('dishes').where({ household_id: householdId }).count({ n: '*' }))[0]!.n)).to.equal(0);
  });

  it('answers the starter library to anyone signed in, in the language asked for or read from Accept-Language', async () => {
    const en = await outsider.get('/api/v1/starter-dishes');
    expect(en.status).to.equal(200);
    const nb = await outsider.get('/api/v1/starter-dishes').set('Accept-Language', 'nb-NO,nb;q=0.9,en;q=0.5');
    const asked = await outsider.get('/api/v1/starter-dishes?language=nb').set('Accept-Language', 'en');
    expect(nb.body).to.deep.equal(asked.body);
    expect(en.body.items.length).to.be.at.least(120);
    expect(new Set(en.body.items.map((d: { id: string }) => d.id))).to.deep.equal(new Set(nb.body.items.map((d: { id: string }) => d.id)));
    expect(nb.body.items.map((d: { name: string }) => d.name)).to.include('Kjøttkaker i brun saus med ertestuing');
    const bad = await outsider.get('/api/v1/starter-dishes?language=sv');
    expect(bad.status).to.equal(400);
    expect(bad.body.code).to.equal('validation_failed');
    expect((await request(h.app).get('/api/v1/starter-dishes')).status).to.equal(401);
  });
});
