import { ADULT_ROLES, type Clock, type HouseholdAccess, type HouseholdProfiles, type SpendTurn } from '@svc/contracts';
import { ApiRouter, assertRole, NotFoundError, principalOf, timing } from '@svc/http-kit';
import type { Knex } from 'knex';
import { defaultRulesFor } from './defaults.js';
import { KnexMealRuleStore } from './KnexMealRuleStore.js';
import { type CreateMealRuleRequest, createOfflineRuleParser, type ParseRulesResponse, type RuleParser } from './parser/index.js';
import { assertValidRuleRequest, isValidCreateRequest } from './rule-validation.js';
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
import { todayIn } from './today.js';

/** What the meal-rules package needs from its host. */
export interface MealRulesDeps {
  knex: Knex;
  clock: Clock;
  /** Membership and role (404 for non-members); from @svc/households. */
  access: HouseholdAccess;
  /** Country, time zone and language of a household; from @svc/households. */
  profiles: HouseholdProfiles;
  /** Spends one AI turn, or throws 429 itself; from @svc/households. */
  spendTurn: SpendTurn;
  /** The sentence parser behind POST .../rules/parse; default: the offline English/Norwegian parser. */
  parser?: RuleParser;
}

interface HouseholdParams {
  householdId: string;
}
interface RuleParams extends HouseholdParams {
  ruleId: string;
}

const EMPTY_PARSE: ParseRulesResponse = { proposals: [], leftoverDinners: null, unheard: [] };
const RULES = '/api/v1/households/{householdId}/rules';

/**
 * The meal-rules operations of service-spec.md (rules CRUD, guideline defaults, sentence parsing),
 * with their schemas: they validate requests and feed the OpenAPI document.
 */
