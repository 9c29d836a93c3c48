import { ApiRouter } from '@svc/http-kit';
import type { Knex } from 'knex';

export interface AccountsRouterDeps {
  knex: Knex;
}

/** The accounts routes, with their schemas (they validate requests and feed the OpenAPI document). */
export function createAccountsRouter(_deps: AccountsRouterDeps): ApiRouter {
  const api = new ApiRouter({ tags: ['Accounts'] });
  return api;
}
