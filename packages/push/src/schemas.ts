import type { JsonSchema } from '@svc/http-kit';
import { PLATFORMS } from './PushDeviceStore.js';

/** Longest accepted values (decisions.md §2: push token 4096; provider keeps the general 200). */
export const LIMITS = { token: 4096, provider: 200 } as const;

const TokenSchema: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: LIMITS.token,
  description: 'The push token, 1 to 4096 characters, compared exactly (case and all)',
};

export const TokenParams: JsonSchema = {
  type: 'object',
  required: ['token'],
  properties: {
    token: {
      ...TokenSchema,
      description: 'The push token, percent-encoded as one path segment (encodeURIComponent); decoded once, `+` stays `+`',
    },
  },
};

export const RegisterBody: JsonSchema = {
  type: 'object',
  required: ['token', 'platform'],
  properties: {
    token: TokenSchema,
    platform: { type: 'string', enum: [...PLATFORMS] },
    provider: {
      type: ['string', 'null'],
      minLength: 1,
      maxLength: LIMITS.provider,
      description: 'Push provider (e.g. fcm, apns), stored as sent; null or left out: the service default (PUSH_DEFAULT_PROVIDER)',
    },
  },
};

export const UpdateBody: JsonSchema = {
  type: 'object',
  required: ['listChanges', 'householdNews', 'runDone'],
  properties: {
    listChanges: { type: 'boolean' },
    householdNews: { type: 'boolean' },
    runDone: { type: 'boolean' },
    reminders: { type: ['boolean', 'null'], description: 'Left out or null: keeps its current value' },
  },
};

export const PushDeviceSchema: JsonSchema = {
  type: 'object',
  required: ['token', 'platform', 'provider', 'listChanges', 'householdNews', 'runDone', 'reminders', 'lastSeenAt'],
  properties: {
    token: { type: 'string' },
    platform: { type: 'string', enum: [...PLATFORMS] },
    provider: { type: 'string' },
    listChanges: { type: 'boolean' },
    householdNews: { type: 'boolean' },
    runDone: { type: 'boolean' },
    reminders: { type: 'boolean' },
    lastSeenAt: { type: 'string', format: 'date-time', description: 'Time of the latest PUT of this token' },
  },
};
