/**
 * @svc/meal-rules: a household's meal rules (CRUD), the national guideline defaults, and the
 * sentence parser behind POST .../rules/parse.
 */
export { migrations, migrate } from './migrations.js';
export { createMealRules, type MealRulesDeps } from './router.js';
export type { MealRuleResponse } from './MealRuleStore.js';
export type { CreateMealRuleRequest, MealRulePayload, ParseRulesResponse, RuleParser } from './parser/index.js';
export { createOfflineRuleParser } from './parser/index.js';
