export { PlanSolverTimeout } from './errors.js';
export { PlanSolverPool } from './pool.js';
export { solvePlan } from './solve.js';
// Seeded households of a given shape, for benches and tests of the planner (this package's and the API's).
export { type HouseholdShape, household as syntheticHousehold } from './testing.js';
export type {
  ConflictItem,
  DayDish,
  PlanDay,
  PlanEvent,
  PlanInput,
  PlanResult,
  PlanRule,
  PlanSolverPoolOptions,
  SolveOptions,
  UnmetItem,
  Weekday,
  WhyItem,
} from './types.js';
