import { ApiRouter, principalOf } from '@svc/http-kit';
import { EventParams, HouseholdParams, ListQuery, MealEventBody, MealEventSchema, PagedMealEventSchema } from './schemas.js';
import type { MealEventsService } from './service.js';

/** What the meal-events routes need: the package's service (which holds its store, clock, access and cursor secret). */
export interface RouterOptions {
  service: MealEventsService;
}

/**
 * The meal-events operations: the paged list (the contract's "Meal events") and the writes.
 * Any member reads; Owner and Adult write; a non-member gets 404. Ids in the path are compared
 * lower-cased.
 */
export function createRouter(options: RouterOptions): ApiRouter {
  const { service } = options;
  const api = new ApiRouter({ tags: ['MealEvents'] });

  api.route(
    {
      method: 'get',
      path: '/api/v1/households/{householdId}/events',
      operationId: 'listMealEvents',
      summary: "A page of the household's meal events, earliest first",
      description:
        'Ordered by date, then servingTime, then id. `from` and `to` are inclusive. Keyset paging: pass `nextCursor` back as `cursor`; it is null on the last page. A cursor keeps the from/to it was made under. Any member, Junior included.',
      auth: true,
      params: HouseholdParams,
      query: ListQuery,
      fieldCodes: { cursor: 'invalid_cursor' },
      compiledResponse: true, // a hot read: its answer is written by a serializer compiled from the schema
      responses: { 200: { description: 'One page', schema: PagedMealEventSchema } },
      errorCodes: { 400: ['validation_failed', 'invalid_cursor'], 404: ['not_found'] },
    },
    async (req, res) => {
      res.json(await service.list(principalOf(req).userId, req.input.params.householdId.toLowerCase(), req.input.query));
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/v1/households/{householdId}/events',
      operationId: 'createMealEvent',
      summary: 'Adds a meal event (Owner or Adult)',
      auth: true,
      params: HouseholdParams,
      body: MealEventBody,
      responses: { 201: { description: 'The new event', schema: MealEventSchema } },
      errorCodes: { 400: ['validation_failed', 'value_too_long'], 403: ['forbidden'], 404: ['not_found'] },
    },
    async (req, res) => {
      res.status(201).json(await service.create(principalOf(req).userId, req.input.params.householdId.toLowerCase(), req.input.body));
    },
  );

  api.route(
    {
      method: 'put',
      path: '/api/v1/households/{householdId}/events/{eventId}',
      operationId: 'replaceMealEvent',
      summary: 'Replaces a meal event: every member is written (Owner or Adult)',
      auth: true,
      params: EventParams,
      body: MealEventBody,
      responses: { 200: { description: 'The event as stored', schema: MealEventSchema } },
      errorCodes: { 400: ['validation_failed', 'value_too_long'], 403: ['forbidden'], 404: ['not_found'] },
    },
    async (req, res) => {
      const { householdId, eventId } = req.input.params;
      res.json(await service.replace(principalOf(req).userId, householdId.toLowerCase(), eventId.toLowerCase(), req.input.body));
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/api/v1/households/{householdId}/events/{eventId}',
      operationId: 'deleteMealEvent',
      summary: 'Removes a meal event (Owner or Adult)',
      auth: true,
      params: EventParams,
      responses: { 204: { description: 'Removed' } },
      errorCodes: { 403: ['forbidden'], 404: ['not_found'] },
    },
    async (req, res) => {
      const { householdId, eventId } = req.input.params;
      await service.remove(principalOf(req).userId, householdId.toLowerCase(), eventId.toLowerCase());
      res.status(204).end();
    },
  );

  return api;
}
