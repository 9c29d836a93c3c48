import { ApiRouter } from '@svc/http-kit';
import type { Knex } from 'knex';

export interface MealRulesRouterDeps {
  knex: Knex;
}

/** The meal-rules routes, with their schemas (they validate requests and feed the OpenAPI document). */
export function createMealRulesRouter(_deps: MealRulesRouterDeps): ApiRouter {
  const api = new ApiRouter({ tags: ['MealRules'] });
  return api;
}
