/**
 * TEMPORARY stand-in for @svc/plan-solver (built on another branch against the same interface,
 * /work/wt/SOLVER-API.md): the interface's types and a greedy solver that holds the day rules and
 * caps of simple households, enough for this package's tests until the real solver is merged.
 * Deleted at the merge; nothing outside src/solver.ts imports it.
 */
import type { PlannableDish, StarterLanguage } from '@svc/contracts';

export type Weekday = 'Sunday' | 'Monday' | 'Tuesday' | 'Wednesday' | 'Thursday' | 'Friday' | 'Saturday';

export interface PlanRule {
  id: string;
  strength: 'Hard' | 'Soft';
  scope: 'Permanent' | 'DateRange' | 'SpecificDate';
  startDate: string | null;
  endDate: string | null;
  updatedAt: string;
  payload:
    | { kind: 'CategoryFrequency'; category: string; minimumPerWeek: number; maximumPerWeek: number }
    | { kind: 'CategoryExcludedDays'; category: string; excludedWeekdays: Weekday[] }
    | { kind: 'CategoryOnDay'; category: string; weekday: Weekday | null; specificDate: string | null }
    | { kind: 'MaximumActiveCookingTime'; minutes: number; weekdays: Weekday[]; specificDate: string | null }
    | { kind: 'DinnerTimeOnWeekday'; time: string; weekdays: Weekday[] }
    | { kind: 'PriceClassOnDays'; ceiling: 'Cheap' | 'CheapOrMid'; weekdays: Weekday[] }
    | { kind: 'RepeatAfterDays'; days: number };
}

export interface PlanEvent {
  id: string;
  date: string;
  eventType: 'Guests' | 'EatingOut' | 'Away' | 'Activity';
  servingTime: string | null;
  availableCookingMinutes: number | null;
  participants: { memberId: string | null }[];
}

export interface DayDish {
  id: string;
  origin: 'own' | 'starter';
  name: string;
  category: string;
  activeMinutes: number;
  priceClass: 'Cheap' | 'Mid' | 'Expensive';
}

export interface WhyItem {
  ruleId: string | null;
  eventId: string | null;
  text: string;
}

export interface PlanDay {
  date: string;
  servingTime: string;
  dinner: boolean;
  dish: DayDish | null;
  servings: number;
  locked: boolean;
  why: WhyItem[];
}

export interface UnmetItem {
  ruleId: string | null;
  dates: string[];
  cost: number;
  text: string;
}
export interface ConflictItem {
  ruleIds: string[];
  eventIds: string[];
  dates: string[];
  text: string;
}

export interface PlanInput {
  startDate: string;
  weeks: number;
  language: StarterLanguage;
  defaultDinnerTime: string;
  preferOwnRecipes: boolean;
  maxNewDishesPerWeek: number;
  alwaysNewDishes: boolean;
  madeAgainLift: boolean;
  memberIds: string[];
  rules: PlanRule[];
  events: PlanEvent[];
  candidates: PlannableDish[];
  keptDays: { date: string; dish: DayDish | null; why: WhyItem[] }[];
  earlierDinners: { date: string; id: string; origin: 'own' | 'starter' }[];
  knownStarterIds: string[];
}

export type PlanResult =
  | { status: 'done'; softCost: number; days: PlanDay[]; unmet: UnmetItem[]; conflicts: [] }
  | { status: 'infeasible'; softCost: null; days: []; unmet: []; conflicts: ConflictItem[] };

