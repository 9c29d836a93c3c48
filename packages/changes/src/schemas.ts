/** The changes feed's request and answer schemas, written once (validation, OpenAPI, types). */
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
      minLength: 1,
      maxLength: 64,
      description:
        'A `nextCursor` of an earlier answer of this household (opaque); left out: from the oldest kept change. Another string answers 400 `invalid_cursor`.',
    },
    limit: { type: 'integer', minimum: 1, maximum: 500, default: 100, description: 'Items per page, 1–500 (default 100)' },
  },
} as const;

export const ChangeItemSchema = {
  type: 'object',
  required: ['resource', 'id', 'change', 'at', 'value'],
  properties: {
    resource: { type: 'string', enum: ['household', 'member', 'rule', 'event', 'dish', 'plan'] },
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
