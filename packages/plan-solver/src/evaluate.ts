import { dateOf } from './calendar.js';
import { breaksOnDay, countedWeeks, covers, type Problem } from './prepare.js';

/** What one Soft rule (ruleId null: the built-in repeat) breaks in a plan. */
export interface Breach {
  ruleId: string | null;
  dates: Set<string>;
  cost: number;
}

export interface Evaluation {
  softCost: number;
  preferenceCost: number;
  /** Soft rules broken, in the order of the rules (the built-in one last). */
  breaches: Breach[];
  /** Hard rules or caps broken (empty for a plan the solver answers; tests read it). */
  hardBroken: string[];
}

/**
 * §9's costs of a plan, counted straight from their definitions (the solver's model is checked
 * against this, and `unmet` and `softCost` are read from it). `chosen[i]` is the dish key of
 * planned day i (null elsewhere).
 */
export function evaluate(problem: Problem, chosen: readonly (string | null)[]): Evaluation {
  const { days, input } = problem;
  const dinnerKey = days.map((d, i) => (d.planned ? chosen[i]! : d.keptKey));
  const breaches = new Map<string | null, Breach>();
  const hardBroken: string[] = [];
  const breach = (ruleId: string | null, cost: number, dates: string[]) => {
    let b = breaches.get(ruleId);
    if (!b) {
      b = { ruleId, dates: new Set(), cost: 0 };
      breaches.set(ruleId, b);
    }
    b.cost += cost;
    for (const d of dates) b.dates.add(d);
  };

  for (const day of days) {
    if (!day.planned) continue;
    const dish = problem.dishByKey.get(dinnerKey[day.index]!)!;
    if (day.cap !== null && dish.activeMinutes > day.cap) hardBroken.push(`cap ${day.date}`);
    for (const r of problem.rules) {
      if (!covers(r, day.dayNum) || !breaksOnDay(r.rule, day, dish)) continue;
      if (r.hard) hardBroken.push(`${r.rule.id} ${day.date}`);
      else breach(r.rule.id, 1, [day.date]);
    }
  }

  for (const r of problem.rules) {
    const p = r.rule.payload;
    if (p.kind !== 'CategoryFrequency') continue;
    for (const w of countedWeeks(problem, r)) {
      const week = days.slice(w * 7, w * 7 + 7);
      let count = 0;
      for (const day of week) {
        const key = dinnerKey[day.index];
        if (key && problem.dishByKey.get(key)!.category === p.category) count++;
      }
      const units = Math.max(0, p.minimumPerWeek - count) + Math.max(0, count - p.maximumPerWeek);
      if (units === 0) continue;
      if (r.hard) hardBroken.push(`${r.rule.id} week ${w}`);
      else
        breach(
          r.rule.id,
          units,
          week.map((d) => d.date),
        );
    }
  }

  for (const rep of problem.repeats) {
    for (const day of days) {
      const key = dinnerKey[day.index];
      if (!key || !covers(rep, day.dayNum)) continue;
      const earlier: { dayNum: number; fixed: boolean }[] = [];
      for (const f of problem.fixedByDish.get(key) ?? []) if (f < day.dayNum) earlier.push({ dayNum: f, fixed: true });
      for (const other of days)
        if (other.planned && other.dayNum < day.dayNum && dinnerKey[other.index] === key) earlier.push({ dayNum: other.dayNum, fixed: false });
      for (const e of earlier) {
        if (day.dayNum - e.dayNum >= rep.days) continue;
        // Two kept (or earlier) dinners: nobody chose them now, nothing is checked or counted.
        if (e.fixed && !day.planned) continue;
        if (rep.hard) hardBroken.push(`${rep.ruleId} ${dateOf(e.dayNum)} ${day.date}`);
        else breach(rep.ruleId, 1, [dateOf(e.dayNum), day.date]);
      }
    }
  }

  let preferenceCost = 0;
  if (input.preferOwnRecipes) for (const day of days) if (day.planned && problem.dishByKey.get(dinnerKey[day.index]!)!.origin === 'starter') preferenceCost++;
  if (!input.alwaysNewDishes) {
    for (let w = 0; w < problem.weeks; w++) {
      const fresh = new Set<string>();
      for (const day of days.slice(w * 7, w * 7 + 7)) {
        const key = dinnerKey[day.index];
        if (key && problem.dishByKey.get(key)!.isNew) fresh.add(key);
      }
      preferenceCost += Math.max(0, fresh.size - input.maxNewDishesPerWeek);
    }
  }

  const order = new Map<string | null, number>(problem.rules.map((r, i) => [r.rule.id, i]));
  const list = [...breaches.values()].sort((a, b) => (order.get(a.ruleId) ?? Infinity) - (order.get(b.ruleId) ?? Infinity));
  return { softCost: list.reduce((s, b) => s + b.cost, 0), preferenceCost, breaches: list, hardBroken };
}
