import type { PlannableDish, StarterLanguage } from '@svc/contracts';

export type Weekday = 'Sunday' | 'Monday' | 'Tuesday' | 'Wednesday' | 'Thursday' | 'Friday' | 'Saturday';

/** A household rule as the API answers it (MealRuleResponse): only what the planner reads. */
export interface PlanRule {
  id: string;
  strength: 'Hard' | 'Soft';
  scope: 'Permanent' | 'DateRange' | 'SpecificDate';
  /** YYYY-MM-DD */
  startDate: string | null;
  endDate: string | null;
  /** ISO date-time (DinnerTimeOnWeekday: the latest updated wins, then the greatest id) */
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

/** A meal event on one of the plan's dates (MealEventResponse, only what the planner reads). */
export interface PlanEvent {
  id: string;
  /** YYYY-MM-DD */
  date: string;
  eventType: 'Guests' | 'EatingOut' | 'Away' | 'Activity';
  /** HH:mm or null */
  servingTime: string | null;
  /** 0 or null: no cap */
  availableCookingMinutes: number | null;
  participants: { memberId: string | null }[];
}

/** The dish a day holds: a snapshot that later edits of the dish never change. */
export interface DayDish {
  id: string;
  origin: 'own' | 'starter';
  name: string;
  category: string;
  activeMinutes: number;
  priceClass: 'Cheap' | 'Mid' | 'Expensive';
}

/** One reason of a day: a rule, an event, or neither (a text only). */
export interface WhyItem {
  ruleId: string | null;
  eventId: string | null;
  text: string;
}

/** One day of a plan. */
export interface PlanDay {
  date: string;
  /** HH:mm */
  servingTime: string;
  dinner: boolean;
  dish: DayDish | null;
  servings: number;
  locked: boolean;
  why: WhyItem[];
}

/** A Soft rule the plan breaks (ruleId null: the built-in RepeatAfterDays of 7 days). */
export interface UnmetItem {
  ruleId: string | null;
  dates: string[];
  cost: number;
  text: string;
}

/** An irreducible set of Hard rules and events that cannot hold together. */
export interface ConflictItem {
  ruleIds: string[];
  eventIds: string[];
  dates: string[];
  text: string;
}

/** Everything a plan depends on. */
export interface PlanInput {
  /** a Monday, YYYY-MM-DD */
  startDate: string;
  /** 1–4 */
  weeks: number;
  /** 'nb' for nb/nn/no preferredLanguage, else 'en' (texts of why/unmet/conflicts) */
  language: StarterLanguage;
  /** HH:mm */
  defaultDinnerTime: string;
  preferOwnRecipes: boolean;
  maxNewDishesPerWeek: number;
  alwaysNewDishes: boolean;
  madeAgainLift: boolean;
  /** every member of the household */
  memberIds: string[];
  /** every rule of the household (the solver decides which cover which days) */
  rules: PlanRule[];
  /** the household's events on the plan's dates */
  events: PlanEvent[];
  /** own dishes + (useStarterLibrary ? starter dishes in `language` : []) */
  candidates: PlannableDish[];
  /** Days of the plan kept as they are (replan: the locked days; a day with dish null has no dinner). */
  keptDays: { date: string; dish: DayDish | null; why: WhyItem[] }[];
  /** Dinners of the household's current plans before startDate (at least as far back as the longest RepeatAfterDays, or 7 days). */
  earlierDinners: { date: string; id: string; origin: 'own' | 'starter' }[];
  /** Starter dish ids that a done or replaced plan of the household with an earlier startDate had (not "new"). */
  knownStarterIds: string[];
}

/** The plan: done with its days, or infeasible with its conflicts. */
export type PlanResult =
  | { status: 'done'; softCost: number; days: PlanDay[]; unmet: UnmetItem[]; conflicts: [] }
  | { status: 'infeasible'; softCost: null; days: []; unmet: []; conflicts: ConflictItem[] };

/** Options of one solve in this thread. */
export interface SolveOptions {
  /** A time limit for the whole solve; over it, solvePlan rejects with PlanSolverTimeout. */
  timeLimitMs?: number;
}

/** Options of a pool of worker threads. */
export interface PlanSolverPoolOptions {
  /** Worker threads (default 1). */
  threads?: number;
  /** A solve over this rejects with PlanSolverTimeout and its worker is replaced. */
  timeoutMs: number;
}
