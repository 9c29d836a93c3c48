// biome-ignore-all assist/source/organizeImports: every domain package's entry point has the same sections in the same order (docs/packages.md)
/**
 * @svc/meal-rules: a household's meal rules (CRUD), the national guideline defaults, and the
 * sentence parser behind POST .../rules/parse (offline, optionally helped by a language model).
 */

// Migrations: the package's tables (and its relations to other packages' tables), its change sources.
export { changeSources, migrate, migrations, relations } from './migrations.js';

// Models: one per table.
export { MealRuleListVersionModel, MealRuleModel } from './models/index.js';

// Declared reads (the host's read kernel loads them with the caller).
export { defaultsRead, ruleRead, rulesRead } from './reads.js';

// The router.
export { createRouter, type RouterOptions } from './router.js';

// Schemas and their types.
export * from './schemas.js';

// The service.
export { MealRulesService, type MealRulesServiceOptions, type ParseFailureLog } from './service.js';

// The store: its interface and its Objection implementation.
export { type MealRuleStore, ObjectionMealRuleStore } from './store.js';

// Also of this package: the rule parsers.
export { createModelRuleParser, type ModelRuleParserOptions, type Timers } from './model-parser.js';
export type { CreateMealRuleRequest, MealRulePayload, ParseContext, ParseRulesResponse, RuleParser } from './parser/index.js';
export { planningRules } from './planning.js';
