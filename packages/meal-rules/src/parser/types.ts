export type MealCategory = 'Fish' | 'Meat' | 'Poultry' | 'Vegetarian' | 'Vegan' | 'Soup' | 'Pasta' | 'Taco' | 'Leftovers' | 'Other';
export type Weekday = 'Sunday' | 'Monday' | 'Tuesday' | 'Wednesday' | 'Thursday' | 'Friday' | 'Saturday';
export type RuleStrength = 'Hard' | 'Soft';
export type RuleScope = 'Permanent' | 'DateRange' | 'SpecificDate';
export type PriceCeiling = 'Cheap' | 'CheapOrMid';
export type MealRulePayload =
  | { kind: 'CategoryFrequency'; category: MealCategory; minimumPerWeek: number; maximumPerWeek: number }
  | { kind: 'CategoryExcludedDays'; category: MealCategory; excludedWeekdays: Weekday[] }
  | { kind: 'CategoryOnDay'; category: MealCategory; weekday: Weekday | null; specificDate: string | null }
  | { kind: 'MaximumActiveCookingTime'; minutes: number; weekdays: Weekday[]; specificDate: string | null }
  | { kind: 'DinnerTimeOnWeekday'; time: string; weekdays: Weekday[] }
  | { kind: 'PriceClassOnDays'; ceiling: PriceCeiling; weekdays: Weekday[] }
  | { kind: 'RepeatAfterDays'; days: number };
export interface CreateMealRuleRequest {
  payload: MealRulePayload;
  strength: RuleStrength;
  scope: RuleScope;
  startDate: string | null;
  endDate: string | null;
}
export interface ParsedRuleProposal {
  summary: string;
  request: CreateMealRuleRequest;
}
export interface ParsedLeftoverDinners {
  summary: string;
  enabled: boolean;
  askedEveryDays: number | null;
}
export interface ParseRulesResponse {
  proposals: ParsedRuleProposal[];
  leftoverDinners: ParsedLeftoverDinners | null;
  unheard: string[];
}
export interface ParseContext {
  /** today in the household's time zone, YYYY-MM-DD; used to resolve dates without a year (next occurrence on/after today) */ today: string /** household preferredLanguage BCP 47 tag, a hint only; the sentence's own language wins */;
  language?: string;
}
/** Pluggable: an LLM-backed parser can implement this later; the offline one is the default and the fallback. */
export interface RuleParser {
  readonly name: string;
  parse(text: string, ctx: ParseContext): Promise<ParseRulesResponse>;
}