const WEEKDAYS: Weekday[] = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const DAY_MS = 86_400_000;
const addDays = (d: string, n: number) => new Date(Date.parse(`${d}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);
const weekdayOf = (d: string) => WEEKDAYS[new Date(`${d}T00:00:00Z`).getUTCDay()]!;
const covers = (r: PlanRule, d: string) => r.scope === 'Permanent' || (r.scope === 'DateRange' ? r.startDate! <= d && d <= r.endDate! : r.startDate === d);

function snapshot(d: PlannableDish): DayDish {
  return { id: d.id, origin: d.origin, name: d.name, category: d.category, activeMinutes: d.activeMinutes, priceClass: d.priceClass };
}

/** Greedy: each day the first candidate (by origin, id) its hard day rules, caps and hard repeats allow. */
export async function solvePlan(input: PlanInput, _options?: { timeLimitMs?: number }): Promise<PlanResult> {
  const members = new Set(input.memberIds.map((m) => m.toLowerCase()));
  const kept = new Map(input.keptDays.map((k) => [k.date, k]));
  const dinners: { date: string; key: string }[] = input.earlierDinners.map((e) => ({ date: e.date, key: `${e.origin}:${e.id}` }));
  const candidates = [...input.candidates].sort((a, b) => (a.origin + a.id < b.origin + b.id ? -1 : 1));
  const days: PlanDay[] = [];
  for (let i = 0; i < input.weeks * 7; i++) {
    const date = addDays(input.startDate, i);
    const weekday = weekdayOf(date);
    const events = input.events.filter((e) => e.date === date);
    const eatingOut = events.some((e) => e.eventType === 'EatingOut');
    const away = new Set(
      events.filter((e) => e.eventType === 'Away').flatMap((e) => e.participants.flatMap((p) => (p.memberId ? [p.memberId.toLowerCase()] : []))),
    );
    const everyoneAway = members.size > 0 && [...members].every((m) => away.has(m));
    const guests = events.filter((e) => e.eventType === 'Guests').reduce((n, e) => n + e.participants.filter((p) => !p.memberId).length, 0);
    const applying = input.rules.filter((r) => covers(r, date));
    const timeRules = applying
      .filter((r) => r.payload.kind === 'DinnerTimeOnWeekday' && r.payload.weekdays.includes(weekday))
      .sort((a, b) => (a.updatedAt === b.updatedAt ? (a.id < b.id ? 1 : -1) : a.updatedAt < b.updatedAt ? 1 : -1));
    const eventTimes = events.filter((e) => e.eventType !== 'EatingOut' && e.servingTime).map((e) => e.servingTime!);
    const servingTime = eventTimes.sort()[0] ?? (timeRules[0]?.payload as { time?: string } | undefined)?.time ?? input.defaultDinnerTime;
    const why: WhyItem[] = events.map((e) => ({ ruleId: null, eventId: e.id, text: `${e.eventType} on ${date}` }));
    for (const r of applying) {
      const p = r.payload;
      const named =
        (p.kind === 'CategoryExcludedDays' && p.excludedWeekdays.includes(weekday)) ||
        (p.kind === 'CategoryOnDay' && (p.weekday === weekday || p.specificDate === date)) ||
        (p.kind === 'MaximumActiveCookingTime' && (p.specificDate === date || p.weekdays.includes(weekday) || (!p.specificDate && !p.weekdays.length))) ||
        (p.kind === 'PriceClassOnDays' && (p.weekdays.includes(weekday) || !p.weekdays.length)) ||
        (p.kind === 'DinnerTimeOnWeekday' && p.weekdays.includes(weekday));
      if (named) why.push({ ruleId: r.id, eventId: null, text: `${p.kind} applies on ${date}` });
    }
    const keptDay = kept.get(date);
    if (keptDay) {
      days.push({
        date,
        servingTime,
        dinner: keptDay.dish !== null,
        dish: keptDay.dish,
        servings: keptDay.dish ? Math.max(1, members.size - away.size + guests) : 0,
        locked: true,
        why: keptDay.why,
      });
      if (keptDay.dish) dinners.push({ date, key: `${keptDay.dish.origin}:${keptDay.dish.id}` });
      continue;
    }
    const dinner = !eatingOut && !everyoneAway;
    if (!dinner) {
      days.push({ date, servingTime, dinner: false, dish: null, servings: 0, locked: false, why });
      continue;
    }
    const caps = events.filter((e) => e.eventType !== 'EatingOut' && (e.availableCookingMinutes ?? 0) > 0).map((e) => e.availableCookingMinutes!);
    const cap = caps.length ? Math.min(...caps) : Infinity;
    const hard = applying.filter((r) => r.strength === 'Hard');
    const fits = (d: PlannableDish) =>
      d.activeMinutes <= cap &&
      hard.every((r) => {
        const p = r.payload;
        switch (p.kind) {
          case 'CategoryExcludedDays':
            return !(p.excludedWeekdays.includes(weekday) && d.category === p.category);
          case 'CategoryOnDay':
            return !(p.weekday === weekday || p.specificDate === date) || d.category === p.category;
          case 'MaximumActiveCookingTime':
            return !(p.specificDate === date || p.weekdays.includes(weekday) || (!p.specificDate && !p.weekdays.length)) || d.activeMinutes <= p.minutes;
          case 'PriceClassOnDays':
            return !(p.weekdays.includes(weekday) || !p.weekdays.length) || d.priceClass === 'Cheap' || (p.ceiling === 'CheapOrMid' && d.priceClass === 'Mid');
          case 'RepeatAfterDays':
            return !dinners.some((x) => x.key === `${d.origin}:${d.id}` && Date.parse(date) - Date.parse(x.date) < p.days * DAY_MS);
          default:
            return true;
        }
      });
    const chosen = candidates.find(fits);
    if (!chosen) {
      return {
        status: 'infeasible',
        softCost: null,
        days: [],
        unmet: [],
        conflicts: [{ ruleIds: hard.map((r) => r.id), eventIds: caps.length ? events.map((e) => e.id) : [], dates: [date], text: `No dish fits ${date}` }],
      };
    }
    dinners.push({ date, key: `${chosen.origin}:${chosen.id}` });
    days.push({ date, servingTime, dinner: true, dish: snapshot(chosen), servings: Math.max(1, members.size - away.size + guests), locked: false, why });
  }
  return { status: 'done', softCost: 0, days, unmet: [], conflicts: [] };
}

export class PlanSolverTimeout extends Error {
  constructor(message = 'the solver took longer than its limit') {
    super(message);
    this.name = 'PlanSolverTimeout';
  }
}

/** The shim solves in this thread (the real pool uses worker threads), with the same timeout. */
export class PlanSolverPool {
  constructor(private readonly options: { threads?: number; timeoutMs: number }) {}
  async solve(input: PlanInput): Promise<PlanResult> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new PlanSolverTimeout()), this.options.timeoutMs);
    });
    try {
      return await Promise.race([solvePlan(input), late]);
    } finally {
      clearTimeout(timer);
    }
  }
  async destroy(): Promise<void> {}
}
