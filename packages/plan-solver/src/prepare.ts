import type { PlannableDish } from '@svc/contracts';
import { dateOf, dayNumber, minutesOf, weekdayOf } from './calendar.js';
import type { DayDish, PlanEvent, PlanInput, PlanRule, Weekday, WhyItem } from './types.js';

/** A dish the solver can place: a candidate, or the dish of a kept day. */
export interface Dish {
  key: string;
  id: string;
  origin: 'own' | 'starter';
  name: string;
  category: string;
  activeMinutes: number;
  priceClass: 'Cheap' | 'Mid' | 'Expensive';
  madeAgain: boolean;
  /** A starter dish no earlier plan had (§9 "new"). */
  isNew: boolean;
}

export interface Day {
  index: number;
  date: string;
  dayNum: number;
  weekday: Weekday;
  week: number;
  kept: { dish: DayDish | null; why: WhyItem[] } | undefined;
  /** A dinner the solver must choose (not kept, dinner true). */
  planned: boolean;
  dinner: boolean;
  /** The events' cooking cap (smallest availableCookingMinutes above 0), null: none. */
  cap: number | null;
  servings: number;
  servingTime: string;
  /** The dish key of a kept day with a dish. */
  keptKey: string | null;
}

export interface RepeatRule {
  ruleId: string | null;
  hard: boolean;
  days: number;
  from: number;
  to: number;
}

/** A rule whose scope is resolved to day numbers (inclusive). */
export interface ScopedRule {
  rule: PlanRule;
  hard: boolean;
  from: number;
  to: number;
}

export interface Problem {
  input: PlanInput;
  startNum: number;
  days: Day[];
  weeks: number;
  rules: ScopedRule[];
  repeats: RepeatRule[];
  /** Events applied (all of them for a plan; a subset when a conflict is judged). */
  events: PlanEvent[];
  dishes: Dish[];
  dishByKey: Map<string, Dish>;
  /** Fixed dinners (earlier dinners and kept days with a dish): dayNum → dish key, per dish. */
  fixedByDish: Map<string, number[]>;
  /** Soft rules and preferences count (false when only feasibility is judged). */
  costs: boolean;
}

export const dishKey = (origin: string, id: string): string => `${origin}:${id}`;

export function covers(r: { from: number; to: number }, dayNum: number): boolean {
  return dayNum >= r.from && dayNum <= r.to;
}

function scopeOf(rule: PlanRule): { from: number; to: number } {
  if (rule.scope === 'Permanent') return { from: -Infinity, to: Infinity };
  if (rule.scope === 'SpecificDate') {
    const d = rule.startDate ? dayNumber(rule.startDate) : Number.NaN;
    return { from: d, to: d };
  }
  return {
    from: rule.startDate ? dayNumber(rule.startDate) : -Infinity,
    to: rule.endDate ? dayNumber(rule.endDate) : Infinity,
  };
}

const byId = <T extends { id: string }>(a: T, b: T): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** The DinnerTimeOnWeekday rule that sets a day's time: the latest updated, then the greatest id. */
export function dinnerTimeRule(rules: readonly PlanRule[], dayNum: number): PlanRule | undefined {
  let best: PlanRule | undefined;
  for (const rule of rules) {
    if (rule.payload.kind !== 'DinnerTimeOnWeekday') continue;
    if (!covers(scopeOf(rule), dayNum) || !rule.payload.weekdays.includes(weekdayOf(dayNum))) continue;
    if (!best) {
      best = rule;
      continue;
    }
    const a = Date.parse(rule.updatedAt);
    const b = Date.parse(best.updatedAt);
    if (a > b || (a === b && rule.id > best.id)) best = rule;
  }
  return best;
}

