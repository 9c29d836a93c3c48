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

export const UpdateBody = {
  type: 'object',
  required: ['listChanges', 'householdNews', 'runDone'],
  properties: {
    listChanges: { type: 'boolean' },
    householdNews: { type: 'boolean' },
    runDone: { type: 'boolean' },
    reminders: { type: ['boolean', 'null'], description: 'Left out or null: keeps its current value' },
  },
} as const satisfies TypedSchema;
/** The switches of a PATCH; `reminders` null or left out keeps its value. */
export type DeviceSwitches = Infer<typeof UpdateBody>;

/** PushDeviceResponse: a registered phone, and what a sender needs. */
export const PushDeviceSchema = {
  title: 'PushDeviceResponse',
  type: 'object',
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
