import { ApiRouter, loadedRead, principalOf, sendJsonText } from '@svc/http-kit';
import { dishRead } from './reads.js';
import {
  DishListQuerySchema,
  DishPageSchema,
  DishParamsSchema,
  DishRequestSchema,
  DishSchema,
  HouseholdParamsSchema,
  StarterDishListSchema,
  StarterQuerySchema,
} from './schemas.js';
import type { DishesService } from './service.js';

/** What the dishes routes need: the package's service (which holds its store, clock, access and cursor secret). */
export interface RouterOptions {
  service: DishesService;
}

const DISHES = '/api/v1/households/{householdId}/dishes';
const DISH = `${DISHES}/{dishId}`;

const LOCATION = { Location: { description: 'The new dish: /api/v1/households/{householdId}/dishes/{dishId}', schema: { type: 'string' } } } as const;

/**
 * The dishes operations: a household's own dishes (list, one, the writes) and the starter library.
 * Any member reads dishes; Owner and Adult write; a non-member gets 404. Ids in the path arrive
 * lower-cased (http-kit's validation of uuid params). Thin handlers: the rules live in DishesService.
 */
export function createRouter(options: RouterOptions): ApiRouter {
  const { service } = options;
  const api = new ApiRouter({ tags: ['Dishes'] });

  api.route(
    {
      method: 'get',
      path: DISHES,
      tokenScope: 'plans:read',
      operationId: 'listDishes',
      summary: "A page of the household's own dishes, by name",
      description:
        'Ordered by name ignoring letter case, then id. `category` keeps one MealCategory; `q` keeps the dishes whose name holds it (ignoring letter case). ' +
        'Keyset paging: pass `nextCursor` back as `cursor`; it is null on the last page. A cursor keeps the category and q it was made under. Any member, Junior included.',
      auth: true,
      params: HouseholdParamsSchema,
      query: DishListQuerySchema,
      fieldCodes: { cursor: 'invalid_cursor' },
      responses: { 200: { description: 'One page', schema: DishPageSchema } },
      errorCodes: { 400: ['validation_failed', 'invalid_cursor'], 404: ['not_found'] },
      compiledResponse: true,
    },
    async (req, res) => {
      res.json(await service.list(principalOf(req), req.input.params.householdId, req.input.query));
    },
  );

  api.route(
    {
      method: 'post',
      path: DISHES,
      tokenScope: 'plans:write',
      operationId: 'createDish',
      etag: true,
      summary: 'Adds a dish of the household (Owner or Adult)',
      description:
        '`tags` defaults to [] and `madeAgain` to false. A household keeps at most 2,000 dishes: one more answers 409 `limit_reached` and writes nothing.',
      auth: true,
      params: HouseholdParamsSchema,
      body: DishRequestSchema,
      responses: { 201: { description: 'The dish as stored', schema: DishSchema, headers: LOCATION } },
      errorCodes: { 400: ['validation_failed', 'value_too_long'], 403: ['forbidden'], 404: ['not_found'], 409: ['limit_reached'] },
    },
    async (req, res) => {
      const { householdId } = req.input.params;
      const dish = await service.create(principalOf(req), householdId, req.input.body);
      res.status(201).location(`/api/v1/households/${householdId}/dishes/${dish.id}`).json(dish);
    },
  );

  api.route(
    {
      method: 'get',
      path: DISH,
      tokenScope: 'plans:read',
      operationId: 'getDish',
      etag: true,
      summary: 'One dish of the household (any member)',
      auth: true,
      params: DishParamsSchema,
      responses: { 200: { description: 'The dish', schema: DishSchema } },
      errorCodes: { 404: ['not_found'] },
      compiledResponse: true,
      read: dishRead,
    },
    async (req, res) => {
      const { householdId, dishId } = req.input.params;
      res.json(await service.get(principalOf(req), householdId, dishId, loadedRead(req, dishRead)));
    },
  );

  api.route(
    {
      method: 'put',
      path: DISH,
      tokenScope: 'plans:write',
      operationId: 'replaceDish',
      etag: true,
      current: (req) => service.get(principalOf(req), req.input.params.householdId!, req.input.params.dishId!),
      summary: 'Replaces a dish: every field is written (Owner or Adult)',
      description:
        '`tags` left out becomes [] and `madeAgain` false. Plans keep the dish as they chose it. With `If-Match`, a dish changed since that ETag answers 412 `precondition_failed`.',
      auth: true,
      params: DishParamsSchema,
      body: DishRequestSchema,
      responses: { 200: { description: 'The dish as stored', schema: DishSchema } },
      errorCodes: { 400: ['validation_failed', 'value_too_long'], 403: ['forbidden'], 404: ['not_found'], 412: ['precondition_failed'] },
    },
    async (req, res) => {
      const { householdId, dishId } = req.input.params;
      res.json(await service.replace(principalOf(req), householdId, dishId, req.input.body));
    },
  );

  api.route(
    {
      method: 'delete',
      path: DISH,
      tokenScope: 'plans:write',
      operationId: 'deleteDish',
      current: (req) => service.get(principalOf(req), req.input.params.householdId!, req.input.params.dishId!),
      summary: 'Removes a dish (Owner or Adult)',
      description: 'Plans keep the dish as they chose it. With `If-Match`, a dish changed since that ETag answers 412 `precondition_failed`.',
      auth: true,
      params: DishParamsSchema,
      responses: { 204: { description: 'Removed' } },
      errorCodes: { 403: ['forbidden'], 404: ['not_found'], 412: ['precondition_failed'] },
    },
    async (req, res) => {
      const { householdId, dishId } = req.input.params;
      await service.remove(principalOf(req), householdId, dishId);
      res.status(204).end();
    },
  );

  api.route(
    {
      method: 'get',
      path: '/api/v1/starter-dishes',
      tokenScope: 'plans:read',
      operationId: 'listStarterDishes',
      summary: 'The starter library the service ships (anyone signed in)',
      description:
        'At least 120 dishes in each language, every MealCategory at least 6 times; a dish has the same `id` (and category, minutes, price class) in every language. ' +
        '`language` left out: Norwegian Bokmål when Accept-Language prefers nb, nn or no over English, else English.',
      auth: true,
      query: StarterQuerySchema,
      responses: { 200: { description: 'The library, by name', schema: StarterDishListSchema } },
      errorCodes: { 400: ['validation_failed'] },
    },
    (req, res) => {
      // The text was made when the module loaded; it depends on the language alone.
      res.vary('Accept-Language');
      sendJsonText(res, service.starterJson(req.input.query.language, req.get('accept-language')));
    },
  );

  return api;
}
