import { dayNumber } from './calendar.js';
import { evaluate } from './evaluate.js';
import { solveModel } from './model.js';
import { breaksOnDay, countedWeeks, covers, namesDay, type Problem, prepare } from './prepare.js';
import { describeEvent, describeRule, texts } from './texts.js';
import type { ConflictItem, DayDish, PlanDay, PlanEvent, PlanInput, PlanResult, PlanRule, SolveOptions, UnmetItem, WhyItem } from './types.js';

/** Conflicts found beyond the first are disjoint from the earlier ones; a few are enough to act on. */
const MAX_CONFLICTS = 3;

/** Solves in this thread (tests, the bench's "solver alone"). Same input → same result, always. */
export async function solvePlan(input: PlanInput, options?: SolveOptions): Promise<PlanResult> {
  // A tenth of the limit is kept back: a solve stopped at the deadline may still answer the plan it found (model.ts' runLp).
  const deadline = performance.now() + 0.9 * (options?.timeLimitMs ?? Infinity);
  const problem = prepare(input);
  const outcome = await solveModel(problem, deadline);
  if (outcome.status === 'optimal') return donePlan(problem, outcome.chosen);
  return { status: 'infeasible', softCost: null, days: [], unmet: [], conflicts: await findConflicts(input, deadline) };
}

const byId = <T extends { id: string }>(a: T, b: T): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

function donePlan(problem: Problem, chosen: (string | null)[]): PlanResult {
  const { input } = problem;
  const lang = input.language;
  const rules = [...input.rules].sort(byId);
  const events = [...input.events].sort(byId);
  const days: PlanDay[] = problem.days.map((day) => {
    const base = { date: day.date, servingTime: day.servingTime, dinner: day.dinner, servings: day.servings };
    if (day.kept) return { ...base, dish: day.kept.dish, locked: true, why: day.kept.why };
    const dish = day.planned ? problem.dishByKey.get(chosen[day.index]!)! : null;
    const why: WhyItem[] = [];
    if (dish) why.push({ ruleId: null, eventId: null, text: texts.chosen(lang, dish.name) });
    for (const rule of rules) {
      if (!namesDay(rule, day.dayNum)) continue;
      const described = describeRule(lang, rule);
      let text: string;
      if (rule.payload.kind === 'DinnerTimeOnWeekday') text = texts.held(lang, described);
      else if (!dish) text = texts.noDinnerRule(lang, described);
      else if (breaksOnDay(rule, day, dish)) text = texts.broken(lang, described);
      else text = texts.held(lang, described);
      why.push({ ruleId: rule.id, eventId: null, text });
    }
    for (const e of events) if (e.date === day.date) why.push({ ruleId: null, eventId: e.id, text: texts.event(lang, describeEvent(lang, e)) });
    const snapshot: DayDish | null = dish
      ? { id: dish.id, origin: dish.origin, name: dish.name, category: dish.category, activeMinutes: dish.activeMinutes, priceClass: dish.priceClass }
      : null;
    return { ...base, dish: snapshot, locked: false, why };
  });
  const evaluation = evaluate(problem, chosen);
  const ruleById = new Map(rules.map((r) => [r.id, r]));
  const unmet: UnmetItem[] = evaluation.breaches.map((b) => ({
    ruleId: b.ruleId,
    dates: [...b.dates].sort(),
    cost: b.cost,
    text: texts.unmet(lang, describeRule(lang, b.ruleId === null ? null : ruleById.get(b.ruleId)!), b.cost),
  }));
  return { status: 'done', softCost: evaluation.softCost, days, unmet, conflicts: [] };
}

type Element = { rule: PlanRule; event?: undefined } | { event: PlanEvent; rule?: undefined };

/** Events that can change whether a plan holds: they remove a dinner or cap a day's cooking. */
function actsOnPlan(e: PlanEvent): boolean {
  return e.eventType === 'EatingOut' || e.eventType === 'Away' || (e.availableCookingMinutes !== null && e.availableCookingMinutes > 0);
}

