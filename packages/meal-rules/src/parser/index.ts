export { detectLanguage } from './language.js';
export { createOfflineRuleParser, parseRulesOffline } from './parse.js';
export { warmUp as warmUpParser } from './tolerant.js';
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
