import type { JsonSchema } from '@svc/http-kit';
import { EVENT_TYPES } from './MealEventStore.js';

/** Longest accepted values of an event (decisions.md §2 fixes notes at 2000; the rest are ours). */
export const LIMITS = {
  notes: 2000,
  participants: 50,
  participantName: 100,
  cursor: 512,
  pageMax: 100,
  pageDefault: 50,
} as const;

/** A real calendar date; year 0000 does not exist in PostgreSQL (or the Gregorian calendar). */
const DateSchema: JsonSchema = {
  type: 'string',
  format: 'date',
  pattern: '^(?!0000)[0-9]{4}-',
  description: 'YYYY-MM-DD, a real date (years 0001–9999)',
  examples: ['2026-11-22'],
};

const UuidSchema: JsonSchema = { type: 'string', format: 'uuid' };

export const HouseholdParams: JsonSchema = {
  type: 'object',
  required: ['householdId'],
  properties: { householdId: UuidSchema },
};

export const EventParams: JsonSchema = {
  type: 'object',
  required: ['householdId', 'eventId'],
  properties: { householdId: UuidSchema, eventId: UuidSchema },
};

export const ListQuery: JsonSchema = {
  type: 'object',
  properties: {
    from: { ...DateSchema, description: 'Earliest date, inclusive (YYYY-MM-DD). Not later than `to`.' },
    to: { ...DateSchema, description: 'Latest date, inclusive (YYYY-MM-DD).' },
    cursor: {
      type: 'string',
      minLength: 1,
      maxLength: LIMITS.cursor,
      description:
        "`nextCursor` of the previous page. It keeps that page's from/to: send them again unchanged or leave them out; different ones answer 400 invalid_cursor.",
    },
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: LIMITS.pageMax,
      default: LIMITS.pageDefault,
      description: '1 to 100, default 50; outside: 400 validation_failed',
    },
  },
};

const ParticipantSchema: JsonSchema = {
  type: 'object',
  required: ['memberId', 'name'],
  properties: {
    memberId: { type: ['string', 'null'], format: 'uuid', description: 'The household member, or null for a guest' },
    name: { type: 'string', minLength: 1, maxLength: LIMITS.participantName },
  },
};

/** POST and PUT body: every member required (PUT replaces them all); `notes` may be "" but not null. */
export const MealEventBody: JsonSchema = {
  type: 'object',
  required: ['date', 'eventType', 'servingTime', 'availableCookingMinutes', 'notes', 'participants'],
  properties: {
    date: DateSchema,
    eventType: { type: 'string', enum: [...EVENT_TYPES] },
    servingTime: {
      type: 'string',
      pattern: '^([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?$',
      description: 'HH:mm, 24-hour; HH:mm:ss accepted (seconds are dropped); answered as HH:mm',
      examples: ['18:30'],
    },
    availableCookingMinutes: { type: 'integer', minimum: 0, maximum: 1440 },
    notes: { type: 'string', maxLength: LIMITS.notes, description: 'Up to 2000 characters; "" for none (null is refused)' },
    participants: { type: 'array', maxItems: LIMITS.participants, items: ParticipantSchema, description: 'At most 50' },
  },
};

export const MealEventSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'householdId', 'date', 'eventType', 'servingTime', 'availableCookingMinutes', 'notes', 'participants', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    householdId: { type: 'string', format: 'uuid' },
    date: { type: 'string', format: 'date' },
    eventType: { type: 'string', enum: [...EVENT_TYPES] },
    servingTime: { type: 'string', description: 'HH:mm', examples: ['18:30'] },
    availableCookingMinutes: { type: 'integer', format: 'int32' },
    notes: { type: 'string' },
    participants: { type: 'array', items: ParticipantSchema },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
};

export const PagedMealEventSchema: JsonSchema = {
  type: 'object',
  required: ['items', 'nextCursor', 'total'],
  properties: {
    items: { type: 'array', items: MealEventSchema },
    nextCursor: { type: ['string', 'null'], description: 'Pass back as `cursor` for the next page; null on the last page' },
    total: { type: 'null', description: 'Always null' },
  },
};
