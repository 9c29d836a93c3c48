export { PlanSolverTimeout } from './errors.js';
export { PlanSolverPool } from './pool.js';
export { solvePlan } from './solve.js';
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
