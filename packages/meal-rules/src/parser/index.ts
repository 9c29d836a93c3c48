export { detectLanguage } from './language.js';
export { createOfflineRuleParser, type DishesNamed, dishesNamed, parseRulesOffline, warmUpParser } from './parse.js';
export type {
  CreateMealRuleRequest,
  MealCategory,
  MealRulePayload,
  ParseContext,
  ParsedLeftoverDinners,
  ParsedRuleProposal,
  ParseRulesResponse,
  PriceCeiling,
  RuleParser,
  RuleScope,
  RuleStrength,
  Weekday,
} from './types.js';
export { isValidCreateRequest, validateCreateRequest } from './validate.js';
