/**
 * decisions.md §9 sentence by sentence with the real dishes catalog (own dishes and the shipped
 * starter library), the sentences planner.test.ts and dishes.test.ts do not show: dish validation
 * and paging, the starter library's shape, own dishes in plans and their snapshots, the language of
 * texts, serving times, caps and `why`, the calendar feed's dinners, the list's window, ETag and
 * If-Match on plans, unmet and conflicts, the week in the household's zone, and the OpenAPI document.
 * See docs/planner-conformance.md for the checklist these tests belong to.
 */
import { expect } from 'chai';
import request from 'supertest';
import { type Harness, signUp, startHarness } from './harness.js';

const CATEGORIES = ['Fish', 'Meat', 'Poultry', 'Vegetarian', 'Vegan', 'Soup', 'Pasta', 'Taco', 'Leftovers', 'Other'];
const NO_PLAN = '00000000-0000-4000-8000-000000000000';

interface Day {
  date: string;
  servingTime: string;
  dinner: boolean;
  dish: { id: string; origin: string; name: string; category: string; activeMinutes: number; priceClass: string } | null;
  servings: number;
  locked: boolean;
  why: { ruleId: string | null; eventId: string | null; text: string }[];
}

describe('planner and dishes: §9 conformance through the composed service', function () {
  this.timeout(120_000);
  let h: Harness;
  let owner: request.Agent;
  let adult: request.Agent;
  let junior: request.Agent;
  let stranger: request.Agent;
  let home: string;
  // The harness' clock: Sunday 2026-11-22 09:00Z, so this week's Monday in Oslo is 2026-11-16.
  const MONDAY = '2026-11-16';
  const hh = (id: string) => `/api/v1/households/${id}`;

  async function household(agent: request.Agent, name: string, extra: Record<string, unknown> = {}): Promise<string> {
    const res = await agent.post('/api/v1/households').send({ name, timeZoneId: 'Europe/Oslo', defaultDinnerTime: '18:00', ...extra });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.id;
  }
  async function join(id: string, agent: request.Agent, role: 'Adult' | 'Junior') {
    const { code } = (
      await owner
        .post(`${hh(id)}/invitations`)
        .send({ role })
        .expect(201)
    ).body;
    await agent.post('/api/v1/invitations/accept').send({ code }).expect(200);
  }
  const runDue = () => h.service.jobs.runDue();
  async function dish(id: string, body: Record<string, unknown>) {
    const res = await owner.post(`${hh(id)}/dishes`).send(body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body;
  }
  async function planned(id: string, startDate: string, weeks = 1) {
    const posted = await owner.post(`${hh(id)}/plans`).send({ startDate, weeks });
    expect(posted.status, JSON.stringify(posted.body)).to.equal(202);
    await runDue();
    return (await owner.get(`${hh(id)}/plans/${posted.body.id}`).expect(200)).body;
  }
  async function rule(id: string, strength: 'Hard' | 'Soft', payload: Record<string, unknown>) {
    const res = await owner.post(`${hh(id)}/rules`).send({ strength, scope: 'Permanent', startDate: null, endDate: null, payload });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.id as string;
  }

  before(async () => {
    h = await startHarness({ AUTH_RATE_LIMIT: '1000000', TOKEN_RATE_LIMIT: '1000000' });
    owner = await signUp(h.app, 'c-owner@example.com', 'Olga');
    adult = await signUp(h.app, 'c-adult@example.com', 'Ada');
    junior = await signUp(h.app, 'c-junior@example.com', 'Jo');
    stranger = await signUp(h.app, 'c-stranger@example.com', 'Sam');
    home = await household(owner, 'Home');
    await join(home, adult, 'Adult');
    await join(home, junior, 'Junior');
    await runDue();
  });
  after(async () => h?.close());

  describe('dishes', () => {
    const valid = { name: 'Fish cakes', category: 'Fish', activeMinutes: 25, priceClass: 'Cheap' };

    it('refuses every malformed field with 400 (never a 500) and writes nothing', async () => {
      const other = await household(owner, 'Validation');
      const bad: Record<string, unknown>[] = [
        { ...valid, name: '' },
        { ...valid, name: 'x'.repeat(101) },
        { ...valid, name: 42 },
        { ...valid, category: 'Dessert' },
        { ...valid, activeMinutes: 0 },
        { ...valid, activeMinutes: 601 },
        { ...valid, activeMinutes: 2.5 },
        { ...valid, activeMinutes: '25' },
        { ...valid, priceClass: 'cheap' },
        { ...valid, tags: Array.from({ length: 21 }, (_, i) => `t${i}`) },
        { ...valid, tags: [''] },
        { ...valid, tags: ['x'.repeat(41)] },
        { ...valid, tags: 'fish' },
        { ...valid, madeAgain: 'yes' },
        { category: 'Fish', activeMinutes: 25, priceClass: 'Cheap' },
        { name: 'No category', activeMinutes: 25, priceClass: 'Cheap' },
      ];
      for (const body of bad) {
        const res = await owner.post(`${hh(other)}/dishes`).send(body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.headers['content-type']).to.match(/^application\/problem\+json/);
        expect(['validation_failed', 'value_too_long'], JSON.stringify(res.body)).to.include(res.body.code);
      }
      const ok = await dish(other, { ...valid, name: 'x'.repeat(100), activeMinutes: 600, tags: Array.from({ length: 20 }, () => 'y'.repeat(40)) });
      expect(ok).to.include({ madeAgain: false, activeMinutes: 600 });
      for (const body of bad) {
        const res = await owner.put(`${hh(other)}/dishes/${ok.id}`).send(body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
      }
      const list = (await owner.get(`${hh(other)}/dishes`).expect(200)).body;
      expect(list.items).to.deep.equal([ok]);
      // A malformed id is no dish of the household.
      for (const path of [`${hh(other)}/dishes/not-a-uuid`, `${hh(other)}/dishes/${NO_PLAN}`]) {
        const res = await owner.get(path);
        expect([400, 404]).to.include(res.status);
        expect(res.status).to.not.equal(500);
      }
      expect((await owner.get(`${hh(other)}/dishes/${NO_PLAN}`)).body.code).to.equal('not_found');
      expect((await owner.put(`${hh(other)}/dishes/${NO_PLAN}`).send(valid)).status).to.equal(404);
      expect((await owner.delete(`${hh(other)}/dishes/${NO_PLAN}`)).status).to.equal(404);
    });

    it('answers a dish with exactly its fields, and an ETag on its GET, POST and PUT', async () => {
      const other = await household(owner, 'Shapes');
      const made = await owner
        .post(`${hh(other)}/dishes`)
        .send({ ...valid, tags: ['a'], madeAgain: true })
        .expect(201);
      expect(Object.keys(made.body)).to.have.members([
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
      expect(made.body.createdAt).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(made.headers.etag).to.be.a('string');
      const got = await owner.get(`${hh(other)}/dishes/${made.body.id}`).expect(200);
      expect(got.headers.etag).to.be.a('string');
      const put = await owner
        .put(`${hh(other)}/dishes/${made.body.id}`)
        .send(valid)
        .expect(200);
      expect(put.headers.etag).to.be.a('string');
      expect(put.body).to.include({ madeAgain: false, createdAt: made.body.createdAt });
      expect(put.body.tags).to.deep.equal([]);
    });

    it('lists by name ignoring case then id; q and category filter; limit 1–100 (default 50); nextCursor null on the last page', async () => {
      const other = await household(owner, 'Listing');
      const names = ['banana bread', 'Apple pie', 'apple crumble', 'Cherry soup', 'APPLE tart'];
      for (const [i, name] of names.entries()) await dish(other, { ...valid, name, category: i % 2 ? 'Soup' : 'Fish' });
      for (let i = 0; i < 50; i++) await dish(other, { ...valid, name: `Zed ${String(i).padStart(2, '0')}` });
      const first = (await junior.get(`${hh(other)}/dishes`).expect(404)).body; // Junior is not a member of this one
      expect(first.code).to.equal('not_found');
      const page = (await owner.get(`${hh(other)}/dishes`).expect(200)).body;
      expect(page.items).to.have.length(50);
      expect(page.items.slice(0, 5).map((d: { name: string }) => d.name)).to.deep.equal([
        'apple crumble',
        'Apple pie',
        'APPLE tart',
        'banana bread',
        'Cherry soup',
      ]);
      expect(page.nextCursor).to.be.a('string');
      const rest = (
        await owner
          .get(`${hh(other)}/dishes`)
          .query({ cursor: page.nextCursor })
          .expect(200)
      ).body;
      expect(rest.items).to.have.length(5);
      expect(rest.nextCursor).to.equal(null);
      const q = (
        await owner
          .get(`${hh(other)}/dishes`)
          .query({ q: 'aPpLe' })
          .expect(200)
      ).body;
      expect(q.items.map((d: { name: string }) => d.name)).to.deep.equal(['apple crumble', 'Apple pie', 'APPLE tart']);
      expect(q.nextCursor).to.equal(null);
      const soup = (
        await owner
          .get(`${hh(other)}/dishes`)
          .query({ category: 'Soup' })
          .expect(200)
      ).body;
      expect(soup.items.map((d: { name: string }) => d.name)).to.deep.equal(['Apple pie', 'Cherry soup']);
      const one = (
        await owner
          .get(`${hh(other)}/dishes`)
          .query({ limit: 1 })
          .expect(200)
      ).body;
      expect(one.items).to.have.length(1);
      expect(
        (
          await owner
            .get(`${hh(other)}/dishes`)
            .query({ limit: 100 })
            .expect(200)
        ).body.items,
      ).to.have.length(55);
      for (const limit of ['0', '101', 'ten', '-1', '1.5']) {
        const res = await owner.get(`${hh(other)}/dishes`).query({ limit });
        expect(res.status, limit).to.equal(400);
        expect(res.body.code).to.equal('validation_failed');
      }
      const badCategory = await owner.get(`${hh(other)}/dishes`).query({ category: 'Dessert' });
      expect(badCategory.status).to.equal(400);
      for (const cursor of ['nonsense', `${page.nextCursor}x`]) {
        const res = await owner.get(`${hh(other)}/dishes`).query({ cursor });
        expect(res.status, cursor).to.equal(400);
        expect(res.body.code).to.equal('invalid_cursor');
      }
      // A cursor of another household's list is no cursor here.
      const mine = await dish(home, { ...valid, name: 'Home dish' });
      const elsewhere = await owner.get(`${hh(home)}/dishes`).query({ cursor: page.nextCursor });
      expect(elsewhere.status).to.equal(400);
      expect(elsewhere.body.code).to.equal('invalid_cursor');
      await owner.delete(`${hh(home)}/dishes/${mine.id}`).expect(204);
    });

    it('ships a starter library: ≥120 a language, ≥6 in every category, one id per dish in both, the same numbers; language from the query or Accept-Language', async () => {
      const en = (await junior.get('/api/v1/starter-dishes?language=en').expect(200)).body.items;
      const nb = (await junior.get('/api/v1/starter-dishes?language=nb').expect(200)).body.items;
      for (const items of [en, nb]) {
        expect(items.length).to.be.at.least(120);
        for (const c of CATEGORIES) expect(items.filter((d: { category: string }) => d.category === c).length, c).to.be.at.least(6);
        for (const d of items) expect(Object.keys(d)).to.have.members(['id', 'name', 'category', 'activeMinutes', 'priceClass', 'tags']);
      }
      const byId = new Map(nb.map((d: { id: string }) => [d.id, d]));
      expect(byId.size).to.equal(en.length);
      for (const d of en) {
        const other = byId.get(d.id) as typeof d;
        expect(other, d.id).to.not.equal(undefined);
        expect({ category: other.category, activeMinutes: other.activeMinutes, priceClass: other.priceClass }).to.deep.equal({
          category: d.category,
          activeMinutes: d.activeMinutes,
          priceClass: d.priceClass,
        });
      }
      expect((await junior.get('/api/v1/starter-dishes').expect(200)).body.items).to.deep.equal(en);
      expect((await junior.get('/api/v1/starter-dishes').set('Accept-Language', 'nb-NO,nb;q=0.9,en;q=0.5').expect(200)).body.items).to.deep.equal(nb);
      expect((await junior.get('/api/v1/starter-dishes').set('Accept-Language', 'de-DE').expect(200)).body.items).to.deep.equal(en);
      expect((await junior.get('/api/v1/starter-dishes?language=en').set('Accept-Language', 'nb').expect(200)).body.items).to.deep.equal(en);
      const fr = await junior.get('/api/v1/starter-dishes?language=fr');
      expect(fr.status).to.equal(400);
      expect(fr.body.code).to.equal('validation_failed');
      expect((await request(h.app).get('/api/v1/starter-dishes')).status).to.equal(401);
    });
  });

  describe('plans with own dishes and the starter library', () => {
    let cabin: string;
    let cod: { id: string; name: string };
    let stew: { id: string };

    before(async () => {
      cabin = await household(owner, 'Cabin');
      await owner.patch(hh(cabin)).send({ useStarterLibrary: false }).expect(200);
      await join(cabin, adult, 'Adult');
      cod = await dish(cabin, { name: 'Baked cod', category: 'Fish', activeMinutes: 30, priceClass: 'Mid' });
      stew = await dish(cabin, { name: 'Bean stew', category: 'Vegan', activeMinutes: 15, priceClass: 'Cheap' });
      await runDue();
    });

    it('plans only own dishes without the starter library; the built-in repeat rule is unmet with ruleId null; dish edits leave the plan as it is', async () => {
      const plan = await planned(cabin, MONDAY);
      expect(plan.status).to.equal('done');
      expect(plan.days).to.have.length(7);
      for (const d of plan.days as Day[]) {
        expect(d.dinner).to.equal(true);
        expect(d.dish?.origin).to.equal('own');
        expect([cod.id, stew.id]).to.include(d.dish?.id);
        expect(d.servings).to.equal(2);
      }
      // Two dishes over seven days: the built-in RepeatAfterDays of 7 days cannot hold.
      expect(plan.unmet.length).to.be.greaterThan(0);
      for (const u of plan.unmet) expect(u.ruleId).to.equal(null);
      const total = plan.unmet.reduce((s: number, u: { cost: number }) => s + u.cost, 0);
      expect(plan.softCost).to.equal(total);
      for (const u of plan.unmet) for (const d of u.dates) expect(d >= MONDAY && d <= '2026-11-22').to.equal(true);

      await owner
        .put(`${hh(cabin)}/dishes/${cod.id}`)
        .send({ name: 'Renamed cod', category: 'Meat', activeMinutes: 99, priceClass: 'Expensive' })
        .expect(200);
      await owner.delete(`${hh(cabin)}/dishes/${stew.id}`).expect(204);
      const after = (await owner.get(`${hh(cabin)}/plans/${plan.id}`).expect(200)).body;
      expect(after.days).to.deep.equal(plan.days);
      await owner
        .put(`${hh(cabin)}/dishes/${cod.id}`)
        .send({ name: 'Baked cod', category: 'Fish', activeMinutes: 30, priceClass: 'Mid' })
        .expect(200);
      stew = await dish(cabin, { name: 'Bean stew', category: 'Vegan', activeMinutes: 15, priceClass: 'Cheap' });
    });

    it('a day may be set by hand to any starter dish whatever useStarterLibrary says, not to a dish of another household', async () => {
      const [plan] = (await owner.get(`${hh(cabin)}/plans`).expect(200)).body.items;
      const starter = (await owner.get('/api/v1/starter-dishes?language=en').expect(200)).body.items[0];
      const set = await adult.put(`${hh(cabin)}/plans/${plan.id}/days/2026-11-17`).send({ dish: { id: starter.id, origin: 'starter' }, locked: false });
      expect(set.status, JSON.stringify(set.body)).to.equal(200);
      expect(set.body.dish).to.deep.equal({
        id: starter.id,
        origin: 'starter',
        name: starter.name,
        category: starter.category,
        activeMinutes: starter.activeMinutes,
        priceClass: starter.priceClass,
      });
      const foreign = await dish(home, { name: 'Home dish', category: 'Fish', activeMinutes: 10, priceClass: 'Cheap' });
      for (const ref of [
        { id: foreign.id, origin: 'own' },
        { id: starter.id, origin: 'own' },
        { id: cod.id, origin: 'starter' },
        { id: 'not-a-uuid', origin: 'own' },
      ]) {
        const res = await adult.put(`${hh(cabin)}/plans/${plan.id}/days/2026-11-17`).send({ dish: ref, locked: false });
        expect(res.status, JSON.stringify(ref)).to.equal(400);
        expect(res.body.code).to.equal('validation_failed');
      }
      for (const body of [
        { dish: null },
        { locked: true },
        { dish: { id: cod.id }, locked: true },
        { dish: { id: cod.id, origin: 'mine' }, locked: true },
        { dish: null, locked: 'yes' },
      ]) {
        const res = await adult.put(`${hh(cabin)}/plans/${plan.id}/days/2026-11-17`).send(body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.code).to.equal('validation_failed');
      }
      expect((await adult.put(`${hh(cabin)}/plans/${plan.id}/days/17-11-2026`).send({ dish: null, locked: false })).status).to.equal(400);
      expect((await stranger.put(`${hh(cabin)}/plans/${plan.id}/days/2026-11-17`).send({ dish: null, locked: false })).status).to.equal(404);
      expect((await owner.get(`${hh(cabin)}/plans/${plan.id}`).expect(200)).body.days[1]).to.deep.equal(set.body);
      await owner.delete(`${hh(home)}/dishes/${foreign.id}`).expect(204);
    });

    it('plan answers carry an ETag; PUT of a day with a stale If-Match answers 412 and writes nothing', async () => {
      const [plan] = (await owner.get(`${hh(cabin)}/plans`).expect(200)).body.items;
      const got = await owner.get(`${hh(cabin)}/plans/${plan.id}`).expect(200);
      expect(got.headers.etag).to.be.a('string');
      const day = `${hh(cabin)}/plans/${plan.id}/days/2026-11-18`;
      await owner
        .put(day)
        .set('If-Match', got.headers.etag!)
        .send({ dish: { id: cod.id, origin: 'own' }, locked: false })
        .expect(200);
      const stale = await owner.put(day).set('If-Match', got.headers.etag!).send({ dish: null, locked: true });
      expect(stale.status).to.equal(412);
      expect(stale.body.code).to.equal('precondition_failed');
      const now = (await owner.get(`${hh(cabin)}/plans/${plan.id}`).expect(200)).body;
      expect(now.days[2]).to.include({ dinner: true, locked: false });
      expect(now.days[2].dish.id).to.equal(cod.id);
      const fresh = await owner.get(`${hh(cabin)}/plans/${plan.id}`).expect(200);
      expect(fresh.headers.etag).to.not.equal(got.headers.etag);
    });

    it('a replan with nothing changed gives the same plan; the replan answers 202 with Location, Junior 403, stranger 404', async () => {
      const [plan] = (await owner.get(`${hh(cabin)}/plans`).expect(200)).body.items;
      const first = await owner.post(`${hh(cabin)}/plans/${plan.id}/replan`).send();
      expect(first.status).to.equal(202);
      expect(first.headers.location).to.equal(`${hh(cabin)}/plans/${first.body.id}`);
      await runDue();
      const a = (await owner.get(`${hh(cabin)}/plans/${first.body.id}`).expect(200)).body;
      const second = await owner
        .post(`${hh(cabin)}/plans/${a.id}/replan`)
        .send()
        .expect(202);
      await runDue();
      const b = (await owner.get(`${hh(cabin)}/plans/${second.body.id}`).expect(200)).body;
      expect(b.status).to.equal('done');
      expect(b.days).to.deep.equal(a.days);
      expect(b.unmet).to.deep.equal(a.unmet);
      expect(b.softCost).to.equal(a.softCost);
      expect((await stranger.post(`${hh(cabin)}/plans/${b.id}/replan`).send()).status).to.equal(404);
      expect((await owner.post(`${hh(cabin)}/plans/${NO_PLAN}/replan`).send()).status).to.equal(404);
      expect((await owner.post(`${hh(home)}/plans/${b.id}/replan`).send()).status).to.equal(404);
      expect((await owner.get(`${hh(home)}/plans/${b.id}`)).status).to.equal(404);
    });
  });

  describe('what a plan holds', () => {
    let house: string;
    let ids: { ownerMember: string; adultMember: string };

    before(async () => {
      house = await household(owner, 'Holds');
      await join(house, adult, 'Adult');
      const list = (await owner.get(`${hh(house)}/members`).expect(200)).body as { memberId: string; displayName: string }[];
      const byName = (n: string) => list.find((m) => m.displayName === n)?.memberId as string;
      ids = { ownerMember: byName('Olga'), adultMember: byName('Ada') };
      expect(ids.ownerMember, JSON.stringify(list)).to.be.a('string');
      await runDue();
    });

    it('serving times, caps, servings, Away together, and why naming the rules and events of each day', async () => {
      const tuesdayTime = await rule(house, 'Hard', { kind: 'DinnerTimeOnWeekday', time: '17:15', weekdays: ['Tuesday'] });
      const noMeatThursday = await rule(house, 'Hard', { kind: 'CategoryExcludedDays', category: 'Meat', excludedWeekdays: ['Thursday'] });
      const quickFriday = await rule(house, 'Hard', { kind: 'MaximumActiveCookingTime', minutes: 20, weekdays: ['Friday'], specificDate: null });
      const cheapSaturday = await rule(house, 'Soft', { kind: 'PriceClassOnDays', ceiling: 'Cheap', weekdays: ['Saturday'] });
      const ev = async (body: Record<string, unknown>) =>
        (
          await owner
            .post(`${hh(house)}/events`)
            .send({ notes: '', servingTime: '18:00', availableCookingMinutes: 0, participants: [], ...body })
            .expect(201)
        ).body.id as string;
      // Monday 23rd: two Away events, one member each → no dinner.
      const away1 = await ev({ date: '2026-11-23', eventType: 'Away', participants: [{ memberId: ids.ownerMember, name: 'Olga' }] });
      const away2 = await ev({ date: '2026-11-23', eventType: 'Away', participants: [{ memberId: ids.adultMember, name: 'Ada' }] });
      // Tuesday 24th: the rule's time, unless an event names an earlier one; Wednesday 25th: a cap of 10 minutes and guests.
      const cap = await ev({
        date: '2026-11-25',
        eventType: 'Activity',
        servingTime: '19:30',
        availableCookingMinutes: 10,
        participants: [{ memberId: ids.ownerMember, name: 'Olga' }],
      });
      const guests = await ev({
        date: '2026-11-25',
        eventType: 'Guests',
        servingTime: '19:00',
        participants: [
          { memberId: null, name: 'Gran' },
          { memberId: null, name: 'Grandpa' },
        ],
      });
      // Sunday 29th: one member away.
      const oneAway = await ev({ date: '2026-11-29', eventType: 'Away', participants: [{ memberId: ids.adultMember, name: 'Ada' }] });
      const plan = await planned(house, '2026-11-23');
      expect(plan.status, JSON.stringify(plan.conflicts)).to.equal('done');
      const days = plan.days as [Day, Day, Day, Day, Day, Day, Day];
      const why = (d: Day) => ({ rules: d.why.map((w) => w.ruleId).filter(Boolean), events: d.why.map((w) => w.eventId).filter(Boolean) });
      expect(days[0]).to.include({ dinner: false, dish: null, servings: 0 });
      expect(why(days[0]).events).to.have.members([away1, away2]);
      expect(days[1]).to.include({ servingTime: '17:15', dinner: true, servings: 2 });
      expect(why(days[1]).rules).to.include(tuesdayTime);
      expect(days[2]).to.include({ servingTime: '19:00', dinner: true, servings: 4 });
      expect(days[2].dish!.activeMinutes).to.be.at.most(10);
      expect(why(days[2]).events).to.have.members([cap, guests]);
      expect(days[3].dish!.category).to.not.equal('Meat');
      expect(why(days[3]).rules).to.include(noMeatThursday);
      expect(days[4].dish!.activeMinutes).to.be.at.most(20);
      expect(why(days[4]).rules).to.include(quickFriday);
      expect(why(days[5]).rules).to.include(cheapSaturday);
      expect(days[6]).to.include({ dinner: true, servings: 1, servingTime: '18:00' });
      expect(why(days[6]).events).to.deep.equal([oneAway]);
      for (const d of days) expect(d.servingTime).to.match(/^\d\d:\d\d$/);
      // Rules that do not name a day are not in its why.
      expect(why(days[0]).rules).to.not.include(tuesdayTime);
      expect(why(days[6]).rules).to.not.include(quickFriday);
    });

    it('the calendar feed shows each dinner of the current plans: the dish as summary, at the serving time in the zone, an hour', async () => {
      const [plan] = (await owner.get(`${hh(house)}/plans?from=2026-11-23&to=2026-11-29`).expect(200)).body.items;
      const feed = (await owner.post(`${hh(house)}/calendar-feed`).expect(201)).body;
      const ics = (await request(h.app).get(new URL(feed.url).pathname).expect(200)).text.replace(/\r\n[ \t]/g, '');
      const tuesday = (plan.days as Day[])[1]!;
      const vevents = ics.split('BEGIN:VEVENT').slice(1);
      const dinner = vevents.find((v) => v.includes('DTSTART;TZID=Europe/Oslo:20261124T171500'));
      expect(dinner, ics).to.be.a('string');
      expect(dinner).to.include(`SUMMARY:${tuesday.dish!.name.replace(/([,;\\])/g, '\\$1')}`);
      expect(dinner).to.include('DURATION:PT1H');
      // No dinner on Monday: no event for it beyond the two Away events.
      const dinners = vevents.filter((v) => (plan.days as Day[]).some((d) => d.dish && v.includes(`SUMMARY:${d.dish.name.replace(/([,;\\])/g, '\\$1')}`)));
      expect(dinners.length).to.equal((plan.days as Day[]).filter((d) => d.dish).length);
    });

    it('a day without dinner set by hand to a dish serves what that date’s events leave: at least 1', async () => {
      const [plan] = (await owner.get(`${hh(house)}/plans?from=2026-11-23&to=2026-11-29`).expect(200)).body.items;
      const starter = (await owner.get('/api/v1/starter-dishes').expect(200)).body.items[0];
      // Monday: both members away (no dinner); set by hand, it serves 1, not the two members.
      const set = await owner
        .put(`${hh(house)}/plans/${plan.id}/days/2026-11-23`)
        .send({ dish: { id: starter.id, origin: 'starter' }, locked: true })
        .expect(200);
      expect(set.body).to.include({ dinner: true, servings: 1, locked: true });
      // Wednesday kept its servings (two members and two guests).
      const wed = await owner
        .put(`${hh(house)}/plans/${plan.id}/days/2026-11-25`)
        .send({ dish: { id: starter.id, origin: 'starter' }, locked: false })
        .expect(200);
      expect(wed.body.servings).to.equal(4);
      const none = await owner
        .put(`${hh(house)}/plans/${plan.id}/days/2026-11-25`)
        .send({ dish: null, locked: false })
        .expect(200);
      expect(none.body).to.include({ dinner: false, servings: 0 });
    });

    it('texts are in the household language: Norwegian for nb, nn and no; the starter dishes too', async () => {
      const nn = await household(owner, 'Nynorsk', { preferredLanguage: 'nn-NO' });
      await owner.patch(hh(nn)).send({ preferredLanguage: 'nn-NO', useStarterLibrary: true }).expect(200);
      const plan = await planned(nn, MONDAY);
      expect(plan.status).to.equal('done');
      const nb = new Map(
        ((await owner.get('/api/v1/starter-dishes?language=nb').expect(200)).body.items as { id: string; name: string }[]).map((d) => [d.id, d.name]),
      );
      for (const d of plan.days as Day[]) expect(d.dish!.name).to.equal(nb.get(d.dish!.id));
      const set = await owner
        .put(`${hh(nn)}/plans/${plan.id}/days/${MONDAY}`)
        .send({ dish: null, locked: true })
        .expect(200);
      expect(set.body.why).to.deep.equal([{ ruleId: null, eventId: null, text: 'Satt for hånd' }]);
    });
  });

  describe('runs, windows and weeks', () => {
    it('the list: current plans overlapping from..to by startDate; default this week’s Monday through 83 days later; a bad window 400', async () => {
      const id = await household(owner, 'Window');
      await owner.patch(hh(id)).send({ useStarterLibrary: true }).expect(200);
      const last = await planned(id, '2027-02-08'); // 84 days after this week's Monday: allowed, outside the default window
      const first = await planned(id, '2027-02-01');
      const early = await planned(id, MONDAY, 2);
      expect([last.status, first.status, early.status]).to.deep.equal(['done', 'done', 'done']);
      const listed = (await owner.get(`${hh(id)}/plans`).expect(200)).body.items.map((p: { id: string }) => p.id);
      expect(listed).to.deep.equal([early.id, first.id]);
      const all = (await owner.get(`${hh(id)}/plans?from=2026-11-01&to=2027-03-01`).expect(200)).body.items.map((p: { id: string }) => p.id);
      expect(all).to.deep.equal([early.id, first.id, last.id]);
      const edge = (await owner.get(`${hh(id)}/plans?from=2026-11-29&to=2026-11-29`).expect(200)).body.items.map((p: { id: string }) => p.id);
      expect(edge).to.deep.equal([early.id]);
      const none = (await owner.get(`${hh(id)}/plans?from=2026-11-30&to=2027-01-31`).expect(200)).body.items;
      expect(none).to.deep.equal([]);
      for (const q of ['from=yesterday', 'to=2027-13-01', 'from=2027-01-10&to=2027-01-01']) {
        const res = await owner.get(`${hh(id)}/plans?${q}`);
        expect(res.status, q).to.equal(400);
        expect(res.body.code).to.equal('validation_failed');
      }
      const tooFar = await owner.post(`${hh(id)}/plans`).send({ startDate: '2027-02-15', weeks: 1 });
      expect(tooFar.status).to.equal(400);
      for (const body of [
        { startDate: MONDAY },
        { weeks: 1 },
        { startDate: MONDAY, weeks: '1' },
        { startDate: MONDAY, weeks: 1.5 },
        { startDate: MONDAY, weeks: 1, extra: true },
        {},
      ]) {
        const res = await owner.post(`${hh(id)}/plans`).send(body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.code).to.equal('validation_failed');
      }
      const notJson = await owner
        .post(`${hh(id)}/plans`)
        .set('Content-Type', 'application/json')
        .send('{"startDate":');
      expect(notJson.status).to.equal(400);
    });

    it("this week's Monday is the household's: a zone already in the next week refuses the last one", async () => {
      const kiritimati = await household(owner, 'Line Islands', { timeZoneId: 'Pacific/Kiritimati' });
      await owner.patch(hh(kiritimati)).send({ useStarterLibrary: true }).expect(200);
      const was = h.clock.now();
      // 2026-11-22T11:00Z is Monday 2026-11-23 01:00 at UTC+14, still Sunday in Oslo.
      h.clock.set('2026-11-22T11:00:00.000Z');
      try {
        const late = await owner.post(`${hh(kiritimati)}/plans`).send({ startDate: MONDAY, weeks: 1 });
        expect(late.status).to.equal(400);
        expect(late.body.code).to.equal('validation_failed');
        const ok = await owner.post(`${hh(kiritimati)}/plans`).send({ startDate: '2026-11-23', weeks: 1 });
        expect(ok.status).to.equal(202);
        await runDue();
        // The list's default window starts at that household's Monday too.
        expect((await owner.get(`${hh(kiritimati)}/plans`).expect(200)).body.items.map((p: { id: string }) => p.id)).to.deep.equal([ok.body.id]);
      } finally {
        h.clock.set(was);
      }
    });

    it('Prefer: wait on a replan answers 201 with Location and Preference-Applied; wait=0 and wait=abc are ignored', async () => {
      const id = await household(owner, 'Waiting');
      await owner.patch(hh(id)).send({ useStarterLibrary: true }).expect(200);
      const plan = await planned(id, MONDAY);
      for (const prefer of ['wait=0', 'wait=abc', 'wait=-1']) {
        const ignored = await owner
          .post(`${hh(id)}/plans/${plan.id}/replan`)
          .set('Prefer', prefer)
          .send();
        expect(ignored.status, prefer).to.equal(202);
        expect(ignored.headers['preference-applied']).to.equal(undefined);
        expect(['queued', 'running']).to.include(ignored.body.status);
        await runDue();
      }
      await h.service.jobs.start();
      try {
        const waited = await owner
          .post(`${hh(id)}/plans/${plan.id}/replan`)
          .set('Prefer', 'respond-async, wait=5')
          .send();
        expect(waited.status, JSON.stringify(waited.body)).to.equal(201);
        expect(waited.headers['preference-applied']).to.equal('wait=5');
        expect(waited.headers.location).to.equal(`${hh(id)}/plans/${waited.body.id}`);
        expect(waited.body.status).to.equal('done');
        expect(waited.headers.etag).to.be.a('string');
      } finally {
        await h.service.jobs.stop();
      }
    });

    it('Idempotency-Key: another body answers 422; parallel requests with one key start one run', async () => {
      const id = await household(owner, 'Keys');
      await join(id, adult, 'Adult');
      const first = await owner
        .post(`${hh(id)}/plans`)
        .set('Idempotency-Key', 'k1')
        .send({ startDate: MONDAY, weeks: 1 })
        .expect(202);
      const other = await owner
        .post(`${hh(id)}/plans`)
        .set('Idempotency-Key', 'k1')
        .send({ startDate: MONDAY, weeks: 2 });
      expect(other.status).to.equal(422);
      expect(other.body.code).to.equal('idempotency_key_reused');
      await runDue();
      const replay = await owner
        .post(`${hh(id)}/plans`)
        .set('Idempotency-Key', 'k1')
        .send({ startDate: MONDAY, weeks: 1 });
      expect(replay.status).to.equal(202);
      expect(replay.body).to.deep.equal(first.body);
      const parallel = await Promise.all(
        Array.from({ length: 5 }, () =>
          owner
            .post(`${hh(id)}/plans`)
            .set('Idempotency-Key', 'k2')
            .send({ startDate: '2026-11-23', weeks: 1 }),
        ),
      );
      const ok = parallel.filter((r) => r.status === 202);
      expect(ok.length).to.be.at.least(1);
      expect(new Set(ok.map((r) => r.body.id)).size).to.equal(1);
      for (const r of parallel.filter((x) => x.status !== 202)) expect(r.body.code).to.be.oneOf(['idempotency_key_in_flight', 'plan_run_in_progress']);
      expect(await h.service.jobs.runDue('planner-run')).to.equal(1);
      await runDue();
      // A POST and a replan at once for the same household: one run.
      const [plan] = (await owner.get(`${hh(id)}/plans?from=2026-11-23&to=2026-11-29`).expect(200)).body.items;
      const mixed = await Promise.all([
        owner.post(`${hh(id)}/plans/${plan.id}/replan`).send(),
        adult.post(`${hh(id)}/plans`).send({ startDate: '2026-11-30', weeks: 1 }),
        owner.post(`${hh(id)}/plans`).send({ startDate: '2026-12-07', weeks: 1 }),
        owner.post(`${hh(id)}/plans/${plan.id}/replan`).send(),
      ]);
      const statuses = mixed.map((r) => r.status);
      expect(
        statuses.filter((s) => s === 202),
        JSON.stringify(statuses),
      ).to.have.length(1);
      for (const r of mixed.filter((x) => x.status !== 202))
        expect([r.status, r.body.code], JSON.stringify(r.body)).to.deep.equal([409, 'plan_run_in_progress']);
      expect(await h.service.jobs.runDue('planner-run')).to.equal(1);
      await runDue();
    });

    it('infeasible: irreducible conflicts naming the rules and the dates they act on; softCost null, days and unmet []', async () => {
      const id = await household(owner, 'Clash');
      await owner.patch(hh(id)).send({ useStarterLibrary: true }).expect(200);
      const fish = await rule(id, 'Hard', { kind: 'CategoryOnDay', category: 'Fish', weekday: 'Wednesday', specificDate: null });
      const noFish = await rule(id, 'Hard', { kind: 'CategoryExcludedDays', category: 'Fish', excludedWeekdays: ['Wednesday'] });
      const unrelated = await rule(id, 'Hard', { kind: 'CategoryExcludedDays', category: 'Meat', excludedWeekdays: ['Monday'] });
      const plan = await planned(id, MONDAY);
      expect(plan).to.include({ status: 'infeasible', softCost: null });
      expect(plan.days).to.deep.equal([]);
      expect(plan.unmet).to.deep.equal([]);
      expect(plan.finishedAt).to.be.a('string');
      expect(plan.conflicts).to.have.length.at.least(1);
      const [c] = plan.conflicts;
      expect(c.ruleIds).to.have.members([fish, noFish]);
      expect(c.ruleIds).to.not.include(unrelated);
      expect(c.eventIds).to.deep.equal([]);
      expect(c.dates).to.deep.equal(['2026-11-18']);
      expect(c.text).to.be.a('string').and.not.equal('');
      expect((await owner.get(`${hh(id)}/plans`).expect(200)).body.items).to.deep.equal([]);
    });
  });

  it('the OpenAPI document describes every §9 operation with its error answers', async () => {
    const doc = (await request(h.app).get('/api/v1/openapi.json').expect(200)).body;
    const ops: [string, string, number[]][] = [
      ['/api/v1/households/{householdId}/dishes', 'get', [200, 400, 401, 404]],
      ['/api/v1/households/{householdId}/dishes', 'post', [201, 400, 401, 403, 404, 409]],
      ['/api/v1/households/{householdId}/dishes/{dishId}', 'get', [200, 401, 404]],
      ['/api/v1/households/{householdId}/dishes/{dishId}', 'put', [200, 400, 401, 403, 404, 412]],
      ['/api/v1/households/{householdId}/dishes/{dishId}', 'delete', [204, 401, 403, 404, 412]],
      ['/api/v1/starter-dishes', 'get', [200, 400, 401]],
      ['/api/v1/households/{householdId}/plans', 'post', [201, 202, 400, 401, 403, 404, 409]],
      ['/api/v1/households/{householdId}/plans', 'get', [200, 400, 401, 404]],
      ['/api/v1/households/{householdId}/plans/{planId}', 'get', [200, 401, 404]],
      ['/api/v1/households/{householdId}/plans/{planId}/days/{date}', 'put', [200, 400, 401, 403, 404, 409, 412]],
      ['/api/v1/households/{householdId}/plans/{planId}/replan', 'post', [201, 202, 401, 403, 404, 409]],
    ];
    for (const [path, method, statuses] of ops) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).to.be.an('object');
      expect(Object.keys(op.responses).map(Number), `${method} ${path}`).to.include.members(statuses);
    }
    const text = JSON.stringify(doc);
    for (const code of ['plan_run_in_progress', 'plan_not_current', 'limit_reached', 'invalid_cursor', 'insufficient_scope']) expect(text).to.include(code);
  });
});
