import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { gunzipSync } from 'node:zlib';
import type { PlannedDinner, PlannedDinners } from '@svc/contracts';
import { ApiRouter, ManualClock } from '@svc/http-kit';
import { buildTestApp, createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import { foldLines as icalGeneratorFold } from 'ical-generator';
import request from 'supertest';
import { foldLines } from '../src/ics.js';
import {
  CalendarFeedService,
  type CalendarFeedServiceOptions,
  createRouter,
  HOUSEHOLD_BOUNDS,
  MealEventsService,
  migrations,
  ObjectionCalendarFeedStore,
  ObjectionMealEventStore,
  SeriesStore,
} from '../src/index.js';
import { MemoryAccess } from './helpers.js';

/** A PlannedDinners of the test's own: dinners by household, and a version moved by every change. */
class MemoryDinners implements PlannedDinners {
  readonly byHousehold = new Map<string, PlannedDinner[]>();
  private versions = new Map<string, number>();
  set(householdId: string, dinners: PlannedDinner[]): void {
    this.byHousehold.set(householdId, dinners);
    this.versions.set(householdId, (this.versions.get(householdId) ?? 0) + 1);
  }
  async version(householdId: string): Promise<string> {
    return String(this.versions.get(householdId) ?? 0);
  }
  async dinners(householdId: string): Promise<PlannedDinner[]> {
    return this.byHousehold.get(householdId) ?? [];
  }
}

/** GET over a real socket, gzip accepted and not inflated (the test process should not pay for the client's side). */
function fetchRaw(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, headers: { 'accept-encoding': 'gzip', ...headers }, agent: false }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (b: Buffer) => parts.push(b));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts), ms: performance.now() - started }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/** The token of a feed URL's path (`/calendar/<token>.ics`). */
const tokenOf = (path: string) => path.slice('/calendar/'.length, -'.ics'.length);

/** This process's children running feed-process (Linux: /proc), by pid. */
function renderers(): string[] | undefined {
  if (!fs.existsSync('/proc/self/stat')) return undefined;
  return fs.readdirSync('/proc').filter((pid) => {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      return ppid === process.pid && fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('feed-process');
    } catch {
      return false;
    }
  });
}

/** Runs `work` while watching `renderers()` every 10 ms: its result, the processes seen, the most at once. */
async function watchingRenderers<T>(work: () => Promise<T>): Promise<{ result: T; seen: number; most: number }> {
  const seen = new Set<string>();
  let most = 0;
  const watching = setInterval(() => {
    const now = renderers() ?? [];
    for (const pid of now) seen.add(pid);
    most = Math.max(most, now.length);
  }, 10);
  try {
    return { result: await work(), seen: seen.size, most };
  } finally {
    clearInterval(watching);
  }
}

