import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { ApiRouter, loadedRead, principalOf, RateLimit, type RateLimitOptions, sendJsonText, timing } from '@svc/http-kit';
import type { RequestHandler } from 'express';
import fresh from 'fresh';
import { calendarFeedRead, eventRead, eventsRead } from './reads.js';
import {
  CalendarFeedSchema,
  EventParams,
  FeedTokenParams,
  HOUSEHOLD_BOUNDS,
  HouseholdParams,
  LIMITS,
  ListQuery,
  MealEventBody,
  MealEventCreateBody,
  MealEventSchema,
  PagedMealEventSchema,
  ScopeQuery,
  SeriesParams,
  SeriesSchema,
} from './schemas.js';
import type { CalendarFeedService, MealEventsService } from './service/index.js';

/** The two limits of the feed route: per client IP (checked first) and per token. */
export interface CalendarFeedLimits {
  perIp: RateLimit;
  perToken: RateLimit;
}

/**
 * The feed route's limits. Calendar apps poll a feed every few minutes to every few hours, and a
 * household shares one URL across its phones, so a token gets 60 requests a minute and an IP 120;
 * with `redis` the counters are shared by every instance.
 */
export function calendarFeedLimits(
  options: {
    redis?: RateLimitOptions['redis'];
    perIp?: { points: number; durationSeconds: number };
    perToken?: { points: number; durationSeconds: number };
    /** Put before the counters' names, for deployments (or tests) that share one Redis. */
    namespace?: string;
  } = {},
): CalendarFeedLimits {
  const ns = options.namespace ?? '';
  return {
    perIp: new RateLimit({ keyPrefix: `${ns}calendar-feed-ip`, ...(options.perIp ?? { points: 120, durationSeconds: 60 }), redis: options.redis }),
    perToken: new RateLimit({ keyPrefix: `${ns}calendar-feed-token`, ...(options.perToken ?? { points: 60, durationSeconds: 60 }), redis: options.redis }),
  };
}

/** What the meal-events routes need: the package's two services and the feed route's limits. */
export interface RouterOptions {
  /** The events (which holds its store, clock, access, member ids and cursor secret). */
  service: MealEventsService;
  /** The calendar feed (its store, the household profiles, PUBLIC_BASE_URL and the sealing key). */
  calendar: CalendarFeedService;
  /** In-process limits with the defaults of `calendarFeedLimits()` unless given. */
  calendarLimits?: CalendarFeedLimits;
}

const RATE_LIMIT_HEADERS = {
  RateLimit: { description: 'What is left of each limit (IETF httpapi RateLimit header fields draft)', schema: { type: 'string' } },
  'RateLimit-Policy': { description: 'The per-IP and per-token limits', schema: { type: 'string' } },
};

/** What the write operations say of the household's bounds (HOUSEHOLD_BOUNDS). */
const BOUNDS_TEXT =
  `A household keeps at most ${HOUSEHOLD_BOUNDS.liveEvents.toLocaleString('en')} events dated from 31 days before today on (occurrences of series written ahead included), ` +
  `${HOUSEHOLD_BOUNDS.events.toLocaleString('en')} events in all, and ${HOUSEHOLD_BOUNDS.activeSeries} active series (no end, an \`until\` not past, or an occurrence from today on); ` +
  `a write past a bound is 409 \`limit_reached\` and writes nothing (a series is refused whole). At most ${LIMITS.participants} participants an event (400).`;

/**
 * The meal-events operations: the paged list (the contract's "Meal events"), one event, the
 * writes, and the household's calendar feed. Any member reads events; Owner and Adult write; a
 * non-member gets 404. Ids in the path arrive lower-cased (http-kit's validation of uuid params).
 */
