import type { PlanInput, PlanResult, SolveOptions } from './types.js';

/** Solves in this thread (tests, the bench's "solver alone"). Same input → same result, always. */
export async function solvePlan(_input: PlanInput, _options?: SolveOptions): Promise<PlanResult> {
  throw new Error('plan-solver: not yet implemented');
}
