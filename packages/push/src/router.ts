import { ApiRouter } from '@svc/http-kit';
import type { Knex } from 'knex';

export interface PushRouterDeps {
  knex: Knex;
}

/** The push routes, with their schemas (they validate requests and feed the OpenAPI document). */
export function createPushRouter(_deps: PushRouterDeps): ApiRouter {
  const api = new ApiRouter({ tags: ['Push'] });
  return api;
}
