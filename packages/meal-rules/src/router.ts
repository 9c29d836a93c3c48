import { ApiRouter, loadedRead, principalOf } from '@svc/http-kit';
import { rulesRead } from './reads.js';
import {
  DefaultRulesResponseSchema,
  HouseholdParamsSchema,
  MealRuleListSchema,
  MealRuleRequestSchema,
  MealRuleResponseSchema,
  ParseRulesRequestSchema,
  ParseRulesResponseSchema,
  RULE_REQUEST_RULES_TEXT,
  RuleParamsSchema,
} from './schemas.js';
import type { MealRulesService } from './service.js';

/** What the meal-rules routes need: the package's service (which holds its store, clock and the households capabilities). */
export interface RouterOptions {
  service: MealRulesService;
}

const RULES = '/api/v1/households/{householdId}/rules';

/**
 * The meal-rules operations of the contract (rules CRUD, guideline defaults, sentence parsing),
 * with their schemas: they validate requests and feed the OpenAPI document. Thin handlers: the
 * rules live in MealRulesService.
 */
export function createRouter(options: RouterOptions): ApiRouter {
  const { service } = options;
  const api = new ApiRouter({ tags: ['MealRules'] });

  api.route(
    {
      method: 'get',
      path: RULES,
      tokenScope: 'rules:read',
      operationId: 'listMealRules',
      summary: "The household's meal rules",
      description: 'Any member. Oldest first (createdAt, then id).',
      auth: true,
      params: HouseholdParamsSchema,
      responses: { 200: { description: 'The rules', schema: MealRuleListSchema } },
      errorCodes: { 404: ['not_found'] },
      compiledResponse: true,
      read: rulesRead,
      heldVersion: (householdId) => service.heldVersion(householdId),
    },
    async (req, res) => {
      res.json(await service.list(principalOf(req), req.input.params.householdId!, loadedRead(req, rulesRead)));
    },
  );

  api.route(
    {
      method: 'post',
      path: RULES,
      tokenScope: 'rules:write',
      operationId: 'createMealRule',
      etag: true,
      summary: 'Declares a meal rule',
      description: `Adults only (Owner or Adult; a Junior gets 403). \`payload.kind\` selects the type. The rule is stored with source UserDeclared.\n\n${RULE_REQUEST_RULES_TEXT}`,
      auth: true,
      params: HouseholdParamsSchema,
      body: MealRuleRequestSchema,
      responses: { 201: { description: 'The rule as stored', schema: MealRuleResponseSchema } },
      errorCodes: { 400: ['validation_failed', 'value_too_long'], 403: ['forbidden'], 404: ['not_found'] },
    },
    async (req, res) => {
      res.status(201).json(await service.create(principalOf(req), req.input.params.householdId!, req.input.body));
    },
  );

  api.route(
    {
      method: 'get',
      path: `${RULES}/defaults`,
      tokenScope: 'rules:read',
      operationId: 'getDefaultMealRules',
      summary: "The national guideline rules for the household's country",
      description:
        "Any member. Built from the country's health authority's weekly advice on fish and red meat (WHO for countries without one); " +
        'synthetic stable ids, never stored. `active` is true while the household has no CategoryFrequency rule of its own.',
      auth: true,
      params: HouseholdParamsSchema,
      responses: { 200: { description: 'The guideline rules', schema: DefaultRulesResponseSchema } },
      errorCodes: { 404: ['not_found'] },
      compiledResponse: true,
      read: service.defaultsRead,
    },
    async (req, res) => {
      res.json(await service.defaults(principalOf(req), req.input.params.householdId!, loadedRead(req, service.defaultsRead)));
    },
  );

  api.route(
    {
      method: 'post',
      path: `${RULES}/parse`,
      tokenScope: 'rules:write',
      operationId: 'parseMealRules',
      summary: 'Suggests rules from a sentence',
      description:
        "Adults only. Nothing is stored: POST a proposal's `request` to create the rule. A sentence with text costs one AI turn " +
        '(429 quota_exceeded when the allowance is used up; with Retry-After as an HTTP date while the household AI is paused); ' +
        'an empty or blank one costs nothing and answers no proposals. The turn is charged only when the reading succeeded: a parser ' +
        'that fails (or a configured language model that times out, errs or answers nonsense) costs nothing, and the answer is the ' +
        "offline parser's (or the sentence back in `unheard`), never an error.",
      auth: true,
      params: HouseholdParamsSchema,
      body: ParseRulesRequestSchema,
      responses: { 200: { description: 'The proposals', schema: ParseRulesResponseSchema } },
      errorCodes: { 400: ['validation_failed', 'value_too_long'], 403: ['forbidden'], 404: ['not_found'], 429: ['quota_exceeded', 'ai_paused'] },
    },
    async (req, res) => {
      res.json(await service.parse(principalOf(req), req.input.params.householdId!, req.input.body.text));
    },
  );

  api.route(
    {
      method: 'patch',
      path: `${RULES}/{ruleId}`,
      tokenScope: 'rules:write',
      operationId: 'replaceMealRule',
      etag: true,
      current: (req) => service.currentRule(principalOf(req), req.input.params.householdId!, req.input.params.ruleId!),
      summary: 'Replaces a meal rule',
      description: `Adults only. A full replacement despite the verb: every field is written, kind included; the rule becomes UserDeclared.\n\n${RULE_REQUEST_RULES_TEXT}`,
      auth: true,
      params: RuleParamsSchema,
      body: MealRuleRequestSchema,
      responses: { 200: { description: 'The rule as stored', schema: MealRuleResponseSchema } },
      errorCodes: { 400: ['validation_failed', 'value_too_long'], 403: ['forbidden'], 404: ['not_found'] },
    },
    async (req, res) => {
      const { householdId, ruleId } = req.input.params;
      res.json(await service.replace(principalOf(req), householdId, ruleId, req.input.body));
    },
  );

  api.route(
    {
      method: 'delete',
      path: `${RULES}/{ruleId}`,
      tokenScope: 'rules:write',
      operationId: 'deleteMealRule',
      current: (req) => service.currentRule(principalOf(req), req.input.params.householdId!, req.input.params.ruleId!),
      summary: 'Removes a meal rule',
      description: 'Adults only.',
      auth: true,
      params: RuleParamsSchema,
      responses: { 204: { description: 'Removed' } },
      errorCodes: { 403: ['forbidden'], 404: ['not_found'] },
    },
    async (req, res) => {
      const { householdId, ruleId } = req.input.params;
      await service.remove(principalOf(req), householdId, ruleId);
      res.status(204).end();
    },
  );

  return api;
}
