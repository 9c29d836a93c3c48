import { type Infer, singleLine, type TypedSchema } from '@svc/http-kit';

/** The notification kinds a phone can switch on or off. */
export const PUSH_KINDS = ['listChanges', 'householdNews', 'runDone', 'reminders'] as const;
export type PushKind = (typeof PUSH_KINDS)[number];

export const PLATFORMS = ['ios', 'android'] as const;
export type PushPlatform = (typeof PLATFORMS)[number];

/** Longest accepted values: a push token 4096 characters; the provider the general 200. */
export const LIMITS = { token: 4096, provider: 200 } as const;

const TokenSchema = {
  type: 'string',
  minLength: 1,
  maxLength: LIMITS.token,
  description: 'The push token, 1 to 4096 characters, compared exactly (case and all)',
} as const satisfies TypedSchema;

export const TokenParams = {
  type: 'object',
  required: ['token'],
  properties: {
    token: {
      ...TokenSchema,
      description: 'The push token, percent-encoded as one path segment (encodeURIComponent); decoded once, `+` stays `+`',
    },
  },
} as const satisfies TypedSchema;

export const RegisterBody = {
  type: 'object',
  required: ['token', 'platform'],
  properties: {
    token: TokenSchema,
    platform: { type: 'string', enum: PLATFORMS },
    provider: {
      type: ['string', 'null'],
      minLength: 1,
      maxLength: LIMITS.provider,
      ...singleLine,
      description: 'Push provider (e.g. fcm, apns), stored as sent; null or left out: the service default (PUSH_DEFAULT_PROVIDER)',
    },
  },
} as const satisfies TypedSchema;
export type RegisterRequest = Infer<typeof RegisterBody>;

const TimeOfDay = {
  type: 'string',
  pattern: '^([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?$',
  description: 'HH:mm (HH:mm:ss accepted; answered HH:mm)',
} as const;

/** Quiet hours of a phone, in the zone of the household a notification is about; null: none. */
export const QuietHoursSchema = {
  title: 'QuietHours',
  type: ['object', 'null'],
  required: ['start', 'end'],
  properties: { start: TimeOfDay, end: TimeOfDay },
  description:
    'householdNews, listChanges and runDone wait until they end (reminders do not); the window may cross midnight; start equal to end is 400. null: none.',
} as const satisfies TypedSchema;

export const UpdateBody = {
  type: 'object',
  required: ['listChanges', 'householdNews', 'runDone'],
  properties: {
    listChanges: { type: 'boolean' },
    householdNews: { type: 'boolean' },
    runDone: { type: 'boolean' },
    reminders: { type: ['boolean', 'null'], description: 'Left out or null: keeps its current value' },
    quietHours: { ...QuietHoursSchema, description: 'Left out: keeps them; null: none; `{ "start", "end" }` (HH:mm) in the household\'s zone' },
  },
} as const satisfies TypedSchema;
/** The switches of a PATCH; `reminders` null or left out keeps its value. */
export type DeviceSwitches = Infer<typeof UpdateBody>;

/** PushDeviceResponse: a registered phone, and what a sender needs. */
export const PushDeviceSchema = {
  title: 'PushDeviceResponse',
  type: 'object',
  // quietHours is always answered (null when none); left out of `required` so the type only gains an optional member.
  required: ['token', 'platform', 'provider', 'listChanges', 'householdNews', 'runDone', 'reminders', 'lastSeenAt'],
  properties: {
    token: { type: 'string' },
    platform: { type: 'string', enum: PLATFORMS },
    provider: { type: 'string' },
    listChanges: { type: 'boolean' },
    householdNews: { type: 'boolean' },
    runDone: { type: 'boolean' },
    reminders: { type: 'boolean' },
    lastSeenAt: { type: 'string', format: 'date-time', description: 'Time of the latest PUT of this token (ISO 8601 UTC with milliseconds)' },
    quietHours: QuietHoursSchema,
  },
} as const satisfies TypedSchema;
export type PushDevice = Infer<typeof PushDeviceSchema>;

