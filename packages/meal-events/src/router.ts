import { ADULT_ROLES, type Clock, type HouseholdAccess } from '@svc/contracts';
import { ApiRouter, assertRole, NotFoundError, principalOf } from '@svc/http-kit';
import type { Knex } from 'knex';
import { CursorCodec } from './cursor.js';
import { KnexMealEventStore } from './KnexMealEventStore.js';
import type { MealEventInput, MealEventStore } from './MealEventStore.js';
import { assertRange, type EventListQuery, listEvents } from './paging.js';
import { EventParams, HouseholdParams, ListQuery, MealEventBody, MealEventSchema, PagedMealEventSchema } from './schemas.js';

/** What the meal-events package needs from its host. */
export interface MealEventsDeps {
  knex: Knex;
  clock: Clock;
  /** Membership and role of the caller, from @svc/households. */
  access: HouseholdAccess;
  /** HMAC key for page cursors; the host derives it from SESSION_SECRET. */
  cursorSecret: string;
}

type HouseholdPath = { householdId: string };
type EventPath = { householdId: string; eventId: string };

const NOT_FOUND_EVENT = () => new NotFoundError('not_found', 'No such meal event in this household');

/**
 * The meal-events operations: the paged list (service-spec.md, Meal events) and the writes of
 * decisions.md §5. Any member reads; Owner and Adult write; a non-member gets 404.
 */
export function createMealEvents(deps: MealEventsDeps): { router: ApiRouter; store: MealEventStore } {
  const store = new KnexMealEventStore(deps.knex, deps.clock);
  const codec = new CursorCodec(deps.cursorSecret);
  const { access } = deps;
  const api = new ApiRouter({ tags: ['MealEvents'] });

  api.route<unknown, EventListQuery, HouseholdPath>(
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
      responses: { 200: { description: 'One page', schema: PagedMealEventSchema } },
      errorCodes: { 400: ['validation_failed', 'invalid_cursor'], 404: ['not_found'] },
    },
    async (req, res) => {
      const { userId } = principalOf(req);
      const householdId = req.input.params.householdId.toLowerCase();
      assertRange(req.input.query.from, req.input.query.to);
      await access.roleOf(userId, householdId);
      res.json(await listEvents(store, codec, householdId, req.input.query));
    },
  );

  api.route<MealEventInput, unknown, HouseholdPath>(
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
      const { userId } = principalOf(req);
      const householdId = req.input.params.householdId.toLowerCase();
      assertRole(await access.roleOf(userId, householdId), ADULT_ROLES);
      res.status(201).json(await store.create(householdId, req.input.body));
    },
  );

  api.route<MealEventInput, unknown, EventPath>(
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
      const { userId } = principalOf(req);
      const householdId = req.input.params.householdId.toLowerCase();
      assertRole(await access.roleOf(userId, householdId), ADULT_ROLES);
      const event = await store.replace(householdId, req.input.params.eventId.toLowerCase(), req.input.body);
      if (!event) throw NOT_FOUND_EVENT();
      res.json(event);
    },
  );

  api.route<unknown, unknown, EventPath>(
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
      const { userId } = principalOf(req);
      const householdId = req.input.params.householdId.toLowerCase();
      assertRole(await access.roleOf(userId, householdId), ADULT_ROLES);
      if (!(await store.remove(householdId, req.input.params.eventId.toLowerCase()))) throw NOT_FOUND_EVENT();
      res.status(204).end();
    },
  );

  return { router: api, store };
}