export function createRouter(options: RouterOptions): ApiRouter {
  const { service, calendar } = options;
  const limits = options.calendarLimits ?? calendarFeedLimits();
  const api = new ApiRouter({ tags: ['MealEvents'] });

  api.route(
    {
      method: 'get',
      path: '/api/v1/households/{householdId}/events',
      tokenScope: 'events:read',
      operationId: 'listMealEvents',
      summary: "A page of the household's meal events, earliest first",
      description:
        'Ordered by date, then servingTime, then id. `from` and `to` are inclusive. Keyset paging: pass `nextCursor` back as `cursor`; it is null on the last page. A cursor keeps the from/to it was made under. Any member, Junior included.',
      auth: true,
      params: HouseholdParams,
      query: ListQuery,
      fieldCodes: { cursor: 'invalid_cursor' },
      responses: { 200: { description: 'One page', schema: PagedMealEventSchema } },
      errorCodes: { 400: ['validation_failed', 'invalid_cursor'], 404: ['not_found'] },
      read: eventsRead,
    },
    async (req, res) => {
      // A hot read: the page comes from PostgreSQL as the answer's JSON text, kept while the list is unchanged (see list).
      const answer = await service.list(principalOf(req), req.input.params.householdId!, req.input.query, loadedRead(req, eventsRead));
      sendJsonText(res, answer.body, answer.bytes);
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/v1/households/{householdId}/events',
      tokenScope: 'events:write',
      operationId: 'createMealEvent',
      etag: true,
      summary: 'Adds a meal event (Owner or Adult)',
      description:
        "A participant's `memberId` must be a member of this household (400 `validation_failed` naming the participant otherwise); null for a guest. " +
        "With `repeat`, the event is the first occurrence of a series: its occurrences up to 366 days after today (household time zone) exist when the answer comes, each an ordinary event with the `seriesId`, and the window is extended every day. `date` must fit the rule; a rule that makes no occurrence in the window, or more than 366 at once (today's not counted), is 400 `validation_failed` naming the field. " +
        BOUNDS_TEXT,
      auth: true,
      params: HouseholdParams,
      body: MealEventCreateBody,
      responses: { 201: { description: 'The new event (with `repeat`: the first occurrence)', schema: MealEventSchema } },
      errorCodes: { 400: ['validation_failed', 'value_too_long'], 403: ['forbidden'], 404: ['not_found'], 409: ['limit_reached'] },
    },
    async (req, res) => {
      res.status(201).json(await service.create(principalOf(req), req.input.params.householdId!, req.input.body));
    },
  );

  api.route(
    {
      method: 'get',
      path: '/api/v1/households/{householdId}/events/{eventId}',
      tokenScope: 'events:read',
      operationId: 'getMealEvent',
      etag: true,
      summary: 'One meal event (any member)',
      auth: true,
      params: EventParams,
      responses: { 200: { description: 'The event', schema: MealEventSchema } },
      errorCodes: { 404: ['not_found'] },
      compiledResponse: true,
      read: eventRead,
    },
    async (req, res) => {
      const { householdId, eventId } = req.input.params;
      res.json(await service.get(principalOf(req), householdId, eventId, loadedRead(req, eventRead)));
    },
  );

  api.route(
    {
      method: 'put',
      path: '/api/v1/households/{householdId}/events/{eventId}',
      tokenScope: 'events:write',
      operationId: 'replaceMealEvent',
      etag: true,
      current: (req) => service.get(principalOf(req), req.input.params.householdId!, req.input.params.eventId!),
      summary: 'Replaces a meal event: every member is written (Owner or Adult)',
      description:
        "A participant's `memberId` must be a member of this household (400 `validation_failed` naming the participant otherwise); null for a guest or a member who has left. " +
        'What a GET answered may always be sent back: a participant whose member has left since the GET is accepted unchanged and stored with `memberId` null (its name kept). ' +
        'A replacement that would take the household past its bounds (a date moved into the counted window, a new series from `scope=following`) is 409 `limit_reached` and changes nothing.',
      auth: true,
      params: EventParams,
      query: ScopeQuery,
      body: MealEventBody,
      responses: { 200: { description: 'The event as stored (scope=following: the first occurrence of the new series)', schema: MealEventSchema } },
      errorCodes: { 400: ['validation_failed', 'value_too_long'], 403: ['forbidden'], 404: ['not_found'], 409: ['limit_reached'] },
    },
    async (req, res) => {
      const { householdId, eventId } = req.input.params;
      res.json(await service.replace(principalOf(req), householdId, eventId, req.input.body, req.input.query.scope ?? 'this'));
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/api/v1/households/{householdId}/events/{eventId}',
      tokenScope: 'events:write',
      operationId: 'deleteMealEvent',
      current: (req) => service.get(principalOf(req), req.input.params.householdId!, req.input.params.eventId!),
      summary: 'Removes a meal event (Owner or Adult)',
      auth: true,
      params: EventParams,
      query: ScopeQuery,
      responses: { 204: { description: 'Removed' } },
      errorCodes: { 400: ['validation_failed'], 403: ['forbidden'], 404: ['not_found'] },
    },
    async (req, res) => {
      const { householdId, eventId } = req.input.params;
      await service.remove(principalOf(req), householdId, eventId, req.input.query.scope ?? 'this');
      res.status(204).end();
    },
  );

  api.route(
    {
      method: 'get',
      path: '/api/v1/households/{householdId}/series/{seriesId}',
      tokenScope: 'events:read',
      operationId: 'getMealEventSeries',
      summary: 'A series of repeating meal events: its rule, template and exceptions (any member)',
      description:
        '`template` is the event body the occurrences are made from (its `date` is the first occurrence); `exceptions` the original dates of occurrences changed or deleted on their own. 404 after DELETE with scope=all, and for a series ended by scope=following before its first occurrence.',
      auth: true,
      params: SeriesParams,
      responses: { 200: { description: 'The series', schema: SeriesSchema } },
      errorCodes: { 404: ['not_found'] },
    },
    async (req, res) => {
      const { householdId, seriesId } = req.input.params;
      res.json(await service.getSeries(principalOf(req), householdId, seriesId));
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/v1/households/{householdId}/calendar-feed',
      operationId: 'createCalendarFeed',
      summary: "Makes a new secret URL of the household's meal calendar (Owner or Adult), retiring the previous one",
      description:
        'The URL holds a 256-bit token; anyone with it can read the calendar, so share it only with the household. The previous URL, if any, answers 404 from now on. ' +
        'The URL is also retired (404 from then on; make a new one here) whenever someone who could read it stops being able to: an Owner or Adult leaves, is removed or deletes their account, or an Adult is made a Junior.',
      tags: ['Calendar'],
      auth: true,
      params: HouseholdParams,
      responses: { 201: { description: 'The new feed', schema: CalendarFeedSchema } },
      errorCodes: { 403: ['forbidden'], 404: ['not_found'] },
    },
    async (req, res) => {
      res.status(201).json(await calendar.create(principalOf(req), req.input.params.householdId!));
    },
  );

  api.route(
    {
      method: 'get',
      path: '/api/v1/households/{householdId}/calendar-feed',
      tokenScope: 'households:read',
      operationId: 'getCalendarFeed',
      summary: "The household's current calendar URL (any member but a Junior)",
      description:
        '404 `not_found` when the household has no feed, including after it was retired because an Owner or Adult left, was removed, deleted their account or was made a Junior (a departed person may keep the URL).',
      tags: ['Calendar'],
      auth: true,
      params: HouseholdParams,
      compiledResponse: true, // a hot read: its answer is written by a serializer compiled from the schema
      responses: { 200: { description: 'The current feed', schema: CalendarFeedSchema } },
      errorCodes: { 403: ['forbidden'], 404: ['not_found'] },
      read: calendarFeedRead,
    },
    async (req, res) => {
      res.json(await calendar.get(principalOf(req), req.input.params.householdId!, loadedRead(req, calendarFeedRead)));
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/api/v1/households/{householdId}/calendar-feed',
      operationId: 'deleteCalendarFeed',
      summary: "Retires the household's calendar URL at once (Owner or Adult)",
      description: 'Answers 204 also when there was no feed.',
      tags: ['Calendar'],
      auth: true,
      params: HouseholdParams,
      responses: { 204: { description: 'The URL answers 404 from now on' } },
      errorCodes: { 403: ['forbidden'], 404: ['not_found'] },
    },
    async (req, res) => {
      await calendar.remove(principalOf(req), req.input.params.householdId!);
      res.status(204).end();
    },
  );

  // Both limits are taken before the feed is looked up, so guessing tokens costs the guesser's IP
  // budget and never a database round trip beyond it. The per-token counter is keyed by a hash:
  // the secret never becomes a Redis key.
  const limitFeed: RequestHandler = async (req, res, next) => {
    const ip = await limits.perIp.consume(req.ip ?? 'unknown');
    const token = await limits.perToken.consume(createHash('sha256').update(String(req.params.token)).digest('base64url'));
    res.setHeader('RateLimit-Policy', `${limits.perIp.policy}, ${limits.perToken.policy}`);
    res.setHeader('RateLimit', `${ip}, ${token}`);
    next();
  };

  api.route(
    {
      method: 'get',
      path: '/calendar/{token}.ics',
      operationId: 'getCalendarFeedIcs',
      summary: "The household's meals as iCalendar (RFC 5545), for calendar apps; no sign-in",
      description:
        "The token is the secret: no cookie is needed or read. 404 for a retired URL: replaced, deleted, or retired when an Owner or Adult left the household, was removed, deleted their account or was made a Junior. `DESCRIPTION` lists the participants' names (a deleted account's as `Former member`). One VEVENT per meal event from 31 days before today to 366 days after (the household's time zone), at the event's date and serving time in that zone (`DTSTART;TZID=`, with its VTIMEZONE), `DURATION:PT1H`, `UID` `<eventId>@<PUBLIC_BASE_URL host>`, `SEQUENCE` and `LAST-MODIFIED` from the last change. Then one VEVENT per dinner of the household's current plans in the same days: `SUMMARY` the dish's name, at the day's serving time in the household's zone, `DURATION:PT1H`, `UID` `dinner-<planId>-<date>@<host>`. Send `If-None-Match` with the last `ETag` to get 304 when nothing changed (the ETag moves with any change of the household's events or plans). Sent gzip-compressed when `Accept-Encoding` allows. A rendering that takes over a minute is stopped: 503 `service_unavailable` with `Retry-After`. Its size is bounded by the household's bounds (see POST …/events). Rate-limited per client IP and per token.",
      tags: ['Calendar'],
      params: FeedTokenParams,
      responses: {
        200: {
          description: 'The calendar',
          contentType: 'text/calendar; charset=utf-8',
          schema: { type: 'string' },
          headers: {
            ETag: { description: 'Weak validator (W/"…"): unchanged while the events of the window are', schema: { type: 'string' } },
            'Cache-Control': { description: '`private, no-cache`: revalidate with If-None-Match', schema: { type: 'string' } },
            'Content-Encoding': { description: '`gzip` when the request accepts it (`Accept-Encoding`)', schema: { type: 'string' } },
            Vary: { description: '`Accept-Encoding`', schema: { type: 'string' } },
            ...RATE_LIMIT_HEADERS,
          },
        },
        304: {
          description: 'Not modified: If-None-Match matched the current ETag',
          headers: { ETag: { description: 'The current validator', schema: { type: 'string' } } },
        },
      },
      errorCodes: { 404: ['not_found'], 429: ['rate_limited'], 503: ['service_unavailable'] },
    },
    limitFeed,
    async (req, res) => {
      const feed = await calendar.ics(req.input.params.token);
      res.setHeader('ETag', feed.etag);
      // The URL is a secret: shared caches must not keep the answer; clients revalidate each poll.
      res.setHeader('Cache-Control', 'private, no-cache');
      // Only If-None-Match decides (RFC 9110: If-Modified-Since is ignored when it is present, and there is no Last-Modified here).
      if (fresh({ 'if-none-match': req.get('if-none-match') }, { etag: feed.etag })) {
        res.status(304).end();
        return;
      }
      const rendered = await timing.step('render-ics', () => feed.rendered());
      res.setHeader('Content-Type', 'text/calendar; charset=utf-8');
      res.setHeader('Vary', 'Accept-Encoding');
      // Kept compressed: sent as it is to a client that takes gzip (every calendar app), inflated
      // off the event loop (zlib's thread pool) for one that does not.
      if (req.get('accept-encoding') && req.acceptsEncodings('gzip', 'identity') === 'gzip') {
        res.setHeader('Content-Encoding', 'gzip');
        res.send(rendered.gzip);
        return;
      }
      res.setHeader('Content-Length', String(rendered.bytes));
      await pipeline(Readable.from([rendered.gzip]), createGunzip(), res);
    },
  );

  return api;
}
