import { ApiRouter, principalOf } from '@svc/http-kit';
import type { ChangesService } from './service.js';

export interface RouterOptions {
  service: ChangesService;
}

const uuid = { type: 'string', format: 'uuid' } as const;

export const ChangesParams = {
  type: 'object',
  required: ['householdId'],
  properties: { householdId: uuid },
} as const;

export const ChangesQuery = {
  type: 'object',
  properties: {
    since: {
      type: 'string',
      pattern: '^(0|[1-9][0-9]{0,17})$',
      maxLength: 18,
      description: 'A `nextCursor` of an earlier answer (opaque); left out: from the oldest kept change',
    },
    limit: { type: 'integer', minimum: 1, maximum: 500, default: 100, description: 'Items per page, 1–500 (default 100)' },
  },
} as const;

export const ChangeItemSchema = {
  type: 'object',
  required: ['resource', 'id', 'change', 'at', 'value'],
  properties: {
    resource: { type: 'string', enum: ['household', 'member', 'rule', 'event'] },
    id: { ...uuid, description: 'The resource id (a member: its memberId)' },
    change: { type: 'string', enum: ['upsert', 'delete'] },
    at: { type: 'string', format: 'date-time', description: 'When the change committed (its latest change)' },
    value: {
      description: 'The resource now, as its own GET (or its item of its list) answers it; null on delete',
      type: ['object', 'null'],
    },
  },
} as const;

export const ChangesSchema = {
  type: 'object',
  required: ['items', 'nextCursor'],
  properties: {
    items: { type: 'array', items: ChangeItemSchema },
    nextCursor: { type: 'string', description: 'Always a string: ask again with since=nextCursor for what changed after this page (also when items is empty)' },
  },
} as const;

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
        'Keep `nextCursor` and ask again with it; it is a string also when `items` is empty.',
      params: ChangesParams,
      query: ChangesQuery,
      responses: { 200: { description: 'One page of changes, oldest first', schema: ChangesSchema } },
      errorCodes: { 400: ['validation_failed'], 404: ['not_found'], 410: ['cursor_expired'] },
    },
    async (req, res) => {
      const { since, limit } = req.input.query;
      res.json(await service.list(principalOf(req).userId, req.input.params.householdId, since, limit ?? 100));
    },
  );
  return api;
}
