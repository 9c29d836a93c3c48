import { ApiRouter } from '@svc/http-kit';
import type { Knex } from 'knex';

export interface HouseholdsRouterDeps {
  knex: Knex;
}

/** The households routes, with their schemas (they validate requests and feed the OpenAPI document). */
export function createHouseholdsRouter(_deps: HouseholdsRouterDeps): ApiRouter {
  const api = new ApiRouter({ tags: ['Households'] });
  return api;
}
