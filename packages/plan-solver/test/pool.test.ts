import { expect } from 'chai';
import { type PlanInput, type PlanRule, PlanSolverPool, PlanSolverTimeout, solvePlan } from '../src/index.js';
import { household } from '../src/testing.js';
import { input, menu } from './fixtures.js';

/** An infeasible 4-week household with many Hard rules: the conflict search solves it dozens of times. */
function slow(): PlanInput {
  const base = household({ weeks: 4, ownDishes: 2000, starterDishes: 130, rules: 50, seed: 9 });
  const extra: PlanRule[] = Array.from({ length: 40 }, (_, i) => ({
    id: `zz-${String(i).padStart(2, '0')}`,
    strength: 'Hard',
    scope: 'Permanent',
    startDate: null,
    endDate: null,
    updatedAt: '2026-12-01T00:00:00Z',
    payload:
      i % 2
        ? { kind: 'CategoryFrequency', category: 'Fish', minimumPerWeek: 4, maximumPerWeek: 7 }
        : { kind: 'CategoryFrequency', category: 'Meat', minimumPerWeek: 4, maximumPerWeek: 7 },
  }));
  return { ...base, rules: [...base.rules, ...extra] };
}

describe('PlanSolverPool', function () {
  this.timeout(120_000);
  let pool: PlanSolverPool | undefined;
  afterEach(async () => {
    await pool?.destroy();
    pool = undefined;
  });

  it('solves in a worker thread what solvePlan solves here', async () => {
    pool = new PlanSolverPool({ threads: 1, timeoutMs: 60_000 });
    const i = input({ candidates: menu('Fish', 'Meat', 'Soup', 'Pasta', 'Taco', 'Vegan', 'Other') });
    expect(await pool.solve(i)).to.deep.equal(await solvePlan(i));
  });

  it('a solve over timeoutMs rejects with PlanSolverTimeout, and the pool still works after', async () => {
    pool = new PlanSolverPool({ threads: 1, timeoutMs: 1500 });
    const started = performance.now();
    const error = await pool.solve(slow()).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(PlanSolverTimeout);
    expect(performance.now() - started).to.be.below(60_000);
    const after = await pool.solve(input({ candidates: menu('Fish', 'Meat', 'Soup', 'Pasta', 'Taco', 'Vegan', 'Other') }));
    expect(after.status).to.equal('done');
  });

  it('a crash rejects with the error, and the pool still works after', async () => {
    pool = new PlanSolverPool({ threads: 1, timeoutMs: 60_000 });
    const error = await pool.solve({ ...input(), candidates: null } as unknown as PlanInput).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(Error);
    expect(error).to.not.be.instanceOf(PlanSolverTimeout);
    expect((await pool.solve(input({ candidates: menu('Fish') }))).status).to.equal('done');
  });
});
