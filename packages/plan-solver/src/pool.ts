import type { PlanInput, PlanResult, PlanSolverPoolOptions } from './types.js';

/**
 * Solves in worker threads (the solver loaded once per worker). A solve over `timeoutMs` rejects
 * with PlanSolverTimeout (and the worker is replaced); a crash rejects with the error.
 */
export class PlanSolverPool {
  readonly #options: PlanSolverPoolOptions;
  constructor(options: PlanSolverPoolOptions) {
    this.#options = options;
  }
  async solve(_input: PlanInput): Promise<PlanResult> {
    void this.#options;
    throw new Error('plan-solver: not yet implemented');
  }
  async destroy(): Promise<void> {}
}
