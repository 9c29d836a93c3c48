import { type Infer, multiLine, singleLine, type TypedSchema } from '@svc/http-kit';

/** The four kinds of meal event (decisions.md §2). */
export const EVENT_TYPES = ['Guests', 'EatingOut', 'Away', 'Activity'] as const;
export type MealEventType = (typeof EVENT_TYPES)[number];

/** Longest accepted values of an event (decisions.md §2 fixes notes at 2000; the rest are ours). */
export const LIMITS = {
  notes: 2000,
  participants: 50,
  participantName: 100,
  cursor: 512,
  pageMax: 100,
  pageDefault: 50,
} as const;

/**
 * A real calendar date in years 1900–9999: `format: date` refuses days a month does not have
 * (2026-02-30, 29 February outside leap years) and anything but exactly YYYY-MM-DD (so a fifth
 * year digit); the pattern keeps the year to a sane range, so nothing a client sends reaches
 * PostgreSQL as year 0000 (which it refuses) or as an absurd century.
 */
const DateSchema = {
  type: 'string',
  format: 'date',
  pattern: '^(19[0-9]{2}|[2-9][0-9]{3})-',
  description: 'YYYY-MM-DD, a real date in years 1900–9999',
  examples: ['2026-11-22'],
} as const satisfies TypedSchema;

const UuidSchema = { type: 'string', format: 'uuid' } as const satisfies TypedSchema;

export const HouseholdParams = {
  type: 'object',
  required: ['householdId'],
  properties: { householdId: UuidSchema },
} as const satisfies TypedSchema;

export const EventParams = {
  type: 'object',
  required: ['householdId', 'eventId'],
  properties: { householdId: UuidSchema, eventId: UuidSchema },
} as const satisfies TypedSchema;

