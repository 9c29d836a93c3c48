import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { DishCatalog, HouseholdRole, PlannableDish, PlanningHousehold, PlanningRule, PlanRunEnded } from '@svc/contracts';
import { createLogger, ManualClock, NotFoundError } from '@svc/http-kit';
import * as jobs from '@svc/jobs';
import { buildTestApp, createTestDatabase, TEST_USER_HEADER, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import request from 'supertest';
import { createRouter, migrations, ObjectionPlanStore, PLAN_RUN_QUEUE, PlannerService, type PlanSolver, PlanSolverPool, queues } from '../src/index.js';
import { preferredWait } from '../src/service.js';

const DISHES: PlannableDish[] = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((id, i) => ({
  id: `st-${id}`,
  origin: 'starter',
  name: `Dish ${id}`,
  category: (['Fish', 'Meat', 'Pasta', 'Soup'] as const)[i % 4]!,
  activeMinutes: 20 + i,
  priceClass: 'Cheap',
  madeAgain: false,
}));

describe('planner runs (store, service, router on real PostgreSQL)', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  let T0 = '';
  const clock = new ManualClock('2000-01-01T00:00:00.000Z');
  const children: ChildProcess[] = [];
  const told: PlanRunEnded[] = [];
  const roles = new Map<string, HouseholdRole>();
  let queue: jobs.JobQueue;
  let solver: PlanSolverPool;
  let service: PlannerService;
  let store: ObjectionPlanStore;
  const householdId = randomUUID();
  const owner = randomUUID();
  const junior = randomUUID();
  const settings: PlanningHousehold = {
    timeZoneId: 'Europe/Oslo',
    defaultDinnerTime: '18:00',
    preferredLanguage: 'nb-NO',
    useStarterLibrary: true,
    preferOwnRecipes: false,
    maxNewDishesPerWeek: 7,
    alwaysNewDishes: false,
    madeAgainLift: false,
    memberIds: [randomUUID(), randomUUID()],
  };
  const catalog: DishCatalog = {
    ownDishes: async () => [],
    starterDishes: () => DISHES,
    find: async (_h, ref) => DISHES.find((d) => d.id === ref.id && d.origin === ref.origin),
  };

  function build(solve: PlanSolver, rules: PlanningRule[] = []): PlannerService {
    const s = new PlannerService({
      store,
      knex: db.knex,
      clock,
      jobs: queue,
      access: {
        roleOf: async ({ userId }, hid) => {
          const role = hid === householdId ? roles.get(userId) : undefined;
          if (!role) throw new NotFoundError('not_found', 'No such household');
          return role;
        },
      },
      households: async (hid) => {
        if (hid !== householdId) throw new NotFoundError('not_found', 'No such household');
        return settings;
      },
      rules: async () => rules,
      events: async () => [],
      dishes: catalog,
      tellRunDone: async (ended) => {
        told.push(ended);
      },
      solver: solve,
    });
    return s;
  }

  const app = () => buildTestApp({ routers: [createRouter({ service })] });
  const as = (user: string) => ({ [TEST_USER_HEADER]: user });
  const planJobs = async () =>
    (await db.knex.raw(`select id, state from pgboss.job where name = ? order by created_on`, [PLAN_RUN_QUEUE])).rows as { id: string; state: string }[];

  before(async () => {
    db = await createTestDatabase([jobs.migrations, migrations, queues]);
    // The database's own instant (pg-boss compares due times with it), read once; the monday of its week is planned.
    T0 = new Date((await db.knex.raw(`select date_trunc('second', now()) as t`)).rows[0].t).toISOString();
    roles.set(owner, 'Owner');
    roles.set(junior, 'Junior');
  });
  beforeEach(() => {
    clock.set(T0);
    queue = new jobs.JobQueue({ knex: db.knex, clock, logger: createLogger({ level: 'silent' }) });
    store = new ObjectionPlanStore(db.knex);
    solver = new PlanSolverPool({ timeoutMs: 5000 });
    service = build(solver);
    service.defineJobs();
    told.length = 0;
  });
  afterEach(async () => {
    await Promise.all(
      children.splice(0).map((c) => {
        if (c.exitCode !== null || c.signalCode !== null) return undefined;
        const gone = new Promise((r) => c.once('exit', r));
        c.kill('SIGKILL');
        return gone;
      }),
    );
    await queue.stop(1000);
    await service.close();
    await solver.destroy();
    await db.knex.raw('delete from pgboss.job; delete from pgboss.archive; delete from plans');
  });
  after(async () => db.destroy());

  /** The Monday of this week (the household's zone) and `weeks` ahead. */
  function monday(weeksAhead = 0): string {
    const local = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Oslo' }).format(new Date(T0));
    const d = new Date(`${local}T00:00:00Z`);
    d.setUTCDate(d.getUTCDate() - ((d.getUTCDay() + 6) % 7) + 7 * weeksAhead);
    return d.toISOString().slice(0, 10);
  }

  it('Prefer: wait takes 1–10 only', () => {
    expect(preferredWait('wait=5')).to.equal(5);
    expect(preferredWait('respond-async, wait=10')).to.equal(10);
    expect(preferredWait('wait=0')).to.equal(undefined);
    expect(preferredWait('wait=11')).to.equal(undefined);
    expect(preferredWait('handling=lenient')).to.equal(undefined);
    expect(preferredWait(undefined)).to.equal(undefined);
  });

  it("a run's claim reads what it needs of the household's own plans in the same statement; a longer RepeatAfterDays reads its window", async () => {
    const S = '2030-03-04';
    const day = (date: string, dish: string | null, origin: 'own' | 'starter' = 'starter', locked = false) => ({
      date,
      servingTime: '18:00',
      dinner: dish !== null,
      dish: dish === null ? null : { id: dish, origin, name: dish, category: 'Fish' as const, activeMinutes: 20, priceClass: 'Cheap' as const },
      servings: dish === null ? 0 : 2,
      locked,
      why: [],
    });
    const plan = async (hid: string, startDate: string, status: 'done' | 'replaced', days: ReturnType<typeof day>[]) => {
      const p = await store.createRun({ householdId: hid, startDate, weeks: 1, replanOf: null }, clock.now());
      expect(await store.finish(p.id, { status: 'done', softCost: 0, days, unmet: [] }, clock.now())).to.equal(true);
      if (status === 'replaced') await db.knex('plans').update({ status }).where({ id: p.id });
      return p.id;
    };
    // The week before (current): two dinners, a day without; 35 days before (replaced); 42 days before (current); another household's.
    const before = await plan(householdId, '2030-02-25', 'done', [
      day('2030-02-25', 'st-a', 'starter', true),
      day('2030-02-26', null),
      day('2030-03-03', 'own-1', 'own'),
    ]);
    await plan(householdId, '2030-01-28', 'replaced', [day('2030-01-28', 'st-b')]);
    await plan(householdId, '2030-01-21', 'done', [day('2030-01-21', 'st-c'), day('2030-01-22', 'own-2', 'own')]);
    await plan(randomUUID(), '2030-02-25', 'done', [day('2030-02-27', 'st-z')]);
    const run = await store.createRun({ householdId, startDate: S, weeks: 1, replanOf: before }, clock.now());

    const claimed = await store.claim(run.id);
    expect(claimed?.plan).to.deep.equal({ id: run.id, householdId, startDate: S, weeks: 1, replanOf: before });
    expect(claimed?.history.earlierDinners).to.deep.equal([
      { date: '2030-02-25', id: 'st-a', origin: 'starter' },
      { date: '2030-03-03', id: 'own-1', origin: 'own' },
    ]);
    expect(claimed?.history.knownStarterIds).to.deep.equal(['st-a', 'st-b', 'st-c']);
    expect(claimed?.history.replanDays.map((d) => d.date)).to.deep.equal(['2030-02-25', '2030-02-26', '2030-03-03']);
    expect((await store.byId(run.id))?.status).to.equal('running');
    expect(await store.history(claimed!.plan)).to.deep.equal(claimed!.history);

    // A RepeatAfterDays of 45 days reaches the dinners of 42 days before (read again); the built-in 7 days only the last week's.
    const rule = (days: number) => ({
      id: randomUUID(),
      strength: 'Soft' as const,
      scope: 'Permanent' as const,
      startDate: null,
      endDate: null,
      updatedAt: T0,
      payload: { kind: 'RepeatAfterDays' as const, days },
    });
    const long = await build(solver, [rule(45)]).inputs(claimed!.plan, claimed!.history);
    expect(long.earlierDinners.map((d) => d.id)).to.deep.equal(['st-c', 'own-2', 'st-a', 'own-1']);
    const short = await service.inputs(claimed!.plan, claimed!.history);
    expect(short.earlierDinners.map((d) => d.id)).to.deep.equal(['st-a', 'own-1']);
    expect(short.knownStarterIds).to.deep.equal(['st-a', 'st-b', 'st-c']);
    expect(short.keptDays.map((d) => d.date)).to.deep.equal([]); // the kept days are the replanned plan's locked days inside this plan's dates

    await store.finish(run.id, { status: 'failed' }, clock.now());
    expect(await store.claim(run.id)).to.equal(undefined);
  });

  it('parallel POSTs: one run queued with its job, the rest 409 plan_run_in_progress', async () => {
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        request(app())
          .post(`/api/v1/households/${householdId}/plans`)
          .set(as(owner))
          .send({ startDate: monday(1), weeks: 1 }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).to.deep.equal([202, 409, 409, 409, 409, 409, 409, 409]);
    expect((await planJobs()).length).to.equal(1);
    expect((await db.knex('plans')).length).to.equal(1);
  });

  it('a Junior gets 403 and a non-member 404; nothing is written', async () => {
    expect(
      (
        await request(app())
          .post(`/api/v1/households/${householdId}/plans`)
          .set(as(junior))
          .send({ startDate: monday(1), weeks: 1 })
      ).status,
    ).to.equal(403);
    expect(
      (
        await request(app())
          .post(`/api/v1/households/${householdId}/plans`)
          .set(as(randomUUID()))
          .send({ startDate: monday(1), weeks: 1 })
      ).status,
    ).to.equal(404);
    expect(await db.knex('plans')).to.deep.equal([]);
  });

  it('a run writes its outcome once: a second run of the same plan writes and tells nothing', async () => {
    const plan = await service.create({ userId: owner }, householdId, { startDate: monday(), weeks: 1 });
    expect(await queue.runDue(PLAN_RUN_QUEUE)).to.equal(1);
    const done = await store.byId(plan.id);
    expect(done?.status).to.equal('done');
    expect(told).to.deep.equal([{ planId: plan.id, householdId, status: 'done' }]);
    // Texts follow the household's language (Norwegian for nb-NO).
    await service.setDay({ userId: owner }, householdId, plan.id, monday(), { dish: null, locked: true });
    const version = (await store.byId(plan.id))!.version;
    await service.run(plan.id);
    expect(told).to.have.length(1);
    const after = await store.byId(plan.id);
    expect(after?.version).to.equal(version);
    expect(after?.days[0]?.why).to.deep.equal([{ ruleId: null, eventId: null, text: 'Satt for hånd' }]);
  });

  it('a solver that fails or times out ends the run failed, tells runDone, and the current plan stays', async () => {
    const first = await service.create({ userId: owner }, householdId, { startDate: monday(), weeks: 1 });
    await queue.runDue(PLAN_RUN_QUEUE);
    await queue.stop(1000);
    for (const failing of [
      { solve: async () => Promise.reject(new Error('worker crashed')) },
      // The real pool with a limit no solve keeps (PLANNER_TIMEOUT_MS of 1 ms): PlanSolverTimeout.
      new PlanSolverPool({ timeoutMs: 1, threads: 1 }),
    ] as PlanSolver[]) {
      queue = new jobs.JobQueue({ knex: db.knex, clock, logger: createLogger({ level: 'silent' }) });
      await service.close();
      service = build(failing);
      service.defineJobs();
      told.length = 0;
      const run = await service.replan({ userId: owner }, householdId, first.id);
      await queue.runDue(PLAN_RUN_QUEUE);
      const failed = await store.byId(run.id);
      expect(failed).to.include({ status: 'failed', softCost: null });
      expect(failed?.days).to.deep.equal([]);
      expect(told).to.deep.equal([{ planId: run.id, householdId, status: 'failed' }]);
      expect((await store.byId(first.id))?.status).to.equal('done');
      await queue.stop(1000);
      if (failing instanceof PlanSolverPool) await failing.destroy();
    }
  });

  it('PUT of a day: 409 plan_not_current while the plan is queued', async () => {
    const plan = await service.create({ userId: owner }, householdId, { startDate: monday(), weeks: 1 });
    const res = await request(app())
      .put(`/api/v1/households/${householdId}/plans/${plan.id}/days/${monday()}`)
      .set(as(owner))
      .send({ dish: { id: 'st-a', origin: 'starter' }, locked: true });
    expect(res.status).to.equal(409);
    expect(res.body.code).to.equal('plan_not_current');
  });

  it('Prefer: wait wakes on the run’s notification from another connection', async () => {
    const plan = await service.create({ userId: owner }, householdId, { startDate: monday(), weeks: 1 });
    const waiting = service.waitFor(householdId, plan.id, 10);
    // Another "instance": its own service on the same database runs the job.
    const otherPool = new PlanSolverPool({ timeoutMs: 5000 });
    const other = build(otherPool);
    const started = Date.now();
    await other.run(plan.id);
    const ended = await waiting;
    expect(ended?.status).to.equal('done');
    expect(Date.now() - started).to.be.lessThan(9000);
    await other.close();
    await otherPool.destroy();
    // Already ended: answered at once; still queued after the wait: undefined.
    expect((await service.waitFor(householdId, plan.id, 1))?.id).to.equal(plan.id);
  });

  it('PlannedDinners: the current plans’ dinners and a version that moves with them', async () => {
    expect(await service.plannedDinners.dinners(householdId)).to.deep.equal([]);
    const empty = await service.plannedDinners.version(householdId);
    const plan = await service.create({ userId: owner }, householdId, { startDate: monday(), weeks: 1 });
    await queue.runDue(PLAN_RUN_QUEUE);
    const dinners = await service.plannedDinners.dinners(householdId);
    expect(dinners).to.have.length(7);
    expect(dinners[0]).to.deep.include({ planId: plan.id, date: monday(), servingTime: '18:00' });
    const v1 = await service.plannedDinners.version(householdId);
    expect(v1).to.not.equal(empty);
    await service.setDay({ userId: owner }, householdId, plan.id, monday(), { dish: null, locked: false });
    expect(await service.plannedDinners.dinners(householdId)).to.have.length(6);
    expect(await service.plannedDinners.version(householdId)).to.not.equal(v1);
  });

  it('a runner killed mid-run: after the expiry another instance finishes the run, once', async function () {
    this.timeout(90_000);
    const plan = await service.create({ userId: owner }, householdId, { startDate: monday(), weeks: 1 });
    // Another process takes the run and hangs in its solve; it is killed with SIGKILL.
    const script = `
      import { createKnex } from '@svc/db';
      import { JobQueue } from '@svc/jobs';
      import { ObjectionPlanStore, PlannerService } from '@svc/planner';
      const knex = createKnex(process.env.DB_URL, { poolMax: 2 });
      const clock = { now: () => new Date(process.env.NOW) };
      const queue = new JobQueue({ knex, clock, logger: { info() {}, warn() {}, error() {} }, pollIntervalMs: 50 });
      const service = new PlannerService({
        store: new ObjectionPlanStore(knex), knex, clock, jobs: queue,
        access: { roleOf: async () => 'Owner' },
        households: async () => (${JSON.stringify(settings)}),
        rules: async () => [], events: async () => [],
        dishes: { ownDishes: async () => [], starterDishes: () => [], find: async () => undefined },
        solver: { solve: () => { process.stdout.write('solving\\n'); return new Promise(() => {}); } },
      });
      service.defineJobs();
      await queue.start();
    `;
    const child = spawn(process.execPath, ['--import', 'tsx/esm', '--conditions=source', '--input-type=module', '-e', script], {
      env: { ...process.env, DB_URL: db.url, NOW: clock.now().toISOString() },
      stdio: ['ignore', 'pipe', 'inherit'],
      cwd: new URL('..', import.meta.url).pathname,
    });
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    children.push(child);
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (b: Buffer) => {
        if (b.toString().includes('solving')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`runner exited early (${code})`)));
    });
    child.kill('SIGKILL');
    await exited;
    expect((await store.byId(plan.id))?.status).to.equal('running');
    expect((await planJobs()).map((j) => j.state)).to.deep.equal(['active']);

    // Not before its expiry: the run is still the dead runner's.
    await queue.expireAbandoned();
    expect(await queue.runDue(PLAN_RUN_QUEUE)).to.equal(0);
    await db.knex.raw(`update pgboss.job set started_on = now() - interval '181 seconds' where name = ?`, [PLAN_RUN_QUEUE]);
    await queue.expireAbandoned();
    expect(await queue.runDue(PLAN_RUN_QUEUE)).to.equal(1);
    const done = await store.byId(plan.id);
    expect(done?.status).to.equal('done');
    expect(done?.days).to.have.length(7);
    expect(told).to.deep.equal([{ planId: plan.id, householdId, status: 'done' }]);
    expect((await planJobs()).map((j) => j.state)).to.deep.equal(['completed']);
  });
});
