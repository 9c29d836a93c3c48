import { evaluate } from '../src/evaluate.js';
import type { PlanInput, PlanResult } from '../src/index.js';
import { dishKey, prepare } from '../src/prepare.js';

/** The best plan by trying every choice (tiny instances only): least softCost, then least preference cost. */
export function exhaustive(
  input: PlanInput,
  only?: { ruleIds: ReadonlySet<string>; eventIds: ReadonlySet<string> },
): { feasible: boolean; softCost: number; preferenceCost: number } {
  const problem = prepare(input, only);
  const planned = problem.days.filter((d) => d.planned).map((d) => d.index);
  const keys = problem.dishes.map((d) => d.key);
  const chosen: (string | null)[] = problem.days.map(() => null);
  let best: { softCost: number; preferenceCost: number } | null = null;
  const visit = (i: number): void => {
    if (i === planned.length) {
      const e = evaluate(problem, chosen);
      if (e.hardBroken.length > 0) return;
      if (!best || e.softCost < best.softCost || (e.softCost === best.softCost && e.preferenceCost < best.preferenceCost))
        best = { softCost: e.softCost, preferenceCost: e.preferenceCost };
      return;
    }
    for (const k of keys) {
      chosen[planned[i]!] = k;
      visit(i + 1);
    }
    chosen[planned[i]!] = null;
  };
  visit(0);
  const found = best as { softCost: number; preferenceCost: number } | null;
  return found ? { feasible: true, ...found } : { feasible: false, softCost: Number.NaN, preferenceCost: Number.NaN };
}

/** The costs of a plan the solver answered, counted from §9's definitions. */
export function costsOf(input: PlanInput, result: PlanResult & { status: 'done' }) {
  const problem = prepare(input);
  const chosen = problem.days.map((d, i) => {
    const dish = result.days[i]!.dish;
    return d.planned && dish ? dishKey(dish.origin, dish.id) : null;
  });
  return evaluate(problem, chosen);
}