/**
 * Irreducible sets of Hard rules and events by a deletion filter: each element is left out in
 * turn and stays out when the rest still cannot hold (judged by the solver with only that set's
 * rules and events applied), so every element of a found set is needed, by construction.
 */
async function findConflicts(input: PlanInput, deadline: number): Promise<ConflictItem[]> {
  const startNum = dayNumber(input.startDate);
  const endNum = startNum + input.weeks * 7 - 1;
  const elements: Element[] = [
    ...[...input.rules]
      .sort(byId)
      .filter((r) => r.strength === 'Hard' && r.payload.kind !== 'DinnerTimeOnWeekday')
      .map((rule) => ({ rule })),
    ...[...input.events]
      .sort(byId)
      .filter((e) => actsOnPlan(e) && dayNumber(e.date) >= startNum && dayNumber(e.date) <= endNum)
      .map((event) => ({ event })),
  ];
  const holds = async (set: readonly Element[]): Promise<boolean> => {
    const ruleIds = new Set<string>();
    const eventIds = new Set<string>();
    for (const e of set) {
      if (e.rule) ruleIds.add(e.rule.id);
      else eventIds.add(e.event.id);
    }
    const outcome = await solveModel(prepare(input, { ruleIds, eventIds }), deadline);
    return outcome.status !== 'infeasible';
  };
  const conflicts: ConflictItem[] = [];
  let pool = elements;
  while (conflicts.length < MAX_CONFLICTS) {
    if (conflicts.length > 0 && (await holds(pool))) break;
    let set = pool;
    for (const element of pool) {
      const without = set.filter((e) => e !== element);
      if (!(await holds(without))) set = without;
    }
    conflicts.push(describeConflict(input, set));
    if (set.length === 0) break;
    pool = pool.filter((e) => !set.includes(e));
  }
  return conflicts;
}

function describeConflict(input: PlanInput, set: readonly Element[]): ConflictItem {
  const lang = input.language;
  const problem = prepare(input, { ruleIds: new Set(), eventIds: new Set() });
  const dates = new Set<string>();
  const ruleIds: string[] = [];
  const eventIds: string[] = [];
  const items: string[] = [];
  for (const e of set) {
    if (e.event) {
      eventIds.push(e.event.id);
      items.push(describeEvent(lang, e.event));
      dates.add(e.event.date);
      continue;
    }
    const rule = e.rule;
    ruleIds.push(rule.id);
    items.push(describeRule(lang, rule));
    const scoped = { rule, hard: true, ...scopeRange(rule) };
    if (rule.payload.kind === 'CategoryFrequency') {
      for (const w of countedWeeks(problem, scoped)) for (const day of problem.days.slice(w * 7, w * 7 + 7)) dates.add(day.date);
    } else if (rule.payload.kind === 'RepeatAfterDays') {
      for (const day of problem.days) if (covers(scoped, day.dayNum)) dates.add(day.date);
    } else {
      for (const day of problem.days) if (namesDay(rule, day.dayNum)) dates.add(day.date);
    }
  }
  if (set.length === 0) for (const day of problem.days) if (day.planned) dates.add(day.date);
  return {
    ruleIds,
    eventIds,
    dates: [...dates].sort(),
    text: set.length === 0 ? texts.noDish(lang) : texts.conflict(lang, items),
  };
}

function scopeRange(rule: PlanRule): { from: number; to: number } {
  if (rule.scope === 'Permanent') return { from: -Infinity, to: Infinity };
  if (rule.scope === 'SpecificDate') return rule.startDate ? { from: dayNumber(rule.startDate), to: dayNumber(rule.startDate) } : { from: 1, to: 0 };
  return { from: rule.startDate ? dayNumber(rule.startDate) : -Infinity, to: rule.endDate ? dayNumber(rule.endDate) : Infinity };
}
