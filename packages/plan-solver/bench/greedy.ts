import { evaluate } from '../src/evaluate.js';
import type { PlanInput } from '../src/index.js';
import { countedWeeks, covers, dayVerdict, type Problem, prepare } from '../src/prepare.js';

/**
 * The baseline the bench compares with: day by day, the dish that adds the least Soft cost so far
 * (day rules, repeats with earlier choices, weekly counts already reached), ties by the least used.
 * It proves nothing and can paint itself into a corner (Hard weekly minimums, repeats ahead).
 */
export function greedy(input: PlanInput): { softCost: number; hardBroken: number } {
  const problem: Problem = prepare(input);
  const chosen: (string | null)[] = problem.days.map(() => null);
  const uses = new Map<string, number[]>();
  for (const [key, list] of problem.fixedByDish) uses.set(key, [...list]);
  const freq = problem.rules.filter((r) => r.rule.payload.kind === 'CategoryFrequency');
  for (const day of problem.days) {
    if (!day.planned) continue;
    let best: { key: string; cost: number; used: number } | null = null;
    for (const dish of problem.dishes) {
      let cost = dayVerdict(problem, day, dish);
      if (cost === null) continue;
      const past = uses.get(dish.key) ?? [];
      let forbidden = false;
      for (const rep of problem.repeats) {
        if (!covers(rep, day.dayNum)) continue;
        const close = past.filter((p) => p < day.dayNum && day.dayNum - p < rep.days).length;
        if (close && rep.hard) forbidden = true;
        cost += close;
      }
      for (const r of freq) {
        const p = r.rule.payload;
        if (p.kind !== 'CategoryFrequency' || p.category !== dish.category || !countedWeeks(problem, r).includes(day.week)) continue;
        const week = problem.days.slice(day.week * 7, day.week * 7 + 7);
        const count = week.filter((d) => {
          const key = d.planned ? chosen[d.index] : d.keptKey;
          return key && problem.dishByKey.get(key)!.category === p.category;
        }).length;
        if (count >= p.maximumPerWeek) {
          if (r.hard) forbidden = true;
          cost++;
        }
      }
      if (forbidden) continue;
      if (!best || cost < best.cost || (cost === best.cost && past.length < best.used)) best = { key: dish.key, cost, used: past.length };
    }
    const key = best?.key ?? problem.dishes[0]!.key;
    chosen[day.index] = key;
    uses.set(key, [...(uses.get(key) ?? []), day.dayNum]);
  }
  const e = evaluate(problem, chosen);
  return { softCost: e.softCost, hardBroken: e.hardBroken.length };
}
