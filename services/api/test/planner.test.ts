/**
 * Issue 46 part 2 end to end: plan runs on the job queue, plans, days set by hand, replans,
 * replaced plans, Prefer: wait, runDone in the inbox, the changes feed, scopes and roles — the
 * sentences of the contract's "Plans" that the composed service can show.
 */
import type { DishCatalog, PlannableDish } from '@svc/contracts';
import { expect } from 'chai';
import type request from 'supertest';
import { type Harness, signUp, startHarness } from './harness.js';

/** A small starter library (the dishes package's catalog is wired in at the merge). */
const STARTERS: PlannableDish[] = [
  ['st-fish-1', 'Baked cod', 'Fish', 30, 'Mid'],
  ['st-meat-1', 'Meatballs', 'Meat', 40, 'Mid'],
  ['st-pasta-1', 'Pasta pesto', 'Pasta', 15, 'Cheap'],
  ['st-soup-1', 'Lentil soup', 'Soup', 25, 'Cheap'],
  ['st-taco-1', 'Taco Friday', 'Taco', 30, 'Mid'],
  ['st-veg-1', 'Vegetable curry', 'Vegetarian', 35, 'Cheap'],
  ['st-poultry-1', 'Roast chicken', 'Poultry', 60, 'Expensive'],
  ['st-vegan-1', 'Chickpea stew', 'Vegan', 30, 'Cheap'],
].map(([id, name, category, activeMinutes, priceClass]) => ({
  id: id as string,
  origin: 'starter' as const,
  name: name as string,
  category: category as PlannableDish['category'],
  activeMinutes: activeMinutes as number,
  priceClass: priceClass as PlannableDish['priceClass'],
  madeAgain: false,
}));
const catalog: DishCatalog = {
  ownDishes: async () => [],
  starterDishes: () => STARTERS,
  find: async (_h, ref) => (ref.origin === 'starter' ? STARTERS.find((d) => d.id === ref.id) : undefined),
};

