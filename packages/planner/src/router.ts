import { ApiRouter, principalOf } from '@svc/http-kit';
import {
  CreatePlanRequestSchema,
  DayParamsSchema,
  HouseholdParamsSchema,
  ListPlansQuerySchema,
  PlanDaySchema,
  PlanListSchema,
  PlanParamsSchema,
  PlanSchema,
  SetDayRequestSchema,
} from './schemas.js';
import { type PlannerService, preferredWait } from './service.js';

/** What the planner's routes need: the package's service (which holds its store, clock, queue and capabilities). */
export interface RouterOptions {
  service: PlannerService;
}

const PLANS = '/api/v1/households/{householdId}/plans';

const LOCATION = { Location: { description: 'The plan (GET it to follow the run)', schema: { type: 'string' } } } as const;
const PREFERENCE_APPLIED = { 'Preference-Applied': { description: '`wait=N`: the run ended within the wait asked for', schema: { type: 'string' } } } as const;
const PREFER_TEXT =
  '`Prefer: wait=N` (N 1–10) waits up to N seconds for the run: one that ended by then answers 201 with the ended plan and ' +
  '`Preference-Applied: wait=N`; otherwise (or with N outside 1–10, which is ignored) 202 with the plan as it is.';

/**
 * The plans of the contract: runs (POST, replan), plans (GET one, list the current ones), days set
 * by hand (PUT). Thin handlers: the rules live in PlannerService.
 */
export function createRouter(options: RouterOptions): ApiRouter {
  const { service } = options;
  const api = new ApiRouter({ tags: ['Plans'] });

  /** 202 with the queued plan, or 201 with the ended one when `Prefer: wait` was honoured. */
  async function answerRun(req: { headers: Record<string, unknown> }, res: import('express').Response, householdId: string, plan: { id: string }) {
    res.location(`/api/v1/households/${householdId}/plans/${plan.id}`);
    const wait = preferredWait(typeof req.headers.prefer === 'string' ? req.headers.prefer : undefined);
    if (wait !== undefined) {
      const ended = await service.waitFor(householdId, plan.id, wait);
      if (ended) {
        res.setHeader('Preference-Applied', `wait=${wait}`);
        return res.status(201).json(ended);
      }
    }
    return res.status(202).json(plan);
  }

  api.route(
    {
      method: 'post',
      path: PLANS,
      tokenScope: 'plans:write',
      operationId: 'createPlan',
      etag: true,
      summary: 'Plans dinners for 1–4 weeks',
      description:
        "Owner or Adult (a Junior gets 403). `startDate` is a Monday from this week's Monday (household's zone) up to 84 days after it; " +
        'else 400 validation_failed. The run is queued and done later by whichever instance takes it; while a run of the household is ' +
        `queued or running another POST (or replan) answers 409 plan_run_in_progress. ${PREFER_TEXT}`,
      auth: true,
      params: HouseholdParamsSchema,
      body: CreatePlanRequestSchema,
      responses: {
        201: { description: 'The run ended within `Prefer: wait`: the ended plan', schema: PlanSchema, headers: { ...LOCATION, ...PREFERENCE_APPLIED } },
        202: { description: 'The run is queued (or running)', schema: PlanSchema, headers: LOCATION },
      },
      errorCodes: { 400: ['validation_failed'], 403: ['forbidden'], 404: ['not_found'], 409: ['plan_run_in_progress'] },
    },
    async (req, res) => {
      const { householdId } = req.input.params;
      const plan = await service.create(principalOf(req), householdId, req.input.body);
      await answerRun(req, res, householdId, plan);
    },
  );

  api.route(
    {
      method: 'get',
      path: PLANS,
      tokenScope: 'plans:read',
      operationId: 'listPlans',
      summary: 'The current plans of a window',
      description:
        "Any member. The current plans (done, not replaced) that overlap `from`..`to`, by startDate; default window: this week's Monday " +
        "(household's zone) through 83 days later.",
      auth: true,
      params: HouseholdParamsSchema,
      query: ListPlansQuerySchema,
      responses: { 200: { description: 'The current plans', schema: PlanListSchema } },
      errorCodes: { 400: ['validation_failed'], 404: ['not_found'] },
    },
    async (req, res) => {
      res.json(await service.list(principalOf(req), req.input.params.householdId, req.input.query));
    },
  );

  api.route(
    {
      method: 'get',
      path: `${PLANS}/{planId}`,
      tokenScope: 'plans:read',
      operationId: 'getPlan',
      etag: true,
      summary: 'One plan',
      description: 'Any member. Every plan of the household, replaced ones included.',
      auth: true,
      params: PlanParamsSchema,
      responses: { 200: { description: 'The plan', schema: PlanSchema } },
      errorCodes: { 404: ['not_found'] },
    },
    async (req, res) => {
      const { householdId, planId } = req.input.params;
      res.json(await service.get(principalOf(req), householdId, planId));
    },
  );

  api.route(
    {
      method: 'put',
      path: `${PLANS}/{planId}/days/{date}`,
      tokenScope: 'plans:write',
      operationId: 'setPlanDay',
      current: (req) => service.current(principalOf(req), req.input.params.householdId!, req.input.params.planId!),
      summary: 'Sets a day of a plan by hand',
      description:
        'Owner or Adult. The dish (an own dish of the household or any starter dish; null: no dinner that day) and the lock; no rule is ' +
        'checked, and `why` becomes one item saying the day was set by hand. A replan keeps locked days as they are. 404 for an unknown ' +
        'plan or a date outside it; 400 validation_failed for a dish that is neither the household’s nor a starter dish; 409 ' +
        'plan_not_current unless the plan is the current one. If-Match is checked against the plan’s ETag.',
      auth: true,
      params: DayParamsSchema,
      body: SetDayRequestSchema,
      responses: { 200: { description: 'The day as it is now', schema: PlanDaySchema } },
      errorCodes: { 400: ['validation_failed'], 403: ['forbidden'], 404: ['not_found'], 409: ['plan_not_current'], 412: ['precondition_failed'] },
    },
    async (req, res) => {
      const { householdId, planId, date } = req.input.params;
      res.json(await service.setDay(principalOf(req), householdId, planId, date, req.input.body));
    },
  );

  api.route(
    {
      method: 'post',
      path: `${PLANS}/{planId}/replan`,
      tokenScope: 'plans:write',
      operationId: 'replanPlan',
      etag: true,
      summary: 'Plans the same weeks again',
      description:
        'Owner or Adult. A new run for the same weeks that keeps every locked day of this plan as it is and plans the others, counting ' +
        `the locked days in weekly rules and repeats. 409 plan_run_in_progress while a run of the household is queued or running. ${PREFER_TEXT}`,
      auth: true,
      params: PlanParamsSchema,
      responses: {
        201: { description: 'The run ended within `Prefer: wait`: the ended plan', schema: PlanSchema, headers: { ...LOCATION, ...PREFERENCE_APPLIED } },
        202: { description: 'The new run, queued (or running)', schema: PlanSchema, headers: LOCATION },
      },
      errorCodes: { 403: ['forbidden'], 404: ['not_found'], 409: ['plan_run_in_progress'] },
    },
    async (req, res) => {
      const { householdId, planId } = req.input.params;
      const plan = await service.replan(principalOf(req), householdId, planId);
      await answerRun(req, res, householdId, plan);
    },
  );

  return api;
}
