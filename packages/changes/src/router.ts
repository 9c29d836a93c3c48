import { ApiRouter, loadedRead, principalOf, sendJsonText } from '@svc/http-kit';
import { changesRead } from './reads.js';
import { ChangesParams, ChangesQuery, ChangesSchema } from './schemas.js';
import type { ChangesService } from './service.js';

export interface RouterOptions {
  service: ChangesService;
}

/** GET /api/v1/households/{householdId}/changes. */
export function createRouter(options: RouterOptions): ApiRouter {
  const { service } = options;
  const api = new ApiRouter({ tags: ['Changes'] });
  api.route(
    {
      method: 'get',
      path: '/api/v1/households/{householdId}/changes',
      tokenScope: 'households:read',
      operationId: 'listChanges',
      auth: true,
      summary: 'What changed in the household since a cursor: households, members, rules and events, in the order the changes committed',
      description:
        'Any member. Each resource appears once, with its latest change; `value` is the resource now (null on delete). ' +
        'Without `since` the feed starts at the oldest kept change. Deletions are kept 90 days: a cursor from before the oldest kept deletion answers 410 `cursor_expired` (read everything again). ' +
        'Keep `nextCursor` and ask again with it; it is a string also when `items` is empty. A cursor works only on the household it came from: ' +
        'anything else (altered, made up, of another household) answers 400 `invalid_cursor`.',
      params: ChangesParams,
      query: ChangesQuery,
      responses: { 200: { description: 'One page of changes, oldest first', schema: ChangesSchema } },
      fieldCodes: { since: 'invalid_cursor' },
      errorCodes: { 400: ['validation_failed', 'invalid_cursor'], 404: ['not_found'], 410: ['cursor_expired'] },
      read: changesRead,
    },
    async (req, res) => {
      const { since, limit } = req.input.query;
      // A hot read: the answer is rendered once per page and version (see ChangesService.list).
      const answer = await service.list(principalOf(req), req.input.params.householdId, since, limit ?? 100, loadedRead(req, changesRead));
      sendJsonText(res, answer.body, answer.bytes);
    },
  );
  return api;
}