describe('planner: plans through the composed service', function () {
  this.timeout(60_000);
  let h: Harness;
  let owner: request.Agent;
  let adult: request.Agent;
  let junior: request.Agent;
  let stranger: request.Agent;
  let householdId: string;
  const base = () => `/api/v1/households/${householdId}`;
  // The harness' clock: Sunday 2026-11-22 09:00Z, so this week's Monday in Oslo is 2026-11-16.
  const MONDAY = '2026-11-16';

  async function household(agent: request.Agent, name: string): Promise<string> {
    const res = await agent.post('/api/v1/households').send({ name, timeZoneId: 'Europe/Oslo', defaultDinnerTime: '18:00' });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.id;
  }

  async function join(agent: request.Agent, role: 'Adult' | 'Junior') {
    const { code } = (await owner.post(`${base()}/invitations`).send({ role }).expect(201)).body;
    await agent.post('/api/v1/invitations/accept').send({ code }).expect(200);
  }

  /** Runs every due job (the runs, then the pushes they enqueued). */
  const runDue = () => h.service.jobs.runDue();

  before(async () => {
    h = await startHarness({}, { dishCatalog: catalog });
    owner = await signUp(h.app, 'owner@example.com', 'Olga');
    adult = await signUp(h.app, 'adult@example.com', 'Ada');
    junior = await signUp(h.app, 'junior@example.com', 'Jo');
    stranger = await signUp(h.app, 'stranger@example.com', 'Sam');
    householdId = await household(owner, 'Home');
    await owner.patch(base()).send({ useStarterLibrary: true }).expect(200);
    await join(adult, 'Adult');
    await join(junior, 'Junior');
    await runDue();
  });
  after(async () => h?.close());

  it('refuses a start that is not a Monday, in the past, too far ahead, and weeks out of 1–4 (400 validation_failed)', async () => {
    for (const body of [
      { startDate: '2026-11-24', weeks: 1 }, // a Tuesday
      { startDate: '2026-11-09', weeks: 1 }, // last week's Monday
      { startDate: '2027-02-15', weeks: 1 }, // 91 days after this week's Monday
      { startDate: '2026-11-23', weeks: 0 },
      { startDate: '2026-11-23', weeks: 5 },
      { startDate: 'next monday', weeks: 1 },
    ]) {
      const res = await owner.post(`${base()}/plans`).send(body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.code).to.equal('validation_failed');
    }
    const plans = (await owner.get(`${base()}/plans?from=2026-01-05&to=2027-12-27`).expect(200)).body.items;
    expect(plans).to.deep.equal([]);
  });

  it('a Junior may read but not run (403), a non-member learns nothing (404)', async () => {
    expect((await junior.post(`${base()}/plans`).send({ startDate: MONDAY, weeks: 1 })).status).to.equal(403);
    expect((await stranger.post(`${base()}/plans`).send({ startDate: MONDAY, weeks: 1 })).status).to.equal(404);
    expect((await stranger.get(`${base()}/plans`)).status).to.equal(404);
    expect((await junior.get(`${base()}/plans`).expect(200)).body).to.deep.equal({ items: [] });
  });

  it('runs a plan later: 202 queued with Location, 409 while it runs, done by the job with one dinner a day and runDone in every inbox', async () => {
    const posted = await adult.post(`${base()}/plans`).send({ startDate: MONDAY, weeks: 1 });
    expect(posted.status, JSON.stringify(posted.body)).to.equal(202);
    expect(posted.body).to.include({ householdId, startDate: MONDAY, weeks: 1, status: 'queued', finishedAt: null, softCost: null });
    expect(posted.body.days).to.deep.equal([]);
    expect(posted.headers.location).to.equal(`/api/v1/households/${householdId}/plans/${posted.body.id}`);
    expect(posted.headers.etag).to.be.a('string');
    const again = await owner.post(`${base()}/plans`).send({ startDate: '2026-11-23', weeks: 2 });
    expect(again.status).to.equal(409);
    expect(again.body.code).to.equal('plan_run_in_progress');

    await runDue();
    const plan = (await junior.get(posted.headers.location!).expect(200)).body;
    expect(plan.status).to.equal('done');
    expect(plan.softCost).to.be.a('number');
    expect(plan.finishedAt).to.be.a('string');
    expect(plan.conflicts).to.deep.equal([]);
    expect(plan.days.map((d: { date: string }) => d.date)).to.deep.equal(['16', '17', '18', '19', '20', '21', '22'].map((d) => `2026-11-${d}`));
    for (const day of plan.days) {
      expect(day).to.include({ dinner: true, locked: false, servingTime: '18:00' });
      expect(day.dish.origin).to.equal('starter');
      expect(STARTERS.map((s) => s.id)).to.include(day.dish.id);
      expect(day.servings).to.equal(3);
    }
    for (const agent of [owner, adult, junior]) {
      const inbox = (await agent.get('/api/v1/me/notifications').expect(200)).body.items;
      const told = inbox.filter((n: { kind: string }) => n.kind === 'runDone');
      expect(told, 'one runDone each').to.have.length(1);
      expect(told[0].data).to.deep.equal({ planId: plan.id, householdId, status: 'done' });
    }
    const listed = (await owner.get(`${base()}/plans`).expect(200)).body.items;
    expect(listed.map((p: { id: string }) => p.id)).to.deep.equal([plan.id]);
  });

  it('sets a day by hand: 200 with one why item, 404 outside the plan or for an unknown plan, 400 for an unknown dish, 403 for a Junior', async () => {
    const [plan] = (await owner.get(`${base()}/plans`).expect(200)).body.items;
    const day = `${base()}/plans/${plan.id}/days/2026-11-18`;
    const set = await adult.put(day).send({ dish: { id: 'st-soup-1', origin: 'starter' }, locked: true });
    expect(set.status, JSON.stringify(set.body)).to.equal(200);
    expect(set.body).to.deep.equal({
      date: '2026-11-18',
      servingTime: '18:00',
      dinner: true,
      dish: { id: 'st-soup-1', origin: 'starter', name: 'Lentil soup', category: 'Soup', activeMinutes: 25, priceClass: 'Cheap' },
      servings: 3,
      locked: true,
      why: [{ ruleId: null, eventId: null, text: 'Set by hand' }],
    });
    const none = await adult.put(`${base()}/plans/${plan.id}/days/2026-11-19`).send({ dish: null, locked: true }).expect(200);
    expect(none.body).to.include({ dinner: false, dish: null, servings: 0, locked: true });
    const read = (await owner.get(`${base()}/plans/${plan.id}`).expect(200)).body;
    expect(read.days[2]).to.deep.equal(set.body);
    expect(read.days[3]).to.deep.equal(none.body);

    expect((await adult.put(`${base()}/plans/${plan.id}/days/2026-11-23`).send({ dish: null, locked: false })).status).to.equal(404);
    expect((await adult.put(`${base()}/plans/${plan.id}/days/2026-11-15`).send({ dish: null, locked: false })).status).to.equal(404);
    expect((await adult.put(`${base()}/plans/00000000-0000-4000-8000-000000000000/days/2026-11-18`).send({ dish: null, locked: false })).status).to.equal(404);
    const unknown = await adult.put(day).send({ dish: { id: 'no-such-dish', origin: 'starter' }, locked: false });
    expect(unknown.status).to.equal(400);
    expect(unknown.body.code).to.equal('validation_failed');
    const foreign = await adult.put(day).send({ dish: { id: 'st-soup-1', origin: 'own' }, locked: false });
    expect(foreign.status).to.equal(400);
    expect((await junior.put(day).send({ dish: null, locked: false })).status).to.equal(403);
    // Nothing of the refused writes stuck.
    expect((await owner.get(`${base()}/plans/${plan.id}`).expect(200)).body.days[2]).to.deep.equal(set.body);
  });

  it('replans the same weeks keeping the locked days; the old plan is replaced (readable, not listed, not editable)', async () => {
    const [old] = (await owner.get(`${base()}/plans`).expect(200)).body.items;
    const replan = await owner.post(`${base()}/plans/${old.id}/replan`).send();
    expect(replan.status, JSON.stringify(replan.body)).to.equal(202);
    expect(replan.body).to.include({ startDate: MONDAY, weeks: 1, status: 'queued' });
    expect((await owner.post(`${base()}/plans/${old.id}/replan`).send()).body.code).to.equal('plan_run_in_progress');
    // Until the run ends the old plan is the current one and may still be changed.
    await runDue();
    const fresh = (await owner.get(`${base()}/plans/${replan.body.id}`).expect(200)).body;
    expect(fresh.status).to.equal('done');
    expect(fresh.days[2]).to.deep.equal(old.days[2]);
    expect(fresh.days[3]).to.deep.equal(old.days[3]);
    expect(fresh.days[3]).to.include({ dinner: false, locked: true });

    const replaced = (await owner.get(`${base()}/plans/${old.id}`).expect(200)).body;
    expect(replaced.status).to.equal('replaced');
    expect(replaced.days).to.deep.equal(old.days);
    expect(replaced.softCost).to.equal(old.softCost);
    const put = await owner.put(`${base()}/plans/${old.id}/days/2026-11-18`).send({ dish: null, locked: false });
    expect(put.status).to.equal(409);
    expect(put.body.code).to.equal('plan_not_current');
    expect((await owner.get(`${base()}/plans`).expect(200)).body.items.map((p: { id: string }) => p.id)).to.deep.equal([fresh.id]);
  });

  it('parallel POSTs start one run; the others answer 409 plan_run_in_progress', async () => {
    const posts = await Promise.all(
      Array.from({ length: 6 }, (_, i) => (i % 2 ? owner : adult).post(`${base()}/plans`).send({ startDate: '2026-11-30', weeks: 2 })),
    );
    const statuses = posts.map((r) => r.status).sort();
    expect(statuses).to.deep.equal([202, 409, 409, 409, 409, 409]);
    expect(posts.filter((r) => r.status === 409).every((r) => r.body.code === 'plan_run_in_progress')).to.equal(true);
    expect(await h.service.jobs.runDue('planner-run')).to.equal(1);
    await runDue();
  });

  it('a plan sharing a week with the current one replaces it; one of other weeks stays', async () => {
    const before = (await owner.get(`${base()}/plans`).expect(200)).body.items;
    expect(before.map((p: { startDate: string }) => p.startDate)).to.deep.equal([MONDAY, '2026-11-30']);
    const posted = await owner.post(`${base()}/plans`).send({ startDate: '2026-12-07', weeks: 1 }).expect(202);
    await runDue();
    const after = (await owner.get(`${base()}/plans`).expect(200)).body.items;
    expect(after.map((p: { id: string }) => p.id)).to.deep.equal([before[0].id, posted.body.id]);
    expect((await owner.get(`${base()}/plans/${before[1].id}`).expect(200)).body.status).to.equal('replaced');
    // The window: from the Monday after, only the later plan.
    const later = (await owner.get(`${base()}/plans?from=2026-11-23&to=2026-12-31`).expect(200)).body.items;
    expect(later.map((p: { id: string }) => p.id)).to.deep.equal([posted.body.id]);
  });

  it('Prefer: wait=N answers 201 with the ended plan and Preference-Applied; outside 1–10 it is ignored', async () => {
    await h.service.jobs.start();
    try {
      const waited = await owner.post(`${base()}/plans`).set('Prefer', 'wait=10').send({ startDate: '2026-12-14', weeks: 1 });
      expect(waited.status, JSON.stringify(waited.body)).to.equal(201);
      expect(waited.headers['preference-applied']).to.equal('wait=10');
      expect(waited.body.status).to.equal('done');
      expect(waited.body.days).to.have.length(7);
      expect(waited.headers.location).to.equal(`${base()}/plans/${waited.body.id}`);
      const ignored = await owner.post(`${base()}/plans/${waited.body.id}/replan`).set('Prefer', 'wait=11').send();
      expect(ignored.status).to.equal(202);
      expect(ignored.headers['preference-applied']).to.equal(undefined);
      // Its run ends on its own; the next wait sees it.
      const ended = await h.service.planner.waitFor(householdId, ignored.body.id, 10);
      expect(ended?.status).to.equal('done');
    } finally {
      await h.service.jobs.stop();
    }
  });

  it('an Idempotency-Key replay answers the first answer, also while a run is in progress', async () => {
    const body = { startDate: '2026-12-21', weeks: 1 };
    const first = await owner.post(`${base()}/plans`).set('Idempotency-Key', 'plan-once').send(body);
    expect(first.status).to.equal(202);
    const replay = await owner.post(`${base()}/plans`).set('Idempotency-Key', 'plan-once').send(body);
    expect(replay.status).to.equal(202);
    expect(replay.body).to.deep.equal(first.body);
    expect(await h.service.jobs.runDue('planner-run')).to.equal(1);
    await runDue();
  });

  it('an EatingOut event takes the dinner off its day; Away of every member too; guests add servings', async () => {
    const events = [
      { date: '2026-12-29', eventType: 'EatingOut', servingTime: '19:00', availableCookingMinutes: 0, notes: '', participants: [] },
      {
        date: '2026-12-30',
        eventType: 'Guests',
        servingTime: '17:30',
        availableCookingMinutes: 0,
        notes: '',
        participants: [{ memberId: null, name: 'Gran' }],
      },
    ];
    for (const e of events) await owner.post(`${base()}/events`).send(e).expect(201);
    const plan = await owner.post(`${base()}/plans`).send({ startDate: '2026-12-28', weeks: 1 }).expect(202);
    await runDue();
    const days = (await owner.get(`${base()}/plans/${plan.body.id}`).expect(200)).body.days;
    expect(days[1]).to.include({ date: '2026-12-29', dinner: false, dish: null, servings: 0 });
    expect(days[2]).to.include({ date: '2026-12-30', dinner: true, servings: 4, servingTime: '17:30' });
    expect(days[2].why.map((w: { eventId: string | null }) => w.eventId).filter(Boolean)).to.have.length(1);
  });

  it('rules that cannot hold end the run infeasible with conflicts; the current plan stays, runDone says so', async () => {
    const [current] = (await owner.get(`${base()}/plans?from=2026-12-28&to=2027-01-03`).expect(200)).body.items;
    // No Leftovers dish exists: a Hard rule asking for one on Wednesdays cannot hold.
    const rule = await owner
      .post(`${base()}/rules`)
      .send({
        strength: 'Hard',
        scope: 'Permanent',
        startDate: null,
        endDate: null,
        payload: { kind: 'CategoryOnDay', category: 'Leftovers', weekday: 'Wednesday', specificDate: null },
      })
      .expect(201);
    const run = await owner.post(`${base()}/plans/${current.id}/replan`).send().expect(202);
    await runDue();
    const ended = (await owner.get(`${base()}/plans/${run.body.id}`).expect(200)).body;
    expect(ended).to.include({ status: 'infeasible', softCost: null });
    expect(ended.days).to.deep.equal([]);
    expect(ended.conflicts.length).to.be.greaterThan(0);
    expect(ended.conflicts[0].ruleIds).to.include(rule.body.id);
    expect((await owner.get(`${base()}/plans/${current.id}`).expect(200)).body.status).to.equal('done');
    const inbox = (await adult.get('/api/v1/me/notifications').expect(200)).body.items;
    // The harness' clock stands still: find the run's item rather than trusting the newest-first order among equal times.
    const item = inbox.find((n: { data: { planId?: string } }) => n.data.planId === run.body.id);
    expect(item).to.deep.include({ kind: 'runDone', data: { planId: run.body.id, householdId, status: 'infeasible' } });
    expect((await owner.put(`${base()}/plans/${run.body.id}/days/2026-12-30`).send({ dish: null, locked: false })).body.code).to.equal('plan_not_current');
    await owner.delete(`${base()}/rules/${rule.body.id}`).expect(204);
  });

  it('the changes feed tells of plans, each with its GET as value', async () => {
    const feed = (await owner.get(`${base()}/changes?limit=500`).expect(200)).body.items;
    const plans = feed.filter((c: { resource: string }) => c.resource === 'plan');
    expect(plans.length).to.be.greaterThan(3);
    for (const c of plans) {
      const now = (await owner.get(`${base()}/plans/${c.id}`).expect(200)).body;
      expect(c.value).to.deep.equal(now);
    }
  });

  it('tokens: plans:read reads, plans:write runs, other scopes get 403 insufficient_scope', async () => {
    const token = async (scopes: string[]) =>
      (
        await owner
          .post('/api/v1/me/tokens')
          .send({ name: scopes.join(' '), scopes })
          .expect(201)
      ).body.token;
    const reader = await token(['plans:read']);
    const writer = await token(['plans:write']);
    const other = await token(['rules:read', 'events:write']);
    const app = (await import('supertest')).default(h.app);
    expect((await app.get(`${base()}/plans`).set('Authorization', `Bearer ${reader}`)).status).to.equal(200);
    const denied = await app.post(`${base()}/plans`).set('Authorization', `Bearer ${reader}`).send({ startDate: '2027-01-04', weeks: 1 });
    expect(denied.status).to.equal(403);
    expect(denied.body.code).to.equal('insufficient_scope');
    expect((await app.get(`${base()}/plans`).set('Authorization', `Bearer ${other}`)).body.code).to.equal('insufficient_scope');
    expect((await app.get(`${base()}/plans`).set('Authorization', `Bearer ${writer}`)).status).to.equal(403);
    const ran = await app.post(`${base()}/plans`).set('Authorization', `Bearer ${writer}`).send({ startDate: '2027-01-04', weeks: 1 });
    expect(ran.status).to.equal(202);
    await runDue();
  });

  it('deleting the household deletes its plans', async () => {
    const other = await household(owner, 'Cabin');
    await owner.patch(`/api/v1/households/${other}`).send({ useStarterLibrary: true }).expect(200);
    const plan = (await owner.post(`/api/v1/households/${other}/plans`).send({ startDate: MONDAY, weeks: 1 }).expect(202)).body;
    await runDue();
    await owner.delete(`/api/v1/households/${other}`).send({ confirmName: 'Cabin' }).expect(204);
    const left = await h.db.knex('plans').where({ id: plan.id });
    expect(left).to.deep.equal([]);
  });
});