/** Whether a rule applies to a day in the sense of `why`: it covers the day and names its weekday or date. */
export function namesDay(rule: PlanRule, dayNum: number): boolean {
  if (!covers(scopeOf(rule), dayNum)) return false;
  const p = rule.payload;
  const weekday = weekdayOf(dayNum);
  const date = dateOf(dayNum);
  switch (p.kind) {
    case 'CategoryExcludedDays':
      return p.excludedWeekdays.includes(weekday);
    case 'CategoryOnDay':
      return p.weekday === weekday || p.specificDate === date;
    case 'MaximumActiveCookingTime':
      return p.weekdays.includes(weekday) || p.specificDate === date;
    case 'PriceClassOnDays':
    case 'DinnerTimeOnWeekday':
      return p.weekdays.includes(weekday);
    default:
      return false;
  }
}

/**
 * The plan's days, rules and dishes, resolved once. `only` restricts the Hard rules and events
 * applied (a conflict is judged with its own rules and events only; Soft rules then play no part).
 */
export function prepare(input: PlanInput, only?: { ruleIds: ReadonlySet<string>; eventIds: ReadonlySet<string> }): Problem {
  const startNum = dayNumber(input.startDate);
  const total = input.weeks * 7;
  const costs = !only;
  const allRules = [...input.rules].sort(byId);
  const events = [...input.events].sort(byId).filter((e) => !only || only.eventIds.has(e.id));
  const kept = new Map(input.keptDays.map((k) => [dayNumber(k.date), k]));
  const members = new Set(input.memberIds);

  const days: Day[] = [];
  for (let i = 0; i < total; i++) {
    const dayNum = startNum + i;
    const date = dateOf(dayNum);
    const today = events.filter((e) => e.date === date);
    const eatingOut = today.some((e) => e.eventType === 'EatingOut');
    const away = new Set<string>();
    for (const e of today) if (e.eventType === 'Away') for (const p of e.participants) if (p.memberId !== null && members.has(p.memberId)) away.add(p.memberId);
    const everyoneAway = today.some((e) => e.eventType === 'Away') && members.size > 0 && away.size === members.size;
    const k = kept.get(dayNum);
    const dinner = k ? k.dish !== null : !eatingOut && !everyoneAway;
    let guests = 0;
    for (const e of today) if (e.eventType === 'Guests') guests += e.participants.filter((p) => p.memberId === null).length;
    const servings = dinner ? Math.max(1, members.size - away.size + guests) : 0;
    let cap: number | null = null;
    let eventTime: string | null = null;
    for (const e of today) {
      if (e.eventType === 'EatingOut') continue;
      if (e.availableCookingMinutes !== null && e.availableCookingMinutes > 0)
        cap = cap === null ? e.availableCookingMinutes : Math.min(cap, e.availableCookingMinutes);
      if (e.servingTime !== null && (eventTime === null || minutesOf(e.servingTime) < minutesOf(eventTime))) eventTime = e.servingTime;
    }
    const timeRule = dinnerTimeRule(allRules, dayNum);
    const servingTime = eventTime ?? (timeRule?.payload.kind === 'DinnerTimeOnWeekday' ? timeRule.payload.time : input.defaultDinnerTime);
    days.push({
      index: i,
      date,
      dayNum,
      weekday: weekdayOf(dayNum),
      week: Math.floor(i / 7),
      kept: k ? { dish: k.dish, why: k.why } : undefined,
      planned: !k && dinner,
      dinner,
      cap,
      servings,
      servingTime,
      keptKey: k?.dish ? dishKey(k.dish.origin, k.dish.id) : null,
    });
  }

  const rules: ScopedRule[] = [];
  for (const rule of allRules) {
    const hard = rule.strength === 'Hard';
    if (only ? !hard || !only.ruleIds.has(rule.id) : false) continue;
    rules.push({ rule, hard, ...scopeOf(rule) });
  }
  const repeats: RepeatRule[] = [];
  for (const r of rules)
    if (r.rule.payload.kind === 'RepeatAfterDays') repeats.push({ ruleId: r.rule.id, hard: r.hard, days: r.rule.payload.days, from: r.from, to: r.to });
  if (costs && !allRules.some((r) => r.payload.kind === 'RepeatAfterDays')) repeats.push({ ruleId: null, hard: false, days: 7, from: -Infinity, to: Infinity });

  const known = new Set(input.knownStarterIds);
  const dishByKey = new Map<string, Dish>();
  const toDish = (d: PlannableDish | DayDish, madeAgain: boolean): Dish => ({
    key: dishKey(d.origin, d.id),
    id: d.id,
    origin: d.origin,
    name: d.name,
    category: d.category,
    activeMinutes: d.activeMinutes,
    priceClass: d.priceClass,
    madeAgain,
    isNew: d.origin === 'starter' && !known.has(d.id),
  });
  const candidates = [...input.candidates].sort((a, b) => (dishKey(a.origin, a.id) < dishKey(b.origin, b.id) ? -1 : 1));
  const dishes: Dish[] = [];
  for (const c of candidates) {
    const dish = toDish(c, c.madeAgain);
    if (dishByKey.has(dish.key)) continue;
    dishByKey.set(dish.key, dish);
    dishes.push(dish);
  }
  for (const day of days) {
    const d = day.kept?.dish;
    if (d && !dishByKey.has(dishKey(d.origin, d.id))) dishByKey.set(dishKey(d.origin, d.id), toDish(d, false));
  }

  const fixedByDish = new Map<string, number[]>();
  const addFixed = (key: string, dayNum: number) => {
    const list = fixedByDish.get(key);
    if (list) list.push(dayNum);
    else fixedByDish.set(key, [dayNum]);
  };
  for (const e of input.earlierDinners) {
    const n = dayNumber(e.date);
    if (n < startNum) addFixed(dishKey(e.origin, e.id), n);
  }
  for (const day of days) if (day.keptKey) addFixed(day.keptKey, day.dayNum);
  for (const list of fixedByDish.values()) list.sort((a, b) => a - b);

  return { input, startNum, days, weeks: input.weeks, rules, repeats, events, dishes, dishByKey, fixedByDish, costs };
}

