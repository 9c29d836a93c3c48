/** The throughput scenarios: what each sends, to which process, with which sessions. */
import { deepPage, opts, PAGE_LIMIT, SPREAD_EVENT, wanted } from './options.js';
import type { Seeded, SpreadHousehold } from './seed.js';

export interface Scenario {
  id: string;
  label: string;
  app: 'service' | 'naive' | 'ceiling' | 'ceilingDb' | 'bare';
  method: 'GET' | 'PATCH' | 'POST' | 'PUT';
  path: string;
  bodies?: unknown[];
  /** Requests sent in turn, request i with `cookies[i]` (a write on each connection's own household); `path` is the first. */
  requests?: { path: string; body?: unknown }[];
  /** One path per session, sent with that session (a resource that belongs to one login); `path` is the first. */
  paths?: string[];
  /** The sessions to send (the connections share them); default: the bench account's, one per connection. */
  cookies?: string[];
  /** Sent with every request (a personal access token beside the cookie, which the service then does not read). */
  headers?: Record<string, string>;
  authenticatedGet: boolean;
}

/** The scenarios this run measures (--only), in the table's order. */
export function scenariosOf(seeded: Seeded): Scenario[] {
  const { householdId, seriesHouseholdId, eventsPath, deepPath, changesPage, changesSince, pollSince, eventId, devicePaths, personCookies, spread, bearer } =
    seeded;
  const hh = `/api/v1/households/${householdId}`;
  // The spread writes: each household twice in a row of requests, so each write really changes its row.
  const twice = <T>(f: (x: SpreadHousehold, turn: number) => T) => [0, 1].flatMap((turn) => spread.map((x) => f(x, turn)));
  const spreadCookies = (naiveToo: boolean) => twice((x) => (naiveToo ? x.naiveCookie : x.cookie));
  const spreadWrites = (
    id: string,
    label: string,
    method: 'PATCH' | 'POST' | 'PUT',
    request: (x: SpreadHousehold, turn: number) => { path: string; body: unknown },
  ): Scenario[] =>
    spread.length
      ? [
          {
            id,
            label: `${label} (write)`,
            app: 'service',
            method,
            path: request(spread[0]!, 0).path,
            requests: twice(request),
            cookies: spreadCookies(false),
            authenticatedGet: false,
          },
          {
            id: `${id}-naive`,
            label: `${label} — naive (express-session + a pool, one statement in a transaction)`,
            app: 'naive',
            method,
            path: request(spread[0]!, 0).path,
            requests: twice(request),
            cookies: spreadCookies(true),
            authenticatedGet: false,
          },
        ]
      : [];
  return (
    [
      { id: 'me-bare', label: 'GET /me — bare node:http (constant)', app: 'bare', method: 'GET', path: '/api/v1/me', authenticatedGet: false },
      { id: 'me-ceiling', label: 'GET /me — Express + helmet (constant)', app: 'ceiling', method: 'GET', path: '/api/v1/me', authenticatedGet: false },
      {
        id: 'me-ceiling-db',
        label: 'GET /me — ceiling (Express + helmet, session cookie, ONE prepared PostgreSQL round trip, JSON by PostgreSQL)',
        app: 'ceilingDb',
        method: 'GET',
        path: '/api/v1/me',
        authenticatedGet: false,
      },
      { id: 'me-naive', label: 'GET /me — naive (express-session + pg)', app: 'naive', method: 'GET', path: '/api/v1/me', authenticatedGet: false },
      { id: 'me', label: 'GET /me — service', app: 'service', method: 'GET', path: '/api/v1/me', authenticatedGet: false },
      { id: 'household', label: 'GET household', app: 'service', method: 'GET', path: hh, authenticatedGet: true },
      // A personal access token beside the session cookie: the service judges the bearer alone (issue 34: ≥ 90 % of the cookie path).
      {
        id: 'me-bearer',
        label: 'GET /me — bearer token (cookie beside it)',
        app: 'service',
        method: 'GET',
        path: '/api/v1/me',
        headers: bearer,
        authenticatedGet: false,
      },
      {
        id: 'household-bearer',
        label: 'GET household — bearer token (cookie beside it)',
        app: 'service',
        method: 'GET',
        path: hh,
        headers: bearer,
        authenticatedGet: true,
      },
      { id: 'rules', label: 'GET rules (5)', app: 'service', method: 'GET', path: `${hh}/rules`, authenticatedGet: true },
      { id: 'rules-defaults', label: 'GET rules/defaults', app: 'service', method: 'GET', path: `${hh}/rules/defaults`, authenticatedGet: true },
      { id: 'time-zones', label: 'GET time-zones', app: 'service', method: 'GET', path: '/api/v1/time-zones', authenticatedGet: true },
      { id: 'members', label: 'GET household members', app: 'service', method: 'GET', path: `${hh}/members`, authenticatedGet: true },
      { id: 'event', label: 'GET one event', app: 'service', method: 'GET', path: `${hh}/events/${eventId}`, authenticatedGet: true },
      { id: 'changes', label: 'GET changes (page 1 of 100)', app: 'service', method: 'GET', path: `${hh}/changes?limit=100`, authenticatedGet: true },
      {
        id: 'changes-deep',
        label: `GET changes (page ${changesPage} of 100)`,
        app: 'service',
        method: 'GET',
        path: `${hh}/changes?limit=100&since=${changesSince}`,
        authenticatedGet: true,
      },
      {
        id: 'changes-empty',
        label: 'GET changes, nothing new (since = the last nextCursor)',
        app: 'service',
        method: 'GET',
        path: `/api/v1/households/${seriesHouseholdId}/changes?since=${pollSince}`,
        authenticatedGet: true,
      },
      {
        id: 'device',
        label: 'GET /me/devices/{token} (one per session)',
        app: 'service',
        method: 'GET',
        path: devicePaths[0]!,
        paths: devicePaths,
        authenticatedGet: true,
      },
      { id: 'calendar-feed', label: 'GET calendar-feed', app: 'service', method: 'GET', path: `${hh}/calendar-feed`, authenticatedGet: true },
      {
        id: 'sessions',
        label: 'GET /me/sessions (3)',
        app: 'service',
        method: 'GET',
        path: '/api/v1/me/sessions',
        cookies: personCookies,
        authenticatedGet: true,
      },
      {
        id: 'logins',
        label: 'GET /me/logins (password + Google)',
        app: 'service',
        method: 'GET',
        path: '/api/v1/me/logins',
        cookies: personCookies,
        authenticatedGet: true,
      },
      {
        id: 'events-ceiling',
        label: 'GET events page 1 — ceiling (Express + helmet, constant page)',
        app: 'ceiling',
        method: 'GET',
        path: eventsPath,
        authenticatedGet: false,
      },
      { id: 'events-first', label: `GET events page 1 (limit ${PAGE_LIMIT})`, app: 'service', method: 'GET', path: eventsPath, authenticatedGet: true },
      {
        id: 'events-series',
        label: `GET events page 1 (limit ${PAGE_LIMIT}) of a household with 50 active series`,
        app: 'service',
        method: 'GET',
        path: `/api/v1/households/${seriesHouseholdId}/events?limit=${PAGE_LIMIT}`,
        authenticatedGet: true,
      },
      {
        id: 'events-deep',
        label: `GET events page ${deepPage.toLocaleString('en')} of ${opts.events.toLocaleString('en')}`,
        app: 'service',
        method: 'GET',
        path: deepPath,
        authenticatedGet: true,
      },
      {
        // The same write without a rename: nothing enqueued (issue 32's anchor for the cost of the
        // rename's news, measured in the same run).
        id: 'patch-household-settings',
        label: 'PATCH household, no rename (write)',
        app: 'service',
        method: 'PATCH',
        path: hh,
        bodies: [{ maxNewDishesPerWeek: 4 }, { maxNewDishesPerWeek: 5 }],
        authenticatedGet: false,
      },
      {
        id: 'patch-household',
        label: 'PATCH household (write)',
        app: 'service',
        method: 'PATCH',
        path: hh,
        bodies: [
          { name: 'Bench A', maxNewDishesPerWeek: 4 },
          { name: 'Bench B', maxNewDishesPerWeek: 5 },
        ],
        authenticatedGet: false,
      },
      ...spreadWrites('patch-spread', 'PATCH household (rename), each connection its own household', 'PATCH', (x, turn) => ({
        path: `/api/v1/households/${x.household}`,
        body: { name: `Spread ${turn ? 'B' : 'A'}` },
      })),
      ...spreadWrites('post-event-spread', 'POST event, each connection its own household', 'POST', (x) => ({
        path: `/api/v1/households/${x.household}/events`,
        body: SPREAD_EVENT,
      })),
      ...spreadWrites('put-event-spread', 'PUT event, each connection its own household', 'PUT', (x, turn) => ({
        path: `/api/v1/households/${x.household}/events/${x.eventId}`,
        body: { ...SPREAD_EVENT, notes: `put ${turn ? 'B' : 'A'}` },
      })),
    ] satisfies Scenario[]
  ).filter((s) => wanted(s.id));
}
