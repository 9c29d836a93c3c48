import type { CreateMealRuleRequest, MealRulePayload } from './parser/index.js';
import type { MealRuleKind, RuleSource } from './schemas.js';

/** MealRuleResponse of the spec (all members always present). */
export interface MealRuleResponse {
  id: string;
  householdId: string;
  kind: MealRuleKind;
  strength: CreateMealRuleRequest['strength'];
  scope: CreateMealRuleRequest['scope'];
  startDate: string | null;
  endDate: string | null;
  source: RuleSource;
  payload: MealRulePayload;
  /** ISO 8601 UTC with milliseconds. */
  createdAt: string;
  updatedAt: string;
}

/** What the router needs from storage. Every lookup is scoped by household: a rule id of another household is simply not there. */
export interface MealRuleStore {
  /** The household's rules, oldest first (createdAt, then id). */
  list(householdId: string): Promise<MealRuleResponse[]>;
  create(householdId: string, request: CreateMealRuleRequest, source: RuleSource, now: Date): Promise<MealRuleResponse>;
  /** Full replacement (kind included); undefined when the household has no such rule. */
  replace(householdId: string, ruleId: string, request: CreateMealRuleRequest, source: RuleSource, now: Date): Promise<MealRuleResponse | undefined>;
  /** False when the household has no such rule. */
  remove(householdId: string, ruleId: string): Promise<boolean>;
  /** Whether the household has at least one rule of this kind. */
  hasKind(householdId: string, kind: MealRuleKind): Promise<boolean>;
}
