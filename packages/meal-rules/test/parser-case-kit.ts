import type { CreateMealRuleRequest, MealCategory, MealRulePayload, PriceCeiling, Weekday } from '../src/parser/index.js';

// Types and builders shared by the parser's case tables (parser-cases.ts, the tuning table;
// parser-heldout.ts, the held-out table the parser is never tuned on).

export const TODAY = '2026-11-22';

export interface ExpectedLeftovers {
  enabled: boolean;
  askedEveryDays: number | null;
}

export interface ParserCase {
  text: string;
  today?: string;
  /** ctx.language: a hint only */
  language?: string;
  /** the language the summaries must be written in */
  lang: 'en' | 'nb';
  expect: {
    proposals: CreateMealRuleRequest[];
    leftoverDinners?: ExpectedLeftovers | null;
    unheard?: string[];
  };
  /** exact summaries, checked for a subset of cases */
  summaries?: string[];
}

// --- builders -------------------------------------------------------------------------

export interface Opts {
  soft?: boolean;
  range?: [string, string];
  date?: string;
}

export const MON: Weekday = 'Monday';
export const TUE: Weekday = 'Tuesday';
export const WED: Weekday = 'Wednesday';
export const THU: Weekday = 'Thursday';
export const FRI: Weekday = 'Friday';
export const SAT: Weekday = 'Saturday';
export const SUN: Weekday = 'Sunday';
export const WORKDAYS: Weekday[] = [MON, TUE, WED, THU, FRI];
export const WEEKEND: Weekday[] = [SAT, SUN];
export const ALL: Weekday[] = [MON, TUE, WED, THU, FRI, SAT, SUN];

export function req(payload: MealRulePayload, o: Opts = {}): CreateMealRuleRequest {
  const strength = o.soft ? 'Soft' : 'Hard';
  if (o.date) return { payload, strength, scope: 'SpecificDate', startDate: o.date, endDate: o.date };
  if (o.range) return { payload, strength, scope: 'DateRange', startDate: o.range[0], endDate: o.range[1] };
  return { payload, strength, scope: 'Permanent', startDate: null, endDate: null };
}

export const freq = (category: MealCategory, min: number, max: number, o?: Opts) =>
  req({ kind: 'CategoryFrequency', category, minimumPerWeek: min, maximumPerWeek: max }, o);
export const never = (category: MealCategory, o?: Opts) => freq(category, 0, 0, o);
export const excl = (category: MealCategory, days: Weekday[], o?: Opts) => req({ kind: 'CategoryExcludedDays', category, excludedWeekdays: days }, o);
export const on = (category: MealCategory, weekday: Weekday, o?: Opts) => req({ kind: 'CategoryOnDay', category, weekday, specificDate: null }, o);
export const onDate = (category: MealCategory, date: string, o?: Opts) =>
  req({ kind: 'CategoryOnDay', category, weekday: null, specificDate: date }, { ...o, date });
export const cook = (minutes: number, weekdays: Weekday[] = [], o?: Opts) =>
  req({ kind: 'MaximumActiveCookingTime', minutes, weekdays, specificDate: o?.date ?? null }, o);
export const dinnerAt = (time: string, weekdays: Weekday[] = ALL, o?: Opts) => req({ kind: 'DinnerTimeOnWeekday', time, weekdays }, o);
export const price = (ceiling: PriceCeiling, weekdays: Weekday[] = [], o?: Opts) => req({ kind: 'PriceClassOnDays', ceiling, weekdays }, o);
export const repeat = (days: number, o?: Opts) => req({ kind: 'RepeatAfterDays', days }, o);
export const leftovers = (enabled: boolean, askedEveryDays: number | null = null): ExpectedLeftovers => ({ enabled, askedEveryDays });
export const soft: Opts = { soft: true };
export const NO_VEG_MEAT = [never('Meat'), never('Poultry'), never('Fish')];

export const en = (
  text: string,
  proposals: CreateMealRuleRequest[],
  more: Partial<ParserCase> & { leftoverDinners?: ExpectedLeftovers | null; unheard?: string[] } = {},
): ParserCase => {
  const { leftoverDinners, unheard, ...rest } = more;
  return { text, lang: 'en', ...rest, expect: { proposals, leftoverDinners, unheard } };
};
export const nb = (
  text: string,
  proposals: CreateMealRuleRequest[],
  more: Partial<ParserCase> & { leftoverDinners?: ExpectedLeftovers | null; unheard?: string[] } = {},
): ParserCase => {
  const { leftoverDinners, unheard, ...rest } = more;
  return { text, lang: 'nb', ...rest, expect: { proposals, leftoverDinners, unheard } };
};