export function createMealRules(deps: MealRulesDeps): { router: ApiRouter } {
  const { access, profiles, spendTurn, clock } = deps;
  const store = new KnexMealRuleStore(deps.knex);
  const parser = deps.parser ?? createOfflineRuleParser();
  const api = new ApiRouter({ tags: ['MealRules'] });

  api.route<unknown, unknown, HouseholdParams>(
    {
      method: 'get',
      path: RULES,
      operationId: 'listMealRules',
      summary: "The household's meal rules",
      description: 'Any member. Oldest first (createdAt, then id).',
      auth: true,
      params: HouseholdParamsSchema,
      responses: { 200: { description: 'The rules', schema: MealRuleListSchema } },
      errorCodes: { 404: ['not_found'] },
    },
    async (req, res) => {
      const { householdId } = req.input.params;
      await access.roleOf(principalOf(req).userId, householdId);
      res.json(await store.list(householdId));
    },
  );

  api.route<CreateMealRuleRequest, unknown, HouseholdParams>(
    {
      method: 'post',
      path: RULES,
      operationId: 'createMealRule',
      summary: 'Declares a meal rule',
      description: `Adults only (Owner or Adult; a Junior gets 403). \`payload.kind\` selects the type. The rule is stored with source UserDeclared.\n\n${RULE_REQUEST_RULES_TEXT}`,
      auth: true,
      params: HouseholdParamsSchema,
      body: MealRuleRequestSchema,
      responses: { 201: { description: 'The rule as stored', schema: MealRuleResponseSchema } },
      errorCodes: { 400: ['validation_failed', 'value_too_long'], 403: ['forbidden'], 404: ['not_found'] },
    },
    async (req, res) => {
      const { householdId } = req.input.params;
      assertRole(await access.roleOf(principalOf(req).userId, householdId), ADULT_ROLES);
      assertValidRuleRequest(req.input.body);
      res.status(201).json(await store.create(householdId, req.input.body, 'UserDeclared', clock.now()));
    },
  );

  api.route<unknown, unknown, HouseholdParams>(
    {
      method: 'get',
      path: `${RULES}/defaults`,
      operationId: 'getDefaultMealRules',
      summary: "The national guideline rules for the household's country",
      description:
        "Any member. Built from the country's health authority's weekly advice on fish and red meat (WHO for countries without one); " +
        'synthetic stable ids, never stored. `active` is true while the household has no CategoryFrequency rule of its own.',
      auth: true,
      params: HouseholdParamsSchema,
      responses: { 200: { description: 'The guideline rules', schema: DefaultRulesResponseSchema } },
      errorCodes: { 404: ['not_found'] },
    },
    async (req, res) => {
      const { householdId } = req.input.params;
      await access.roleOf(principalOf(req).userId, householdId);
      const [profile, hasOwn] = await Promise.all([profiles(householdId), store.hasKind(householdId, 'CategoryFrequency')]);
      res.json(defaultRulesFor(householdId, profile.country, !hasOwn));
    },
  );

  api.route<{ text: string }, unknown, HouseholdParams>(
    {
      method: 'post',
      path: `${RULES}/parse`,
      operationId: 'parseMealRules',
      summary: 'Suggests rules from a sentence',
      description:
        "Adults only. Nothing is stored: POST a proposal's `request` to create the rule. A sentence with text costs one AI turn " +
        '(429 quota_exceeded when the allowance is used up; with Retry-After as an HTTP date while the household AI is paused); ' +
        'an empty or blank one costs nothing and answers no proposals.',
      auth: true,
      params: HouseholdParamsSchema,
      body: ParseRulesRequestSchema,
      responses: { 200: { description: 'The proposals', schema: ParseRulesResponseSchema } },
      errorCodes: { 400: ['validation_failed', 'value_too_long'], 403: ['forbidden'], 404: ['not_found'], 429: ['quota_exceeded', 'ai_paused'] },
    },
    async (req, res) => {
      const { householdId } = req.input.params;
      assertRole(await access.roleOf(principalOf(req).userId, householdId), ADULT_ROLES);
      const text = req.input.body.text;
      if (text.trim() === '') {
        res.json(EMPTY_PARSE);
        return;
      }
      const profile = await profiles(householdId);
      await timing.step('spend-turn', () => spendTurn(householdId));
      const ctx = { today: todayIn(profile.timeZoneId, clock.now()), language: profile.preferredLanguage };
      const parsed = await timing.step('parse', () => parser.parse(text, ctx));
      // A proposal the create operation would refuse is no proposal: its summary joins `unheard`.
      const proposals = parsed.proposals.filter((p) => isValidCreateRequest(p.request));
      const refused = parsed.proposals.filter((p) => !proposals.includes(p)).map((p) => p.summary);
      res.json({ proposals, leftoverDinners: parsed.leftoverDinners, unheard: [...parsed.unheard, ...refused] });
    },
  );

  api.route<CreateMealRuleRequest, unknown, RuleParams>(
    {
      method: 'patch',
      path: `${RULES}/{ruleId}`,
      operationId: 'replaceMealRule',
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
      assertRole(await access.roleOf(principalOf(req).userId, householdId), ADULT_ROLES);
      assertValidRuleRequest(req.input.body);
      const rule = await store.replace(householdId, ruleId, req.input.body, 'UserDeclared', clock.now());
      if (!rule) throw new NotFoundError('not_found', 'The household has no such rule');
      res.json(rule);
    },
  );

  api.route<unknown, unknown, RuleParams>(
    {
      method: 'delete',
      path: `${RULES}/{ruleId}`,
      operationId: 'deleteMealRule',
      summary: 'Removes a meal rule',
      description: 'Adults only.',
      auth: true,
      params: RuleParamsSchema,
      responses: { 204: { description: 'Removed' } },
      errorCodes: { 403: ['forbidden'], 404: ['not_found'] },
    },
    async (req, res) => {
      const { householdId, ruleId } = req.input.params;
      assertRole(await access.roleOf(principalOf(req).userId, householdId), ADULT_ROLES);
      if (!(await store.remove(householdId, ruleId))) throw new NotFoundError('not_found', 'The household has no such rule');
      res.status(204).end();
    },
  );

  return { router: api };
}
