/**
 * The planner's bench (issue 46 "Speed"): `npm run bench -- --only planner`.
 *
 * 1. CPU per plan run, p50/p95, for the three cases: the service's run (`PlannerService.run`: the
 *    inputs through its capabilities, the solve in the worker pool, the write with its
 *    notification), and the same input solved alone in this thread; the service's overhead over the bare solve,
 *    and its fixed cost per run (the median over households of the run's CPU less its bare solve's).
 * 2. A queue of runs drained by one instance (the 1-week case): runs per second, and this
 *    process's event-loop delay p99 while the runs go on (the loop serves; the pool solves).
 *
 * Options: --planner-runs N (default 5), --planner-households N (default 1000), --planner-at-once N
 * (the service's `runsAtOnce`, default its own: 4).
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { DishCatalog, PlanningHousehold } from '@svc/contracts';
import { createLogger, ManualClock } from '@svc/http-kit';
import * as jobs from '@svc/jobs';
import { syntheticHousehold as household, solvePlan } from '@svc/plan-solver';
import * as planner from '@svc/planner';
import { createTestDatabase } from '@svc/test-support';

const { values: args } = parseArgs({
  options: { 'planner-runs': { type: 'string' }, 'planner-households': { type: 'string' }, 'planner-at-once': { type: 'string' }, only: { type: 'string' } },
  strict: false,
});
const RUNS = Number(args['planner-runs'] ?? 5);
const HOUSEHOLDS = Number(args['planner-households'] ?? 1000);
const cases = [
  { name: '1 week / 50 dishes / 10 rules', shape: { weeks: 1, ownDishes: 50, starterDishes: 0, rules: 10 } },
  { name: '4 weeks / 300 dishes / 30 rules', shape: { weeks: 4, ownDishes: 300, starterDishes: 0, rules: 30 } },
  { name: '4 weeks / 2,000 own + 130 starter / 50 rules', shape: { weeks: 4, ownDishes: 2000, starterDishes: 130, rules: 50 } },
];
const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;
const q = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(p * xs.length) - 1)]!;

const db = await createTestDatabase([jobs.migrations, planner.migrations, planner.queues]);
const clock = new ManualClock('2027-01-01T09:00:00.000Z');
const queue = new jobs.JobQueue({ knex: db.knex, clock, logger: createLogger({ level: 'silent' }), pollIntervalMs: 50 });
const pool = new planner.PlanSolverPool({ threads: Math.max(1, os.availableParallelism() - 1), timeoutMs: 60_000 });
const store = new planner.ObjectionPlanStore(db.knex);
// Each household's inputs, as the owning packages' capabilities would answer them.
const inputs = new Map<string, ReturnType<typeof household>>();
const of = (householdId: string) => inputs.get(householdId)!;
const catalog: DishCatalog = {
  ownDishes: async (h) => of(h).candidates.filter((d) => d.origin === 'own'),
  starterDishes: () => [],
  find: async () => undefined,
};
const service = new planner.PlannerService({
  store,
  knex: db.knex,
  clock,
  jobs: queue,
  access: { roleOf: async () => 'Owner' },
  households: async (h): Promise<PlanningHousehold> => {
    const i = of(h);
    return {
      timeZoneId: 'Europe/Oslo',
      defaultDinnerTime: i.defaultDinnerTime,
      preferredLanguage: 'en',
      useStarterLibrary: false,
      preferOwnRecipes: i.preferOwnRecipes,
      maxNewDishesPerWeek: i.maxNewDishesPerWeek,
      alwaysNewDishes: i.alwaysNewDishes,
      madeAgainLift: i.madeAgainLift,
      memberIds: i.memberIds,
    };
  },
  rules: async (h) => of(h).rules,
  events: async (h) => of(h).events,
  // The generated starter dishes stand as own dishes (the catalog's starter list is per language, not per household).
  dishes: catalog,
  solver: pool,
  runsAtOnce: args['planner-at-once'] ? Number(args['planner-at-once']) : undefined,
});
service.defineJobs();

async function newRun(shape: (typeof cases)[number]['shape'], seed: number): Promise<string> {
  const householdId = randomUUID();
  inputs.set(householdId, household({ ...shape, seed }));
  return (await store.createRun({ householdId, startDate: '2027-01-04', weeks: shape.weeks, replanOf: null }, clock.now())).id;
}

console.log('\n## The planner\n');
console.log('| case | runs | service CPU ms p50 | p95 | solver alone CPU ms p50 | p95 | overhead (p50) | fixed ms p50 | wall ms p50 |');
console.log('|---|---|---|---|---|---|---|---|---|');
// Warm the workers and this thread's solver (the WebAssembly module loaded, V8 tiered up).
for (let i = 0; i < 3; i++) {
  await service.run(await newRun(cases[0]!.shape, 900 + i));
  await solvePlan(household({ ...cases[0]!.shape, seed: 900 + i }));
}
for (const c of cases) {
  const svc: number[] = [];
  const alone: number[] = [];
  const wall: number[] = [];
  for (let seed = 1; seed <= RUNS; seed++) {
    const id = await newRun(c.shape, seed);
    const input = await service.inputs((await store.byId(id))!);
    let before = process.cpuUsage();
    const t = performance.now();
    await service.run(id);
    wall.push(performance.now() - t);
    svc.push(cpuMs(process.cpuUsage(before)));
    before = process.cpuUsage();
    await solvePlan(input);
    alone.push(cpuMs(process.cpuUsage(before)));
  }
  const over = (100 * (q(svc, 0.5) - q(alone, 0.5))) / q(alone, 0.5);
  // The same household's run less its bare solve: the service's own cost per run, less noisy than the p50s' difference.
  const fixed = q(
    svc.map((x, i) => x - alone[i]!),
    0.5,
  );
  console.log(
    `| ${c.name} | ${RUNS} | ${q(svc, 0.5).toFixed(0)} | ${q(svc, 0.95).toFixed(0)} | ${q(alone, 0.5).toFixed(0)} | ${q(alone, 0.95).toFixed(0)} | ${over.toFixed(0)} % | ${fixed.toFixed(0)} | ${q(wall, 0.5).toFixed(0)} |`,
  );
}

// The drain: HOUSEHOLDS runs of the 1-week case queued at once, one instance's runner.
await db.knex.raw('delete from plans');
const ids: string[] = [];
await db.knex.transaction(async (trx) => {
  for (let i = 0; i < HOUSEHOLDS; i++) {
    const householdId = randomUUID();
    inputs.set(householdId, household({ ...cases[0]!.shape, seed: 10_000 + i }));
    const plan = await store.createRun({ householdId, startDate: '2027-01-04', weeks: 1, replanOf: null }, clock.now(), trx);
    ids.push(plan.id);
  }
  await queue.enqueueMany(
    planner.PLAN_RUN_QUEUE,
    ids.map((planId) => ({ planId })),
    { trx },
  );
});
const delay = monitorEventLoopDelay({ resolution: 10 });
delay.enable();
const t0 = performance.now();
await queue.start();
for (;;) {
  const open = Number((await db.knex.raw(`select count(*) as n from plans where status in ('queued','running')`)).rows[0].n);
  if (open === 0) break;
  await new Promise((r) => setTimeout(r, 200));
}
const seconds = (performance.now() - t0) / 1000;
delay.disable();
const statuses = (await db.knex.raw('select status, count(*)::int as n from plans group by status')).rows as { status: string; n: number }[];
console.log(`\n| drain (1 week case) | runs | seconds | runs/s | event-loop delay p99 ms | outcomes |`);
console.log('|---|---|---|---|---|---|');
console.log(
  `| one instance, ${Math.max(1, os.availableParallelism() - 1)} solver thread(s) | ${HOUSEHOLDS} | ${seconds.toFixed(1)} | ${(HOUSEHOLDS / seconds).toFixed(1)} | ${(delay.percentile(99) / 1e6).toFixed(1)} | ${statuses.map((s) => `${s.status} ${s.n}`).join(', ')} |`,
);
await queue.stop();
await service.close();
await pool.destroy();
await db.destroy();
