/** A solve took longer than its limit. */
export class PlanSolverTimeout extends Error {
  constructor(ms: number) {
    super(`the plan solver took longer than ${ms} ms`);
    this.name = 'PlanSolverTimeout';
  }
}