/** The caller's phones, newest registration first (GET /me/devices). */
export const PushDeviceListSchema = {
  type: 'object',
  title: 'PushDeviceListResponse',
  required: ['items'],
  properties: { items: { type: 'array', items: PushDeviceSchema, description: 'Newest first: the latest registration to this account first' } },
} as const satisfies TypedSchema;
export type PushDeviceList = Infer<typeof PushDeviceListSchema>;

/** POST /internal/v1/households/{householdId}/notifications: what the platform's other services send. */
export const InternalNotificationBody = {
  type: 'object',
  required: ['kind', 'title', 'body'],
  properties: {
    kind: { type: 'string', enum: PUSH_KINDS, description: 'Which switch of a phone decides whether it is pushed' },
    title: {
      type: 'string',
      minLength: 1,
      maxLength: 100,
      ...singleLine,
      description: 'The visible title, 1 to 100 characters; one line without control characters or bidirectional controls',
    },
    body: {
      type: 'string',
      minLength: 1,
      maxLength: 500,
      ...singleLine,
      description: 'The visible text, 1 to 500 characters; one line without control characters (no CR or LF) or bidirectional controls',
    },
    data: { type: 'object', description: 'Passed to the app, at most 2,048 bytes as JSON; FCM gets each value as a string (objects JSON-encoded)' },
    excludeUserId: { type: 'string', format: 'uuid', description: 'An account id (a uuid) that is not told (the person who acted)' },
  },
} as const satisfies TypedSchema;
export type InternalNotificationRequest = Infer<typeof InternalNotificationBody>;

export const HouseholdParams = {
  type: 'object',
  required: ['householdId'],
  properties: { householdId: { type: 'string', maxLength: 200 } },
} as const satisfies TypedSchema;

export const InternalNotificationResponse = {
  type: 'object',
  required: ['id', 'recipients'],
  properties: {
    id: { type: 'string', format: 'uuid', description: 'The notification (the inbox item id of every recipient)' },
    recipients: { type: 'integer', description: 'How many people it is for: every member with an account but excludeUserId' },
  },
} as const satisfies TypedSchema;

/** NotificationResponse: one item of a person's inbox. */
export const NotificationSchema = {
  title: 'NotificationResponse',
  type: 'object',
  required: ['id', 'householdId', 'kind', 'title', 'body', 'data', 'createdAt', 'readAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    householdId: { type: 'string', format: 'uuid' },
    kind: { type: 'string', enum: PUSH_KINDS },
    title: { type: 'string' },
    body: { type: 'string' },
    data: { type: 'object', description: '{} when none was sent' },
    createdAt: { type: 'string', format: 'date-time' },
    readAt: { type: ['string', 'null'], format: 'date-time', description: 'null while unread' },
  },
} as const satisfies TypedSchema;

export const InboxQuery = {
  type: 'object',
  properties: {
    cursor: {
      type: 'string',
      minLength: 1,
      maxLength: 500,
      description: '`nextCursor` of the previous page of the same person; anything else is 400 invalid_cursor',
    },
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 50, description: 'Page size, 1 to 100 (default 50)' },
  },
} as const satisfies TypedSchema;

export const InboxSchema = {
  title: 'NotificationListResponse',
  type: 'object',
  required: ['items', 'nextCursor'],
  properties: {
    items: { type: 'array', items: NotificationSchema, description: 'Newest first; notifications are kept 30 days' },
    nextCursor: { type: ['string', 'null'], description: 'The next (older) page; null when this is the last' },
  },
} as const satisfies TypedSchema;

export const MarkReadBody = {
  type: 'object',
  required: ['upTo'],
  properties: { upTo: { type: 'string', maxLength: 200, description: 'An inbox item id: it and every older item are marked read' } },
} as const satisfies TypedSchema;
