import type { RequestHandler } from 'express';
import { NotAllowedError } from './errors.js';

/**
 * What a personal access token may be granted (decisions.md §8 "Tokens and scopes"). An operation
 * names the one scope that lets a token reach it (`OperationSpec.tokenScope`); an operation that
 * names none is never reachable with a token.
 */
export const TOKEN_SCOPES = ['households:read', 'events:read', 'events:write', 'rules:read', 'rules:write', 'plans:read', 'plans:write'] as const;

/** One of TOKEN_SCOPES. */
export type TokenScope = (typeof TOKEN_SCOPES)[number];

/**
 * What an operation says of tokens: the scope that opens it, or `any` for an operation every
 * valid token reaches whatever its scopes (GET /api/v1/me: who the token acts as, and the
 * households it may name).
 */
export type TokenAccess = TokenScope | 'any';

/** What each scope lets a token do, for the OpenAPI document. */
export const TOKEN_SCOPE_DESCRIPTIONS: Record<TokenScope, string> = {
  'households:read': 'GET of the household, its members, its changes and its calendar-feed URL',
  'events:read': 'GET of meal events (list, one, series)',
  'events:write': 'POST, PUT and DELETE of meal events',
  'rules:read': 'GET of meal rules and rule defaults',
  'rules:write': 'POST, PATCH and DELETE of meal rules, and parse',
  'plans:read': 'GET of dishes, starter dishes and plans',
  'plans:write': 'dish writes, plan runs and day changes',
};

/**
 * The gate of one operation: a caller signed in with a token (its principal carries `scopes`)
 * reaches it only when the token holds `scope`; 403 `insufficient_scope` otherwise, whatever the
 * person's role. A cookie session (no `scopes`) passes.
 */
export function tokenScopeGate(scope: TokenAccess | undefined): RequestHandler {
  return (req, _res, next) => {
    const scopes = req.principal?.scopes;
    if (scopes !== undefined && scope !== 'any' && (scope === undefined || !scopes.includes(scope))) {
      throw new NotAllowedError(
        'insufficient_scope',
        scope === undefined ? 'This operation is not open to access tokens; sign in' : `This operation needs a token with the ${scope} scope`,
      );
    }
    next();
  };
}
