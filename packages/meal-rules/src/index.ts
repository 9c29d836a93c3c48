/**
 * @svc/meal-rules: a household's meal rules (CRUD), the national guideline defaults, and the
 * sentence parser behind POST .../rules/parse.
 */

export type { MealRuleResponse } from './MealRuleStore.js';
export { migrate, migrations } from './migrations.js';
export type { CreateMealRuleRequest, MealRulePayload, ParseRulesResponse, RuleParser } from './parser/index.js';
export { createOfflineRuleParser } from './parser/index.js';
export { createMealRules, type MealRulesDeps } from './router.js';