export const ListQuery = {
  type: 'object',
  properties: {
    from: { ...DateSchema, description: 'Earliest date, inclusive (YYYY-MM-DD, years 1900–9999). Not later than `to`.' },
    to: { ...DateSchema, description: 'Latest date, inclusive (YYYY-MM-DD, years 1900–9999).' },
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
} as const satisfies TypedSchema;
/** The query of GET …/events as validated (`limit` defaulted to 50). */
export type ListEventsQuery = Infer<typeof ListQuery>;

export const ParticipantSchema = {
  title: 'Participant',
  type: 'object',
  description:
    'One person at (or away from) the meal. When a member leaves or is removed from the household, they stay a participant of the events they were at, by name, with `memberId` null (like a guest): an answer never names a memberId that is no longer a member, so a PUT of what a GET answered always passes. When a person deletes their account, their participants become `{ "memberId": null, "name": "Former member" }`: the place at the table stays, the name goes.',
  required: ['memberId', 'name'],
  properties: {
    memberId: {
      type: ['string', 'null'],
      format: 'uuid',
      description:
        'The household member, or null for a guest or a member who has left. On POST and PUT it must be a member of the household (400 validation_failed otherwise); PUT also accepts, unchanged, a member id the stored event already names whose member has just left, and stores that participant with memberId null.',
    },
    name: {
      type: 'string',
      minLength: 1,
      maxLength: LIMITS.participantName,
      ...singleLine,
      description: 'One line: no control characters or bidirectional controls',
    },
  },
} as const satisfies TypedSchema;
/** One person at (or away from) the table; `memberId` links a household member when there is one. */
export type Participant = Infer<typeof ParticipantSchema>;

/** Most minutes a reminder may come before the serving time (a week). */
export const REMINDER_MINUTES_MAX = 10080;

const ReminderMinutesSchema = {
  type: ['integer', 'null'],
  minimum: 0,
  maximum: REMINDER_MINUTES_MAX,
  description:
    "Remind the participants who have accounts (every member with an account when none has) this many minutes before the serving time, in the household's time zone (0–10080); null or left out: no reminder. A reminder whose time has passed when the event is written is not sent.",
} as const satisfies TypedSchema;

/** POST and PUT body: every member required (PUT replaces them all); `notes` may be "" but not null. */
export const MealEventBody = {
  title: 'MealEventRequest',
  type: 'object',
  examples: [
    {
      date: '2026-12-24',
      eventType: 'Guests',
      servingTime: '18:30',
      availableCookingMinutes: 120,
      notes: 'Grandparents visit',
      participants: [{ memberId: null, name: 'Grandma' }],
    },
  ],
  required: ['date', 'eventType', 'servingTime', 'availableCookingMinutes', 'notes', 'participants'],
  properties: {
    date: DateSchema,
    eventType: { type: 'string', enum: EVENT_TYPES },
    servingTime: {
      type: 'string',
      // 00:00 to 23:59 (24:00 is not a time of day), optional seconds.
      pattern: '^([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?$',
      description: 'HH:mm, 24-hour; HH:mm:ss accepted (seconds are dropped); answered as HH:mm',
      examples: ['18:30'],
    },
    availableCookingMinutes: { type: 'integer', minimum: 0, maximum: 1440 },
    notes: {
      type: 'string',
      maxLength: LIMITS.notes,
      ...multiLine,
      description:
        'Up to 2000 characters; "" for none (null is refused). Line breaks and tabs may stay; other control characters and bidirectional controls are refused',
    },
    participants: { type: 'array', maxItems: LIMITS.participants, items: ParticipantSchema, description: 'At most 50' },
    reminderMinutes: ReminderMinutesSchema,
  },
} as const satisfies TypedSchema;
/** What a client writes: every member required, a PUT replaces them all. */
export type MealEventInput = Infer<typeof MealEventBody>;

/** Weekdays of a weekly repeat rule, Monday first. */
export const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** Most occurrences a series may have (`count`), and most written ahead at once. */
export const SERIES_LIMITS = { intervalMax: 52, countMax: 366, occurrencesAhead: 366, windowDays: 366 } as const;

/**
 * How large one household's meals may grow (over a bound: 409 `limit_reached`, nothing written).
 * `liveEvents`: events dated from 31 days before today (UTC) on, the calendar feed's window and
 * everything after it, occurrences of series written ahead included: about 12 a day for a year
 * ahead, beyond any real family, while the largest feed stays a few tens of MB. `events`: every
 * event of any date (past ones stay), decades of a busy family. `activeSeries`: series that can
 * still give a meal (no end, an `until` not past, or an occurrence from today on).
 * docs/decisions.md says why these numbers.
 */
export const HOUSEHOLD_BOUNDS = { liveEvents: 5_000, events: 50_000, activeSeries: 50 } as const;
export type HouseholdBounds = { -readonly [K in keyof typeof HOUSEHOLD_BOUNDS]: number };

/** The repeat rule of a series as a POST sends it (decisions.md §8 "Meals that repeat"). */
export const RepeatBody = {
  title: 'RepeatRule',
  type: 'object',
  required: ['frequency'],
  description:
    "Makes the event the first of a series. The body's `date` is the first occurrence and must fit the rule. `until` (inclusive) or `count` (including the first), not both; neither: the series has no end. Occurrences are written as events up to 366 days after today (household time zone) and the window is extended every day.",
  properties: {
    frequency: {
      type: 'string',
      enum: ['daily', 'weekly', 'monthly'],
      description: 'monthly repeats the day of the month of `date` and skips months without it',
    },
    interval: { type: 'integer', minimum: 1, maximum: SERIES_LIMITS.intervalMax, default: 1, description: 'Every n-th day, week or month; 1–52, default 1' },
    byDay: {
      type: ['array', 'null'],
      items: { type: 'string', enum: WEEKDAYS },
      minItems: 1,
      maxItems: 7,
      uniqueItems: true,
      description: 'Weekly only: the weekdays; default the weekday of `date`, which must be one of them',
    },
    until: { ...DateSchema, type: ['string', 'null'], description: 'Last date, inclusive (YYYY-MM-DD); not with `count`' },
    count: {
      type: ['integer', 'null'],
      minimum: 1,
      maximum: SERIES_LIMITS.countMax,
      description: 'Number of occurrences, the first included (1–366); not with `until`',
    },
  },
} as const satisfies TypedSchema;
export type RepeatInput = Infer<typeof RepeatBody>;

/** POST body: an event, and with `repeat` the first occurrence of a series. */
export const MealEventCreateBody = {
  ...MealEventBody,
  title: 'MealEventCreateRequest',
  properties: { ...MealEventBody.properties, repeat: RepeatBody },
} as const satisfies TypedSchema;
export type MealEventCreateInput = Infer<typeof MealEventCreateBody>;

/** `?scope=` of PUT and DELETE of an event. */
export const ScopeQuery = {
  type: 'object',
  properties: {
    scope: {
      type: 'string',
      enum: ['this', 'following', 'all'],
      default: 'this',
      description:
        "For an occurrence of a series: `this` (default; only this one, kept in its series, its original date listed in the series' `exceptions`), `following` (this one and every later one: the series ends the day before; a PUT starts a new series from the body's date with the same rule), `all` (every occurrence, earlier exceptions included; the seriesId stays). Ignored for a single event; anything else is 400 validation_failed.",
    },
  },
} as const satisfies TypedSchema;
export type EventScope = 'this' | 'following' | 'all';

/** The repeat rule as a series answers it: every member present. */
export const RepeatSchema = {
  title: 'RepeatRuleResponse',
  type: 'object',
  required: ['frequency', 'interval', 'byDay', 'until', 'count'],
  properties: {
    frequency: { type: 'string', enum: ['daily', 'weekly', 'monthly'] },
    interval: { type: 'integer' },
    byDay: { type: ['array', 'null'], items: { type: 'string', enum: WEEKDAYS }, description: 'The weekdays of a weekly rule (Monday first); null otherwise' },
    until: { type: ['string', 'null'], format: 'date' },
    count: { type: ['integer', 'null'] },
  },
} as const satisfies TypedSchema;
export type RepeatRule = Infer<typeof RepeatSchema>;

/** The event body a series' occurrences are made from. */
export const SeriesTemplateSchema = {
  title: 'SeriesTemplate',
  type: 'object',
  required: ['date', 'eventType', 'servingTime', 'availableCookingMinutes', 'notes', 'participants'],
  properties: {
    date: { type: 'string', format: 'date', description: 'The first occurrence' },
    eventType: { type: 'string', enum: EVENT_TYPES },
    servingTime: { type: 'string', description: 'HH:mm' },
    availableCookingMinutes: { type: 'integer' },
    notes: { type: 'string' },
    participants: { type: 'array', items: ParticipantSchema },
    reminderMinutes: { type: ['integer', 'null'], description: 'Minutes before the serving time each occurrence reminds; null: none' },
  },
} as const satisfies TypedSchema;

/** GET …/series/{seriesId}. */
export const SeriesSchema = {
  title: 'MealEventSeriesResponse',
  type: 'object',
  required: ['id', 'repeat', 'template', 'exceptions'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    repeat: RepeatSchema,
    template: SeriesTemplateSchema,
    exceptions: {
      type: 'array',
      items: { type: 'string', format: 'date' },
      description: 'Original dates of occurrences changed or deleted on their own (scope=this), earliest first',
    },
  },
} as const satisfies TypedSchema;
export type MealEventSeries = Infer<typeof SeriesSchema>;

export const SeriesParams = {
  type: 'object',
  required: ['householdId', 'seriesId'],
  properties: { householdId: UuidSchema, seriesId: UuidSchema },
} as const satisfies TypedSchema;

/** A meal event as the API answers it. */
export const MealEventSchema = {
  title: 'MealEventResponse',
  type: 'object',
  required: ['id', 'householdId', 'date', 'eventType', 'servingTime', 'availableCookingMinutes', 'notes', 'participants', 'createdAt', 'updatedAt', 'seriesId'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    householdId: { type: 'string', format: 'uuid' },
    date: { type: 'string', format: 'date' },
    eventType: { type: 'string', enum: EVENT_TYPES },
    servingTime: { type: 'string', description: 'HH:mm', examples: ['18:30'] },
    availableCookingMinutes: { type: 'integer', format: 'int32' },
    notes: { type: 'string' },
    participants: { type: 'array', items: ParticipantSchema },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
    seriesId: {
      type: ['string', 'null'],
      format: 'uuid',
      description: 'The series this event is an occurrence of (GET …/series/{seriesId}); null for a single event',
    },
    reminderMinutes: {
      type: ['integer', 'null'],
      description: 'Minutes before the serving time the participants are reminded (always sent); null: no reminder',
    },
  },
} as const satisfies TypedSchema;
export type MealEvent = Infer<typeof MealEventSchema>;

/** PagedMealEventResponse of the spec; `total` is always null and always sent. */
export const PagedMealEventSchema = {
  title: 'PagedMealEventResponse',
  type: 'object',
  required: ['items', 'nextCursor', 'total'],
  properties: {
    items: { type: 'array', items: MealEventSchema },
    nextCursor: { type: ['string', 'null'], description: 'Pass back as `cursor` for the next page; null on the last page' },
    total: { type: ['integer', 'null'], description: 'The number of matching events; always null in this version (counting is not offered)' },
  },
} as const satisfies TypedSchema;
export type PagedMealEvents = Infer<typeof PagedMealEventSchema>;

/** CalendarFeedResponse: the household's secret calendar address and when it was made. */
export const CalendarFeedSchema = {
  type: 'object',
  title: 'CalendarFeedResponse',
  required: ['url', 'createdAt'],
  properties: {
    url: {
      type: 'string',
      format: 'uri',
      description:
        'PUBLIC_BASE_URL/calendar/<token>.ics: subscribe to it in a calendar app (or with webcal:// instead of https://). Anyone holding it reads the calendar.',
      examples: ['https://meals.example.com/calendar/q3v1nQ0m7h2Yx2hQm0cS8bXk1Jf5dW9pL4eR6tU8yA0.ics'],
    },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const satisfies TypedSchema;
export type CalendarFeed = Infer<typeof CalendarFeedSchema>;

/**
 * The secret of a feed URL. Any string is accepted here and one that is not a token this service
 * handed out answers 404 like an unknown one (the contract: 404 for an unknown or retired token),
 * so the limit is only there to keep absurd paths out.
 */
export const FeedTokenParams = {
  type: 'object',
  required: ['token'],
  properties: { token: { type: 'string', maxLength: 4096, description: 'The token of the feed URL (43 base64url characters)' } },
} as const satisfies TypedSchema;
