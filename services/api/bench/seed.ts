/**
 * The bench's data, seeded through the service's HTTP API (register, household, rules, logins, devices, a
 * token) plus bulk SQL for the events, and the paths and sessions the scenarios send.
 */
import type { TestDatabase } from '@svc/test-support';
import { call, must, sessionCookie } from './http.js';
import { deepPage, log, opts, PAGE_LIMIT, SPREAD_EVENT, wanted } from './options.js';
import type { App } from './processes.js';

/** A household of the spread writes: its account's session on the service and on the naive stack, and its event. */
export interface SpreadHousehold {
  cookie: string;
  naiveCookie: string;
  household: string;
  eventId: string;
}

export type Seeded = Awaited<ReturnType<typeof seed>>;

/** Seeds the bench database through `service` (and the naive stack's logins); hands `ceiling` the real events page 1. */
export async function seed(db: TestDatabase, service: App, naive: App, ceiling: App) {
  // One account (a real bcrypt cost 12 password), its household, a few rules, many events.
  const email = 'bench@example.com';
  const password = 'bench password 1';
  const registered = await call(service.base, 'POST', '/api/v1/auth/register', { email, password, displayName: 'Bench' });
  must(registered, 200, 'register');
  const cookies = [sessionCookie(registered.headers, 'service_session')];
  const created = await call(service.base, 'POST', '/api/v1/households', { name: 'Bench', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' }, cookies[0]);
  must(created, 201, 'create household');
  const householdId = String(created.body.id);
  const rule = (payload: object) => ({ payload, strength: 'Soft', scope: 'Permanent', startDate: null, endDate: null });
  for (const payload of [
    { kind: 'CategoryFrequency', category: 'Fish', minimumPerWeek: 1, maximumPerWeek: 3 },
    { kind: 'CategoryExcludedDays', category: 'Meat', excludedWeekdays: ['Monday'] },
    { kind: 'MaximumActiveCookingTime', minutes: 30, weekdays: ['Tuesday', 'Wednesday'], specificDate: null },
    { kind: 'DinnerTimeOnWeekday', time: '18:30', weekdays: ['Friday'] },
    { kind: 'RepeatAfterDays', days: 14 },
  ]) {
    must(await call(service.base, 'POST', `/api/v1/households/${householdId}/rules`, rule(payload), cookies[0]), 201, `create rule ${payload.kind}`);
  }
  // The deep-paging household is larger than issue 47's bounds allow (50,000 events, 5,000 from a
  // month ago on), so the bulk seed raises meal-events' own trigger bounds for its transaction only.
  await db.knex.transaction(async (trx) => {
    await trx.raw(`select set_config('meal_events.bounds', ?, true)`, [JSON.stringify({ liveEvents: opts.events + 1, events: opts.events + 1 })]);
    await trx.raw(
      `insert into meal_events (id, household_id, date, event_type, serving_time, available_cooking_minutes, notes, participants, created_at, updated_at)
     select gen_random_uuid(), ?, date '2026-01-01' + (g % 3650), (array['Guests','EatingOut','Away','Activity'])[1 + g % 4], time '18:00' + (g % 7) * interval '15 minutes',
            30, 'bench event ' || g, jsonb_build_array(jsonb_build_object('memberId', null, 'name', 'Guest ' || g)), now(), now()
     from generate_series(1, ?) g`,
      [householdId, opts.events],
    );
  });
  // A second household with 50 active series (issue 33): weekly, every other week, daily every 3rd/7th day and monthly, each
  // written a year ahead through POST …/events with `repeat` (the events page of that household is the `events-series` scenario).
  const seriesHousehold = await call(
    service.base,
    'POST',
    '/api/v1/households',
    { name: 'Bench series', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' },
    cookies[0],
  );
  must(seriesHousehold, 201, 'create series household');
  const seriesHouseholdId = String(seriesHousehold.body.id);
  const seriesStarted = performance.now();
  const today = new Date().toISOString().slice(0, 10);
  const weekday = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][new Date(`${today}T12:00:00Z`).getUTCDay()];
  const repeats = [
    { frequency: 'weekly', byDay: [weekday] },
    { frequency: 'weekly', interval: 2 },
    { frequency: 'daily', interval: 3 },
    { frequency: 'daily', interval: 7 },
    { frequency: 'monthly' },
  ];
  for (let i = 0; i < 50; i++) {
    const body = {
      date: today,
      eventType: 'Activity',
      servingTime: `${String(15 + (i % 5)).padStart(2, '0')}:${String((i * 7) % 60).padStart(2, '0')}`,
      availableCookingMinutes: 20,
      notes: `bench series ${i}`,
      participants: [],
      repeat: repeats[i % repeats.length],
    };
    must(await call(service.base, 'POST', `/api/v1/households/${seriesHouseholdId}/events`, body, cookies[0]), 201, `create series ${i}`);
  }
  log(`seeded 50 series (a year of occurrences each) in ${((performance.now() - seriesStarted) / 50).toFixed(1)} ms per POST on average`);
  await db.knex.raw('analyze');

  // One session per connection, each by a real login (as the clients would have).
  const sessions = Math.max(opts.connections, opts.stormConnections);
  log(`logging ${sessions - 1} more sessions in (bcrypt cost 12)…`);
  for (let i = 1; i < sessions; i += 4) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(4, sessions - i) }, () => call(service.base, 'POST', '/api/v1/auth/login', { email, password })),
    );
    for (const res of batch) {
      must(res, 200, 'login');
      cookies.push(sessionCookie(res.headers, 'service_session'));
    }
  }
  const naiveCookies: string[] = [];
  for (let i = 0; i < sessions; i++) {
    const res = await call(naive.base, 'POST', '/login', { email });
    must(res, 200, 'naive login');
    naiveCookies.push(sessionCookie(res.headers, 'naive_session'));
  }

  // Page N of the events: walk the cursors once.
  const eventsPath = `/api/v1/households/${householdId}/events?limit=${PAGE_LIMIT}`;
  let deepPath = eventsPath;
  for (let page = 1; page < deepPage; page++) {
    const res = await call(service.base, 'GET', deepPath, undefined, cookies[0]);
    must(res, 200, `events page ${page}`);
    const next = res.body.nextCursor;
    if (typeof next !== 'string') throw new Error(`events page ${page} has no nextCursor`);
    deepPath = `${eventsPath}&cursor=${encodeURIComponent(next)}`;
  }
  const deepItems = (await call(service.base, 'GET', deepPath, undefined, cookies[0])).body.items as { id: string }[];
  // Page N of the household's changes feed (issue 34): every event above is a change. Its cursor is
  // the nextCursor after (N - 1) × 100 changes (signed to the household: walked through the feed).
  const changesPage = Math.max(2, Math.min(1000, Math.floor(opts.events / PAGE_LIMIT)));
  /** The feed of `household` walked `rows` changes on (all of it: Infinity); the cursor there. */
  const walkChanges = async (household: string, rows: number) => {
    let since: string | undefined;
    for (let left = rows; left > 0; ) {
      const limit = Math.min(500, left);
      const res = await call(
        service.base,
        'GET',
        `/api/v1/households/${household}/changes?limit=${limit}${since ? `&since=${encodeURIComponent(since)}` : ''}`,
        undefined,
        cookies[0],
      );
      must(res, 200, 'changes walk');
      since = String(res.body.nextCursor);
      if ((res.body.items as unknown[]).length < limit) break;
      left -= limit;
    }
    return since!;
  };
  const changesSince = encodeURIComponent(await walkChanges(householdId, (changesPage - 1) * PAGE_LIMIT));
  // The poll with nothing new: the series household (nothing writes it during the run) at its last cursor.
  const pollSince = encodeURIComponent(await walkChanges(seriesHouseholdId, Number.POSITIVE_INFINITY));

  const eventId = deepItems[0]!.id;

  // A phone per session (a device belongs to the login that registered it): GET /me/devices/{token}
  // sends each token with its own session.
  const devicePaths: string[] = [];
  for (const [i, cookie] of cookies.entries()) {
    const token = `bench-device-${i}`;
    must(await call(service.base, 'PUT', '/api/v1/me/devices', { token, platform: i % 2 ? 'android' : 'ios', provider: null }, cookie), 200, 'register device');
    devicePaths.push(`/api/v1/me/devices/${token}`);
  }

  // The household's calendar feed (GET …/calendar-feed answers its URL).
  must(await call(service.base, 'POST', `/api/v1/households/${householdId}/calendar-feed`, undefined, cookies[0]), 201, 'calendar feed');
  // GET /me/sessions and /me/logins list the caller's sessions and identities: measured with a
  // person of their own, signed in on three devices with one Google identity linked (the bench
  // account has a session per connection, a list no person has), the connections sharing them.
  const person = { email: 'bench-person@example.com', password: 'bench password 2' };
  const personRegistered = await call(service.base, 'POST', '/api/v1/auth/register', { ...person, displayName: 'Bench person' });
  must(personRegistered, 200, 'register person');
  const personCookies = [sessionCookie(personRegistered.headers, 'service_session')];
  for (let i = 0; i < 2; i++) {
    const res = await call(service.base, 'POST', '/api/v1/auth/login', person);
    must(res, 200, 'person login');
    personCookies.push(sessionCookie(res.headers, 'service_session'));
  }
  await db.knex.raw(
    `insert into account_identities (account_id, provider, subject, email, email_verified, created_at)
     select id, 'google', 'bench-google-subject', email, true, now() from accounts where email_normalized = ?`,
    [person.email],
  );

  // The spread writes (issue 44): each connection on a household of its own, an account per
  // household (so GET /me's answer stays the bench account's), one event each to PUT; the naive
  // stack signs the same accounts in (its session) and does the same writes on the same rows.
  const spreadIds = ['patch-spread', 'patch-spread-naive', 'post-event-spread', 'post-event-spread-naive', 'put-event-spread', 'put-event-spread-naive'];
  const spread: SpreadHousehold[] = [];
  if (spreadIds.some(wanted)) {
    const spreadStarted = performance.now();
    for (let i = 0; i < opts.connections; i += 4) {
      const made = await Promise.all(
        Array.from({ length: Math.min(4, opts.connections - i) }, async (_, k) => {
          const who = { email: `bench-spread-${i + k}@example.com`, password: 'bench password 3' };
          const res = await call(service.base, 'POST', '/api/v1/auth/register', { ...who, displayName: `Spread ${i + k}` });
          must(res, 200, 'register spread account');
          const cookie = sessionCookie(res.headers, 'service_session');
          const hhRes = await call(
            service.base,
            'POST',
            '/api/v1/households',
            { name: `Spread ${i + k}`, timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' },
            cookie,
          );
          must(hhRes, 201, 'create spread household');
          const household = String(hhRes.body.id);
          const ev = await call(service.base, 'POST', `/api/v1/households/${household}/events`, SPREAD_EVENT, cookie);
          must(ev, 201, 'create spread event');
          const naiveRes = await call(naive.base, 'POST', '/login', { email: who.email });
          must(naiveRes, 200, 'naive login (spread)');
          return { cookie, naiveCookie: sessionCookie(naiveRes.headers, 'naive_session'), household, eventId: String(ev.body.id) };
        }),
      );
      spread.push(...made);
    }
    log(`seeded ${spread.length} households for the spread writes in ${Math.round(performance.now() - spreadStarted)} ms`);
  }

  // The transport floor: the ceiling answers the service's real page 1 as a constant. Its answer is
  // checked byte for byte (and its Content-Type), else it would measure some other page.
  let eventsPageBytes: number | undefined;
  if (wanted('events-ceiling')) {
    const raw = async (base: string, cookie?: string) => {
      const res = await fetch(base + eventsPath, { headers: cookie ? { cookie } : {} });
      return { status: res.status, type: res.headers.get('content-type'), body: Buffer.from(await res.arrayBuffer()) };
    };
    const real = await raw(service.base, cookies[0]);
    must({ status: real.status, body: real.body.toString() }, 200, 'events page 1');
    if (!(await ceiling.fixture('events-page', real.body.toString('utf8')))) throw new Error('the ceiling took no events page');
    const copy = await raw(ceiling.base);
    if (copy.status !== 200 || copy.type !== real.type || !copy.body.equals(real.body)) {
      throw new Error(
        `the ceiling's events page differs from the service's: ${copy.status} ${copy.type} ${copy.body.length} bytes vs ${real.status} ${real.type} ${real.body.length} bytes`,
      );
    }
    eventsPageBytes = real.body.length;
    log(`ceiling holds events page 1: ${eventsPageBytes} bytes, ${real.type}, identical to the service's`);
  }
  log(`seeded: household ${householdId}, 5 rules, ${opts.events} events (page ${deepPage} holds ${deepItems.length}), ${sessions} sessions per app`);
  // One personal access token of the bench account (households:read), made with its session.
  const madeToken = await call(service.base, 'POST', '/api/v1/me/tokens', { name: 'bench', scopes: ['households:read'] }, cookies[0]);
  must(madeToken, 201, 'create token');
  const bearer = { authorization: `Bearer ${String(madeToken.body.token)}` };
  return {
    email,
    password,
    cookies,
    naiveCookies,
    householdId,
    seriesHouseholdId,
    eventsPath,
    deepPath,
    changesPage,
    changesSince,
    pollSince,
    eventId,
    devicePaths,
    personCookies,
    spread,
    eventsPageBytes,
    bearer,
  };
}
