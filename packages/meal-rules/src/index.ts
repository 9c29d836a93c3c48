/**
 * @svc/meal-rules: a household's meal rules (CRUD), the national guideline defaults, and the
 * sentence parser behind POST .../rules/parse (offline, optionally helped by a language model).
 */

export { changeSources, migrate, migrations, relations } from './migrations.js';
export { createModelRuleParser, type ModelRuleParserOptions, type Timers } from './model-parser.js';
export { MealRuleListVersionModel, MealRuleModel } from './models/index.js';
export type { CreateMealRuleRequest, MealRulePayload, ParseContext, ParseRulesResponse, RuleParser } from './parser/index.js';
export { createOfflineRuleParser, warmUpParser } from './parser/index.js';
export { defaultsRead, ruleRead, rulesRead } from './reads.js';
export { createRouter, type RouterOptions } from './router.js';
export * from './schemas.js';
export { MealRulesService, type MealRulesServiceOptions, type ParseFailureLog } from './service.js';
export { type MealRuleStore, ObjectionMealRuleStore } from './store.js';
