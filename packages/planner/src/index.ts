// biome-ignore-all assist/source/organizeImports: every domain package's entry point has the same sections in the same order (docs/packages.md)
/**
 * @svc/planner: a household's dinner plans. Runs are asked for over HTTP, done later on @svc/jobs'
 * queue by whichever instance takes them (the solve off the event loop, @svc/plan-solver), and
 * written once; the plans, their days set by hand, replans, and the current plans' dinners the
 * calendar feed shows (`PlannedDinners`).
 */

// Migrations: the package's tables (and its relations to other packages' tables), its queue, its change sources.
export { changeSources, migrate, migrations, PLAN_RUN_QUEUE, queues, relations } from './migrations.js';

// Models: one per table.
export { PlanModel } from './models/index.js';

// Declared reads (the changes feed's value of a plan).
export { planRead } from './reads.js';

// The router.
export { createRouter, type RouterOptions } from './router.js';

// Schemas and their types.
export * from './schemas.js';

// The service.
export { type PlanSolver, type PlannerLogger, PlannerService, type PlannerServiceOptions } from './service.js';

// The store: its interface and its Objection implementation.
export { ObjectionPlanStore, type PlanStore, type RunHistory, type RunOutcome, type RunPlan, type StoredPlan } from './store.js';

// Also of this package: the solver pool the host starts.
export { PlanSolverPool } from './solver.js';