/** The day rules' verdict on a dish on a planned day: null when a Hard rule or a cap forbids it, else the Soft units it breaks. */
export function dayVerdict(problem: Problem, day: Day, dish: Dish, perRule?: (rule: ScopedRule) => void): number | null {
  if (day.cap !== null && dish.activeMinutes > day.cap) return null;
  let cost = 0;
  for (const r of problem.rules) {
    if (!covers(r, day.dayNum)) continue;
    if (!breaksOnDay(r.rule, day, dish)) continue;
    if (r.hard) return null;
    cost++;
    perRule?.(r);
  }
  return cost;
}

/** Whether a day rule breaks on a planned day with this dish (rules of other kinds never do). */
export function breaksOnDay(rule: PlanRule, day: Day, dish: Dish): boolean {
  const p = rule.payload;
  switch (p.kind) {
    case 'CategoryExcludedDays':
      return dish.category === p.category && p.excludedWeekdays.includes(day.weekday);
    case 'CategoryOnDay':
      return (p.weekday === day.weekday || p.specificDate === day.date) && dish.category !== p.category;
    case 'MaximumActiveCookingTime':
      return (p.weekdays.includes(day.weekday) || p.specificDate === day.date) && dish.activeMinutes > p.minutes;
    case 'PriceClassOnDays':
      return p.weekdays.includes(day.weekday) && (p.ceiling === 'Cheap' ? dish.priceClass !== 'Cheap' : dish.priceClass === 'Expensive');
    default:
      return false;
  }
}

/** The weeks (0-based) a CategoryFrequency rule counts: those it covers on all seven days. */
export function countedWeeks(problem: Problem, r: ScopedRule): number[] {
  const weeks: number[] = [];
  for (let w = 0; w < problem.weeks; w++) {
    const first = problem.startNum + w * 7;
    if (covers(r, first) && covers(r, first + 6)) weeks.push(w);
  }
  return weeks;
}

/** The longest repeat window that covers a day (0: none). */
export function repeatWindow(problem: Problem, dayNum: number): number {
  let n = 0;
  for (const r of problem.repeats) if (covers(r, dayNum) && r.days > n) n = r.days;
  return n;
}
