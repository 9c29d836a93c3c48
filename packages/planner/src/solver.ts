// The solver package's interface, as this package uses it (one place to import it from).
export {
  type ConflictItem,
  type DayDish,
  type PlanDay as SolvedDay,
  type PlanEvent,
  type PlanInput,
  type PlanResult,
  type PlanRule,
  PlanSolverPool,
  PlanSolverTimeout,
  solvePlan,
  type UnmetItem,
  type WhyItem,
} from '@svc/plan-solver';