describe('calendar feed under load, planned dinners, line folding', () => {
  let db: TestDatabase;
  // Sunday 22 November 2026, 10:00 in Oslo.
  const clock = new ManualClock('2026-11-22T09:00:00.000Z');
  const access = new MemoryAccess();
  const dinners = new MemoryDinners();
  const household = randomUUID();
  const owner = randomUUID();
  let store: ObjectionMealEventStore;
  let calendar: CalendarFeedService;
  let firstPages = 0;
  /** The feed path of the largest household (set by the load test). */
  let largestPath = '';

  before(async () => {
    db = await createTestDatabase([migrations]);
    access.set(household, owner, 'Owner');
    store = new ObjectionMealEventStore(db.knex);
    // Counts the renderings: each reads the window from its first page.
    const window = store.calendarWindow.bind(store);
    store.calendarWindow = (h, from, to, page) => {
      if (!page?.after) firstPages++;
      return window(h, from, to, page);
    };
    calendar = calendarWith({ dinners });
  });
  after(() => db.destroy());

  function appWith(service: MealEventsService) {
    const health = new ApiRouter();
    health.route({ method: 'get', path: '/healthz', operationId: 'healthz', summary: 'alive', responses: { 200: { description: 'alive' } } }, (_req, res) => {
      res.json({ status: 'ok' });
    });
    return buildTestApp({ routers: [createRouter({ service, calendar }), health] });
  }

  /** A calendar service on this file's store, clock and access, with `options` over the defaults. */
  const calendarWith = (options: Partial<CalendarFeedServiceOptions> = {}) =>
    new CalendarFeedService({
      feeds: new ObjectionCalendarFeedStore(db.knex),
      events: store,
      clock,
      access,
      profiles: access.profiles,
      publicBaseUrl: 'https://meals.example.com',
      tokenSecret: 'test calendar secret',
      ...options,
    });

  /** The events service on this file's store, clock and access. */
  const eventsService = () =>
    new MealEventsService({
      store,
      clock,
      access,
      memberIds: access.memberIds,
      cursorSecret: 's',
      series: new SeriesStore(db.knex),
      profiles: access.profiles,
    });

  it('folds exactly as ical-generator does, without its cost', () => {
    const samples = [
      'a'.repeat(300),
      'æøå'.repeat(90),
      `x${'😀'.repeat(40)}y`,
      `SUMMARY:${'ab😀c\ud800d\udc00e'.repeat(30)}`,
      '',
      'short',
      `${'A\r\nB'.repeat(3)}${'é'.repeat(100)}`,
    ];
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const pick = ['a', 'é', '中', '😀', '\ud800', '\udc00', '\r\n', ' '];
    for (let k = 0; k < 200; k++) samples.push(Array.from({ length: Math.floor(next() * 400) }, () => pick[Math.floor(next() * pick.length)]).join(''));
    for (const s of samples) expect(foldLines(s)).to.equal(icalGeneratorFold(s));
  });

  it('shows the current plans’ dinners (one VEVENT each, the dish’s name, the serving time in the zone, an hour); a change of plans is a new ETag', async () => {
    const h = randomUUID();
    access.set(h, owner, 'Owner');
    const app = appWith(eventsService());
    const { url } = await calendar.create({ userId: owner }, h);
    const path = new URL(url).pathname;
    const planId = randomUUID();
    dinners.set(h, [
      { planId, date: '2026-11-24', servingTime: '17:30', dishName: 'Fish cakes, with a name long enough to be folded at seventy-five octets: æøå' },
      { planId, date: '2026-11-25', servingTime: '18:00', dishName: 'Taco' },
      // Outside the window (366 days after today): not shown.
      { planId, date: '2028-01-03', servingTime: '18:00', dishName: 'Too late' },
    ]);
    const first = await request(app).get(path).expect(200);
    const text = first.text;
    const unfolded = text.replace(/\r\n /g, '');
    expect(text.match(/BEGIN:VEVENT/g)).to.have.length(2);
    expect(unfolded).to.include(`UID:dinner-${planId}-2026-11-24@meals.example.com`);
    expect(text).to.include('DTSTART;TZID=Europe/Oslo:20261124T173000\r\nDURATION:PT1H');
    expect(text).to.include('SUMMARY:Taco\r\n');
    expect(unfolded).to.include('SUMMARY:Fish cakes\\, with a name long enough to be folded at seventy-five octets: æøå');
    expect(text).to.include('BEGIN:VTIMEZONE').and.not.include('Too late');
    for (const line of text.split('\r\n')) expect(Buffer.byteLength(line)).to.be.at.most(75);
    await request(app)
      .get(path)
      .set('If-None-Match', first.headers.etag as string)
      .expect(304);
    dinners.set(h, [{ planId, date: '2026-11-25', servingTime: '18:00', dishName: 'Pizza' }]);
    const changed = await request(app)
      .get(path)
      .set('If-None-Match', first.headers.etag as string)
      .expect(200);
    expect(changed.text).to.include('SUMMARY:Pizza').and.not.include('Taco');
    // Without a PlannedDinners the feed has its events only.
    const plain = calendarWith();
    expect(await (await plain.ics(tokenOf(path))).body()).to.not.include('BEGIN:VEVENT');
  });

  it('the largest household the bounds allow, its feed fetched ten times at once: rendered once, in slices (the event loop is never held), /healthz answers meanwhile', async function () {
    this.timeout(600_000);
    const service = eventsService();
    const app = appWith(service);
    // The audit's load case within the bounds: daily series with the longest notes (one line: all of it is the SUMMARY) and the most participants, with the longest names.
    const body = (over: Record<string, unknown>) => ({
      date: '2026-11-22',
      eventType: 'Activity',
      servingTime: '18:00',
      availableCookingMinutes: 30,
      notes: 'N'.repeat(2000),
      participants: Array.from({ length: 50 }, (_, i) => ({ memberId: null, name: `${String(i).padStart(2, '0')}${'p'.repeat(98)}` })),
      ...over,
    });
    const post = (b: object) => request(app).post(`/api/v1/households/${household}/events`).set('X-Test-User', owner).send(b);
    // 13 daily series without end (367 occurrences each, today's included), then one of 229: 5,000 events.
    for (let i = 0; i < 13; i++) await post(body({ repeat: { frequency: 'daily' } })).expect(201);
    await post(body({ repeat: { frequency: 'daily', count: 229 } })).expect(201);
    expect((await post(body({ date: '2027-06-01' })).expect(409)).body.code).to.equal('limit_reached');
    const n = (await db.knex('meal_events').where('household_id', household).count<{ n: string }[]>('* as n'))[0]!.n;
    expect(Number(n)).to.equal(HOUSEHOLD_BOUNDS.liveEvents);

    const { url } = await calendar.create({ userId: owner }, household);
    const path = new URL(url).pathname;
    largestPath = path;
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as AddressInfo;
    const health: number[] = [];
    const loop = monitorEventLoopDelay({ resolution: 10 });
    try {
      firstPages = 0;
      let polling = true;
      const poller = (async () => {
        while (polling) {
          const r = await fetchRaw(port, '/healthz');
          expect(r.status).to.equal(200);
          health.push(r.ms);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })();
      loop.enable();
      const started = performance.now();
      const feeds = await Promise.all(Array.from({ length: 10 }, () => fetchRaw(port, path)));
      const tookMs = performance.now() - started;
      loop.disable();
      polling = false;
      await poller;

      expect(feeds.map((f) => f.status)).to.deep.equal(Array(10).fill(200));
      expect(new Set(feeds.map((f) => f.headers.etag)).size).to.equal(1);
      expect(feeds[0]!.headers['content-encoding']).to.equal('gzip');
      expect(firstPages, 'renderings').to.equal(1);
      const text = gunzipSync(feeds[0]!.body).toString('utf8');
      expect(text.match(/BEGIN:VEVENT/g)).to.have.length(HOUSEHOLD_BOUNDS.liveEvents);
      const maxDelayMs = loop.max / 1e6;
      console.log(
        `      feed ${(Buffer.byteLength(text) / 1e6).toFixed(1)} MB (${(feeds[0]!.body.length / 1e6).toFixed(1)} MB gzip), ten fetches in ${Math.round(tookMs)} ms; ` +
          `event loop delay max ${maxDelayMs.toFixed(1)} ms; /healthz ${health.length} answers, slowest ${Math.max(...health).toFixed(1)} ms`,
      );
      // Rendered in one piece, this feed holds the event loop for seconds; in slices, the loop's
      // longest wait is a slice, a garbage collection, or the time the OS gives the process none of
      // a busy machine's cores. The bound is generous for the last (issue 47's target is 50 ms on an
      // instance of its own): it fails a rendering that holds the loop, not a busy machine.
      expect(maxDelayMs).to.be.below(1_000);
      expect(health.length).to.be.greaterThan(0);

      // The worker reading the window itself over a connection of its own (what the host does): the same text, no page read here.
      const reading = calendarWith({ dinners, database: { url: db.url }, renderNice: 19 });
      expect(await (await reading.ics(tokenOf(path))).body()).to.equal(text);
      expect(firstPages, 'pages read on this thread').to.equal(1);

      // Unchanged: a 304 without rendering, and a plain repeat from the cache.
      const again = await fetchRaw(port, path, { 'if-none-match': String(feeds[0]!.headers.etag) });
      expect(again.status).to.equal(304);
      expect((await fetchRaw(port, path)).status).to.equal(200);
      expect(firstPages, 'renderings').to.equal(1);
    } finally {
      loop.disable();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a rendering that outlasts its time is stopped: 503 service_unavailable with Retry-After, the worker gone', async function () {
    if (!largestPath) this.skip();
    const hasty = calendarWith({ renderTimeoutMs: 1 });
    const service = eventsService();
    const app = buildTestApp({ routers: [createRouter({ service, calendar: hasty })] });
    const res = await request(app).get(largestPath).expect(503);
    expect(res.body.code).to.equal('service_unavailable');
    expect(res.headers['retry-after']).to.equal('5');
  });

  it('a rendering that reads its window itself runs in a process of its own; past its time it is killed: 503, the process gone', async function () {
    if (!largestPath) this.skip();
    const service = eventsService();
    // In time: the process renders, and is gone once it answered.
    const inTime = await watchingRenderers(async () => (await calendarWith({ database: { url: db.url } }).ics(tokenOf(largestPath))).body());
    expect(inTime.result.match(/BEGIN:VEVENT/g)).to.have.length(HOUSEHOLD_BOUNDS.liveEvents);
    if (renderers()) {
      expect(inTime.seen, 'a rendering process was seen').to.equal(1);
      expect(renderers(), 'none left').to.deep.equal([]);
    }
    // Past its time: killed, 503 with Retry-After, none left.
    const app = buildTestApp({ routers: [createRouter({ service, calendar: calendarWith({ database: { url: db.url }, renderTimeoutMs: 50 }) })] });
    const res = await request(app).get(largestPath).expect(503);
    expect(res.body.code).to.equal('service_unavailable');
    expect(res.headers['retry-after']).to.equal('5');
    if (renderers()) expect(renderers(), 'none left').to.deep.equal([]);
  });

  it('renders at most rendersAtOnce feeds at once: four households asked at once with one slot render one after another', async function () {
    if (!renderers()) this.skip(); // the processes are counted in /proc
    const oneSlot = calendarWith({ database: { url: db.url }, rendersAtOnce: 1 });
    const tokens: string[] = [];
    for (let i = 0; i < 4; i++) {
      const h = randomUUID();
      const owner = randomUUID();
      access.set(h, owner, 'Owner');
      tokens.push(tokenOf(new URL((await oneSlot.create({ userId: owner }, h)).url).pathname));
    }
    const { result: texts, seen, most } = await watchingRenderers(() => Promise.all(tokens.map(async (t) => (await oneSlot.ics(t)).body())));
    for (const text of texts) expect(text).to.include('BEGIN:VCALENDAR');
    expect(seen, 'renderings seen').to.be.at.least(2);
    expect(most, 'renderings at once').to.equal(1);
  });
});
