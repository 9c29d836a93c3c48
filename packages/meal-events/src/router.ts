import { ApiRouter } from '@svc/http-kit';
import type { Knex } from 'knex';

export interface MealEventsRouterDeps {
  knex: Knex;
}

/** The meal-events routes, with their schemas (they validate requests and feed the OpenAPI document). */
export function createMealEventsRouter(_deps: MealEventsRouterDeps): ApiRouter {
  const api = new ApiRouter({ tags: ['MealEvents'] });
  return api;
}
