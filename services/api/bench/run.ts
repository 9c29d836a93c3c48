/**
 * `npm run bench`: the service against its anchors, in one run, over real HTTP (wrk when installed, else autocannon: load.ts).
 *
 * Five processes of their own, each with a whole event loop, all on the bench's Node (checked), on
 * one bench database (TEST_DATABASE_URL or DATABASE_URL, else an embedded PostgreSQL; a scratch
 * database dropped at the end): the service (serve-service.ts: buildService + listen), the naive
 * anchor (naive-app.ts: express-session + connect-pg-simple, re-saved on every hit; its writes one
 * statement in a transaction on a pool), the ceiling of an authenticated read (ceiling-db-app.ts:
 * Express + helmet, the session cookie, ONE prepared round trip with the JSON built by PostgreSQL),
 * the constant anchor (ceiling-app.ts: Express + helmet, constant JSON; after seeding it is handed
 * the service's real events page 1, byte for byte, to answer as a constant) and bare node:http
 * (bare-app.ts). Data is seeded through the service's HTTP API (register, household, rules,
 * logins), plus bulk SQL for the events.
 *
 * Scenarios (--rounds rounds of --seconds at --connections, median reported; rounds interleave
 * across scenarios, each round starting the reads at another point of their list, so machine noise spreads evenly; in each round the scenarios that write run
 * last and PostgreSQL is settled after them — VACUUM, CHECKPOINT — so their background work is not
 * billed to a read): GET /me on the three apps, GET household,
 * GET rules, GET rules/defaults, GET time-zones, GET members, GET one event, GET one of the
 * caller's phones (a device registered per session, each sent with its own session), GET calendar-feed, GET changes page 1, page N
 * and a poll with nothing new, the spread writes (PATCH household, POST and PUT event, each connection on its own household, beside
 * the naive stack doing the same write),
 * GET /me/sessions and /me/logins (a person of their own: three sessions, a Google identity), GET events page 1 and page N (limit 100, N = 1,000 of 100,000 events), the ceiling
 * answering that page 1 as a constant (the transport floor of a 100-event page, ~35 kB: the
 * verdict on events page 1 shows it as % of the ceiling's GET /me, and the service's page 1 as %
 * of it), PATCH household; then a login storm (20 concurrent real logins, bcrypt cost 12, while
 * GET /me runs at 20 connections) and the service's RSS after each of three rounds of mixed load.
 *
 *   npm run bench                                  # full run (about 20 minutes)
 *   npm run bench -- --quick                       # smoke run: 1 round of 3 s, 10,000 events, RSS 3 × 10 s
 *   npm run bench -- --json out.json               # the same results as JSON
 *   npm run bench -- --profile prof --only me      # service started with --cpu-prof per scenario
 *   npx tsx services/api/bench/profile-top.ts prof/me.cpuprofile   # top self time
 *
 * Options: --seconds 10 --connections 50 --rounds 3 --events 100000 --rss-seconds 60
 * --storm-logins 20 --storm-connections 20 --fanout-households 1000 --fanout-latency-ms 50 --driver wrk|autocannon --only <ids> (fan-out, me-bare, me-ceiling,
 * me-ceiling-db, me-naive, me, household, me-bearer, household-bearer, rules, rules-defaults, time-zones, members, event, device, calendar-feed, sessions,
 * logins, events-ceiling, events-first, events-series, events-deep, changes, changes-deep, changes-empty, patch-household, patch-household-settings,
 * patch-spread, post-event-spread, put-event-spread and each spread write's -naive, storm, rss).
 * Diagnostics: BENCH_SERVICE_FLAGS='--trace-gc' adds node flags to the service process only;
 * BENCH_STDOUT=1 keeps each process's stdout in /tmp/bench-<name>.log; HEAP_GROWING_PERCENT is
 * passed to the service as main reads it.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createTestDatabase } from '@svc/test-support';
import { SERVICE_ENV, SERVICE_NODE_FLAGS } from '../src/heap.js';
import { type ChildStats, type HarnessRequest, postgresCpuMs, rssKb } from './harness.js';
import { generatorCpuMs, type LoadSpec, load as loadWith, pickDriver } from './load.js';
import { report as profileReport } from './profile-top.js';

// ---------------------------------------------------------------------------------------------
// Options

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string' },
    connections: { type: 'string' },
    rounds: { type: 'string' },
    events: { type: 'string' },
    'rss-seconds': { type: 'string' },
    'storm-logins': { type: 'string' },
    'storm-connections': { type: 'string' },
    json: { type: 'string' },
    profile: { type: 'string' },
    only: { type: 'string' },
    'fanout-households': { type: 'string' },
    'fanout-latency-ms': { type: 'string' },
    quick: { type: 'boolean', default: false },
    driver: { type: 'string' },
  },
});
const driver = pickDriver(args.driver);
const quick = args.quick === true;
const num = (v: string | undefined, full: number, q: number = full) => (v === undefined ? (quick ? q : full) : Number(v));
const opts = {
  seconds: num(args.seconds, 10, 3),
  connections: num(args.connections, 50),
  rounds: num(args.rounds, 3, 1),
  events: num(args.events, 100_000, 10_000),
  rssSeconds: num(args['rss-seconds'], 60, 10),
  rssRounds: 3,
  stormLogins: num(args['storm-logins'], 20),
  stormConnections: num(args['storm-connections'], 20),
  warmupSeconds: quick ? 1 : 2,
  quick,
  profile: args.profile ? path.resolve(args.profile) : undefined,
  only: args.only ? new Set(args.only.split(',').map((s) => s.trim())) : undefined,
};
const PAGE_LIMIT = 100;
/** The event the spread writes POST and PUT (each connection on its own household). */
const SPREAD_EVENT = { date: '2026-12-01', eventType: 'Guests', servingTime: '18:00', availableCookingMinutes: 30, notes: 'spread', participants: [] };
const deepPage = Math.max(2, Math.min(1000, Math.floor(opts.events / PAGE_LIMIT)));
const wanted = (id: string) => !opts.only || opts.only.has(id);
if (opts.profile) fs.mkdirSync(opts.profile, { recursive: true });

const started = new Date();
const loadBefore = os.loadavg();
const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

// ---------------------------------------------------------------------------------------------
// Measured processes

// Compiled (npm run bench: bench/dist/bench/*.js, run by plain node like production) or under tsx.
const here = path.dirname(fileURLToPath(import.meta.url));
const ext = path.extname(fileURLToPath(import.meta.url));

// The fan-out scenario (issue 32): push deliveries to the local FCM fake from one and two job-runner
// processes, on a database of its own (bench/background.ts prints its table and verdicts). Last, after
// the HTTP scenarios' processes have stopped: its 1,000 households' writes leave PostgreSQL busy
// (autovacuum, dirty buffers) for a while, which measured ahead of them cost the reads up to half
// their rate. `--only fan-out` runs it alone.
async function fanOut(): Promise<number> {
  const fanOutArgs = ['--fanout-households', String(num(args['fanout-households'], 1000)), '--fanout-latency-ms', String(num(args['fanout-latency-ms'], 50))];
  const child = fork(path.join(here, `background${ext}`), ['--only', 'fan-out', ...fanOutArgs], {
    execArgv: process.execArgv,
    stdio: 'inherit',
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) log(`fan-out scenario exited with ${code}`);
  return code ?? 1;
}
// The planner (issue 46): CPU per run beside the bare solve, and a queue of runs drained (bench/planner.ts). `--only planner` runs it alone.
async function plannerBench(): Promise<number> {
  const child = fork(path.join(here, `planner${ext}`), process.argv.slice(2), { execArgv: process.execArgv, stdio: 'inherit' });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) log(`planner scenario exited with ${code}`);
  return code ?? 1;
}
if (opts.only && [...opts.only].every((id) => id === 'planner')) process.exit(await plannerBench());
if (opts.only && [...opts.only].every((id) => id === 'fan-out')) process.exit(await fanOut());
const sessionSecret = randomBytes(36).toString('base64url');

/** A request to the harness without its id (App.ask numbers it). */
type HarnessMessage = HarnessRequest extends infer R ? (R extends unknown ? Omit<R, 'id'> : never) : never;

class App {
  private pending = new Map<number, (v: unknown) => void>();
  private nextId = 1;
  private constructor(
    readonly name: string,
    readonly proc: ChildProcess,
    readonly base: string,
  ) {
    proc.on('message', (msg: { id: number }) => {
      this.pending.get(msg.id)?.(msg);
      this.pending.delete(msg.id);
    });
  }

  /**
   * Waits until the process is idle: less than 5 % of a core (all its threads: bcrypt's included)
   * over 500 ms. False when it is still busy after 30 s.
   */
  async waitIdle(): Promise<boolean> {
    const sliceMs = 500;
    let last = await this.stats();
    for (let waited = 0; waited < 30_000; waited += sliceMs) {
      await new Promise((resolve) => setTimeout(resolve, sliceMs));
      const now = await this.stats();
      const cpuMs = (now.cpu.user - last.cpu.user + now.cpu.system - last.cpu.system) / 1000;
      if (cpuMs < 0.05 * sliceMs) return true;
      last = now;
    }
    return false;
  }

  static async start(name: string, file: string, databaseUrl: string, cpuProfile?: string): Promise<App> {
    const execArgv = [...process.execArgv];
    // The service runs as `npm start` runs it; BENCH_SERVICE_FLAGS come after, so they can override.
    if (file === 'serve-service') execArgv.push(...SERVICE_NODE_FLAGS);
    if (file === 'serve-service' && process.env.BENCH_SERVICE_FLAGS) execArgv.push(...process.env.BENCH_SERVICE_FLAGS.split(' '));
    if (cpuProfile && opts.profile) execArgv.push('--cpu-prof', `--cpu-prof-dir=${opts.profile}`, `--cpu-prof-name=${cpuProfile}.cpuprofile`);
    const proc = fork(path.join(here, `${file}${ext}`), [], {
      execArgv,
      env: {
        ...(file === 'serve-service' ? SERVICE_ENV : {}),
        ...process.env,
        NODE_ENV: 'production',
        BENCH_DATABASE_URL: databaseUrl,
        SESSION_SECRET: sessionSecret,
      },
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    });
    const port = await new Promise<number>((resolve, reject) => {
      let out = '';
      const onData = (chunk: Buffer) => {
        out += chunk.toString();
        const m = /^port=(\d+)$/m.exec(out);
        if (m) resolve(Number(m[1]));
      };
      proc.stdout!.on('data', onData);
      proc.once('exit', (code) => reject(new Error(`${name} exited with ${code} before listening`)));
      setTimeout(() => reject(new Error(`${name} did not listen within 60 s`)), 60_000).unref();
    });
    if (process.env.BENCH_STDOUT) proc.stdout!.pipe(fs.createWriteStream(`/tmp/bench-${name}.log`));
    else proc.stdout!.resume();
    return new App(name, proc, `http://127.0.0.1:${port}`);
  }

  get pid(): number {
    return this.proc.pid!;
  }

  private ask<T>(msg: HarnessMessage): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve) => {
      this.pending.set(id, resolve as (v: unknown) => void);
      this.proc.send({ id, ...msg } satisfies HarnessRequest);
    });
  }

  stats(): Promise<ChildStats> {
    return this.ask<ChildStats>({ cmd: 'stats' });
  }

  async resetEventLoopDelay(): Promise<void> {
    await this.ask({ cmd: 'eld-reset' });
  }

  /** Hands the process data made while seeding; false when it takes no fixture of that name. */
  async fixture(name: string, body: string): Promise<boolean> {
    return (await this.ask<{ ok: boolean }>({ cmd: 'fixture', name, body })).ok;
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode !== null) return;
    const exited = new Promise((resolve) => this.proc.once('exit', resolve));
    this.proc.send({ id: 0, cmd: 'exit' } satisfies HarnessRequest);
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  }
}

// ---------------------------------------------------------------------------------------------
// HTTP helpers

async function call(base: string, method: string, url: string, body?: unknown, cookie?: string, headers?: Record<string, string>) {
  const res = await fetch(base + url, {
    method,
    headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = text;
  }
  return { status: res.status, headers: res.headers, body: json as Record<string, unknown> };
}

function sessionCookie(headers: Headers, name: string): string {
  const found = headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
  if (!found) throw new Error(`no ${name} cookie in the answer`);
  return found.split(';')[0]!;
}

function must(res: { status: number; body: unknown }, status: number, what: string) {
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
}

// ---------------------------------------------------------------------------------------------
// Load

/** A scenario's load, with the driver this run uses. */
const load = (spec: LoadSpec) => loadWith(driver, spec);

const median = (xs: number[]) => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!s.length) return Number.NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const cpuMs = (a: ChildStats, b: ChildStats) => (b.cpu.user - a.cpu.user + b.cpu.system - a.cpu.system) / 1000;

// ---------------------------------------------------------------------------------------------
// Set-up: database, the three processes, data

if (!process.env.TEST_DATABASE_URL && process.env.DATABASE_URL) process.env.TEST_DATABASE_URL = process.env.DATABASE_URL;
const db = await createTestDatabase();
const apps: App[] = [];
const startApp = async (name: string, file: string, profileName?: string) => {
  const app = await App.start(name, file, db.url, profileName);
  apps.push(app);
  return app;
};
const stopApp = async (app: App) => {
  await app.stop();
  apps.splice(apps.indexOf(app), 1);
};
let exitCode = 0;

try {
  log(`${os.cpus().length} cores, Node ${process.version}, load ${loadBefore.map((l) => l.toFixed(2)).join(' ')}; database ${db.name}`);
  // The service first: its migrations make the tables the naive anchor reads.
  const service = await startApp('service', 'serve-service');
  const naive = await startApp('naive', 'naive-app');
  const ceiling = await startApp('ceiling', 'ceiling-app');
  const ceilingDb = await startApp('ceiling-db', 'ceiling-db-app');
  const bare = await startApp('bare', 'bare-app');
  // Every process on the same Node (the project's: npm runs the bench on node_modules/.bin/node).
  const versions = await Promise.all([service, naive, ceiling, ceilingDb, bare].map(async (a) => `${a.name} ${(await a.stats()).node}`));
  if (new Set(versions.map((v) => v.split(' ').at(-1))).size !== 1 || !versions[0]!.endsWith(process.version))
    throw new Error(`the measured processes run on different Nodes: ${versions.join(', ')} (the bench: ${process.version})`);
  log(
    `service pid ${service.pid} ${service.base}; naive pid ${naive.pid}; ceiling pid ${ceiling.pid}; ceiling-db pid ${ceilingDb.pid}; bare pid ${bare.pid}; all on Node ${process.version}`,
  );

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
  const spread: { cookie: string; naiveCookie: string; household: string; eventId: string }[] = [];
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

  // -------------------------------------------------------------------------------------------
  // Throughput scenarios

  interface Scenario {
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
  const hh = `/api/v1/households/${householdId}`;
  // One personal access token of the bench account (households:read), made with its session.
  const madeToken = await call(service.base, 'POST', '/api/v1/me/tokens', { name: 'bench', scopes: ['households:read'] }, cookies[0]);
  must(madeToken, 201, 'create token');
  const bearer = { authorization: `Bearer ${String(madeToken.body.token)}` };
  // The spread writes: each household twice in a row of requests, so each write really changes its row.
  const twice = <T>(f: (x: (typeof spread)[number], turn: number) => T) => [0, 1].flatMap((turn) => spread.map((x) => f(x, turn)));
  const spreadCookies = (naiveToo: boolean) => twice((x) => (naiveToo ? x.naiveCookie : x.cookie));
  const spreadWrites = (
    id: string,
    label: string,
    method: 'PATCH' | 'POST' | 'PUT',
    request: (x: (typeof spread)[number], turn: number) => { path: string; body: unknown },
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
  const scenarios: Scenario[] = (
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

  interface RoundResult {
    rps: number;
    p50: number;
    p99: number;
    errors: number;
    non2xx: number;
    cpuMsPerRequest: number;
    /** CPU of the load generator (this process) per answered request. */
    clientCpuMsPerRequest: number;
    /** CPU of every PostgreSQL process per answered request. */
    postgresCpuMsPerRequest: number;
  }
  const results = new Map<string, { queries: number | null; rounds: RoundResult[] }>();
  const appFor = { service, naive, ceiling, ceilingDb, bare };
  const cookiesOf = (s: Scenario) => s.cookies ?? (s.app === 'ceiling' || s.app === 'bare' ? [] : s.app === 'naive' ? naiveCookies : cookies);

  async function sampleQueries(s: Scenario, app: App): Promise<number | null> {
    const cookie = cookiesOf(s)[0];
    const before = await app.stats();
    const res = await call(app.base, s.method, s.requests?.[0]?.path ?? s.path, s.requests?.[0]?.body ?? s.bodies?.[0], cookie, s.headers);
    if (res.status >= 300) throw new Error(`${s.id}: sample request answered ${res.status} ${JSON.stringify(res.body)}`);
    if (s.app === 'service') {
      const m = /desc="(\d+) queries"/.exec(res.headers.get('server-timing') ?? '');
      return m ? Number(m[1]) : null;
    }
    const after = await app.stats();
    return (after.queries ?? 0) - (before.queries ?? 0);
  }

  async function round(s: Scenario, app: App, seconds: number): Promise<RoundResult> {
    const before = await app.stats();
    const clientBefore = generatorCpuMs();
    const pgBefore = postgresCpuMs();
    const r = await load({
      base: app.base,
      requests: s.requests
        ? s.requests.map((r) => ({ method: s.method, ...r }))
        : s.paths
          ? s.paths.map((p) => ({ method: s.method, path: p }))
          : (s.bodies ?? [undefined]).map((body) => ({ method: s.method, path: s.path, body })),
      cookies: cookiesOf(s),
      headers: s.headers,
      connections: opts.connections,
      seconds,
    });
    const clientCpu = generatorCpuMs() - clientBefore;
    const pgCpu = postgresCpuMs() - pgBefore;
    const after = await app.stats();
    const answered = r.answered;
    return {
      clientCpuMsPerRequest: answered ? clientCpu / answered : Number.NaN,
      postgresCpuMsPerRequest: answered ? pgCpu / answered : Number.NaN,
      rps: r.rps,
      p50: r.p50,
      p99: r.p99,
      errors: r.errors,
      non2xx: r.non2xx,
      cpuMsPerRequest: answered ? cpuMs(before, after) / answered : Number.NaN,
    };
  }

  /**
   * After writes: the jobs they left (a rename's news) run to the end, and PostgreSQL's deferred
   * work is done now, between rounds, not during the next scenario.
   */
  async function settle(): Promise<void> {
    const drainStarted = performance.now();
    for (;;) {
      const { rows: left } = await db.knex.raw(
        // Not the sign-up mails of the seeded accounts: the bench's service sends no mail.
        `select count(*)::int as n from pgboss.job where state in ('created', 'retry', 'active') and start_after <= now() and name <> 'accounts-mail'`,
      );
      if (left[0].n === 0 || performance.now() - drainStarted > 120_000) {
        if (left[0].n) log(`settle: ${left[0].n} jobs still due after 120 s; going on`);
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    for (const sql of ['vacuum (analyze)', 'checkpoint']) {
      try {
        await db.knex.raw(sql);
      } catch (err) {
        log(`settle: ${sql} failed (${(err as Error).message}); going on`);
      }
    }
  }

  if (opts.profile) {
    // A service process of its own per scenario, so each profile holds one scenario.
    for (const s of scenarios) {
      const app = s.app === 'service' ? await startApp(`service ${s.id}`, 'serve-service', s.id) : appFor[s.app];
      const rounds: RoundResult[] = [];
      await round(s, app, opts.warmupSeconds);
      const queries = await sampleQueries(s, app);
      for (let i = 0; i < opts.rounds; i++) rounds.push(await round(s, app, opts.seconds));
      results.set(s.id, { queries, rounds });
      if (app !== appFor[s.app]) await stopApp(app);
      log(`${s.id}: done (profile ${s.app === 'service' ? path.join(opts.profile, `${s.id}.cpuprofile`) : 'none: anchor'})`);
    }
  } else {
    for (const s of scenarios) {
      // The service's queries per request are sampled after the warm-up (its Server-Timing counts this
      // request's own): the steady state, not the first request's cold caches. The anchors count
      // every query of the process, so theirs are sampled before it (after it, the naive app's
      // session saves still queued from the warm-up would count too).
      const anchorQueries = s.app === 'service' ? null : await sampleQueries(s, appFor[s.app]);
      await round(s, appFor[s.app], opts.warmupSeconds);
      results.set(s.id, { queries: s.app === 'service' ? await sampleQueries(s, appFor[s.app]) : anchorQueries, rounds: [] });
    }
    // The scenarios that write (the naive app re-saves its session on every hit; PATCH) run last in
    // each round, and PostgreSQL is settled after them (CHECKPOINT, VACUUM of what they wrote), so
    // the background work their writes leave (autovacuum, dirty buffers, WAL) is not billed to the
    // read scenario that follows. The table keeps the declared order.
    const writes = (s: Scenario) => s.app === 'naive' || s.method !== 'GET';
    const reads = scenarios.filter((s) => !writes(s));
    // Each round starts the reads at another point of their list (round i of n at i/n of it): a
    // machine that slows down during a round (a neighbour on the host) then weighs on different
    // scenarios each time instead of always on the last ones, and each scenario runs early, midway
    // and late once in three rounds, so the median sees a slow stretch at most once per scenario.
    const runOrder = (i: number) => {
      const from = Math.floor((i * reads.length) / opts.rounds);
      return [...reads.slice(from), ...reads.slice(0, from), ...scenarios.filter(writes)];
    };
    for (let i = 0; i < opts.rounds; i++) {
      for (const s of runOrder(i)) {
        results.get(s.id)!.rounds.push(await round(s, appFor[s.app], opts.seconds));
        log(`round ${i + 1}/${opts.rounds} ${s.id}: ${Math.round(results.get(s.id)!.rounds.at(-1)!.rps)} req/s`);
      }
      if (scenarios.some(writes)) await settle();
    }
  }

  const rows = scenarios.map((s) => {
    const r = results.get(s.id)!;
    return {
      id: s.id,
      label: s.label,
      app: s.app,
      authenticatedGet: s.authenticatedGet,
      rps: median(r.rounds.map((x) => x.rps)),
      p50: median(r.rounds.map((x) => x.p50)),
      p99: median(r.rounds.map((x) => x.p99)),
      errors: r.rounds.reduce((n, x) => n + x.errors, 0),
      non2xx: r.rounds.reduce((n, x) => n + x.non2xx, 0),
      queries: r.queries,
      cpuMsPerRequest: median(r.rounds.map((x) => x.cpuMsPerRequest)),
      clientCpuMsPerRequest: median(r.rounds.map((x) => x.clientCpuMsPerRequest)),
      postgresCpuMsPerRequest: median(r.rounds.map((x) => x.postgresCpuMsPerRequest)),
      rounds: r.rounds,
    };
  });
  const byId = (id: string) => rows.find((r) => r.id === id);
  const naiveRps = byId('me-naive')?.rps ?? Number.NaN;
  // The ceiling of an authenticated read (issue 44): Express + helmet + the cookie + ONE round trip.
  const ceilingRps = byId('me-ceiling-db')?.rps ?? Number.NaN;
  const constantRps = byId('me-ceiling')?.rps ?? Number.NaN;
  const ceilingEventsRps = byId('events-ceiling')?.rps ?? Number.NaN;

  // -------------------------------------------------------------------------------------------
  // Login storm: GET /me p99 before vs while 20 real logins run at once; event-loop delay meanwhile

  let storm:
    | {
        meBefore: { rps: number; p99: number };
        meDuring: { rps: number; p99: number };
        logins: { rps: number; p50: number; p99: number; non2xx: number; errors: number };
        eventLoopP99Before: number;
        eventLoopP99During: number;
        eventLoopMaxDuring: number;
        rounds: unknown[];
      }
    | undefined;
  if (wanted('storm')) {
    const app = opts.profile ? await startApp('service storm', 'serve-service', 'storm') : service;
    const me = (seconds: number) =>
      load({
        base: app.base,
        requests: [{ method: 'GET', path: '/api/v1/me' }],
        cookies: cookies.slice(0, opts.stormConnections),
        connections: opts.stormConnections,
        seconds,
      });
    await me(opts.warmupSeconds);
    const rounds = [];
    for (let i = 0; i < opts.rounds; i++) {
      await app.resetEventLoopDelay();
      const before = await me(opts.seconds);
      const eldBefore = (await app.stats()).eld;
      await app.resetEventLoopDelay();
      const [during, logins] = await Promise.all([
        me(opts.seconds),
        load({
          base: app.base,
          requests: [{ method: 'POST', path: '/api/v1/auth/login', body: { email, password } }],
          cookies: [],
          connections: opts.stormLogins,
          seconds: opts.seconds,
        }),
      ]);
      const eldDuring = (await app.stats()).eld;
      rounds.push({ before, during, logins, eldBefore, eldDuring });
      // The logins wrk had sent when it stopped are still being hashed (one at a time per hashing
      // slot, up to seconds of bcrypt): the next round's "before" must not run beside them.
      const drained = await app.waitIdle();
      if (!drained) log(`storm round ${i + 1}: the service was still busy 30 s after the storm; going on`);
      log(
        `storm round ${i + 1}: GET /me p99 ${before.p99.toFixed(1)} → ${during.p99.toFixed(1)} ms, event-loop p99 ${eldDuring.p99} ms, logins ${logins.rps.toFixed(1)}/s`,
      );
    }
    storm = {
      meBefore: { rps: median(rounds.map((r) => r.before.rps)), p99: median(rounds.map((r) => r.before.p99)) },
      meDuring: { rps: median(rounds.map((r) => r.during.rps)), p99: median(rounds.map((r) => r.during.p99)) },
      logins: {
        rps: median(rounds.map((r) => r.logins.rps)),
        p50: median(rounds.map((r) => r.logins.p50)),
        p99: median(rounds.map((r) => r.logins.p99)),
        non2xx: rounds.reduce((n, r) => n + r.logins.non2xx, 0),
        errors: rounds.reduce((n, r) => n + r.logins.errors, 0),
      },
      eventLoopP99Before: median(rounds.map((r) => r.eldBefore.p99)),
      eventLoopP99During: median(rounds.map((r) => r.eldDuring.p99)),
      eventLoopMaxDuring: Math.max(...rounds.map((r) => r.eldDuring.max)),
      rounds: rounds.map((r) => ({
        meBeforeP99: r.before.p99,
        meDuringP99: r.during.p99,
        loginsPerSecond: r.logins.rps,
        eventLoopDuring: r.eldDuring,
      })),
    };
    if (app !== service) await stopApp(app);
  }

  // -------------------------------------------------------------------------------------------
  // RSS of the service process after each round of mixed load

  let rss:
    | {
        startMb: number;
        afterRoundMb: number[];
        maxMb: number;
        minMb: number;
        rps: number[];
        non2xx: number;
        errors: number;
        heap: { heapTotalMb: number; heapUsedMb: number; externalMb: number }[];
      }
    | undefined;
  if (wanted('rss')) {
    const app = opts.profile ? await startApp('service rss', 'serve-service', 'rss') : service;
    const startMb = rssKb(app.pid) / 1024;
    const afterRoundMb: number[] = [];
    const heapAfterRound: (NodeJS.MemoryUsage | undefined)[] = [];
    const rpsList: number[] = [];
    let non2xx = 0;
    let errors = 0;
    for (let i = 0; i < opts.rssRounds; i++) {
      const r = await load({
        base: app.base,
        requests: [
          { method: 'GET', path: '/api/v1/me' },
          { method: 'GET', path: hh },
          { method: 'GET', path: `${hh}/rules` },
          { method: 'GET', path: eventsPath },
          { method: 'GET', path: deepPath },
          { method: 'PATCH', path: hh, body: { name: `Bench ${i}` } },
        ],
        cookies,
        connections: opts.connections,
        seconds: opts.rssSeconds,
      });
      afterRoundMb.push(rssKb(app.pid) / 1024);
      heapAfterRound.push((await app.stats()).memory);
      rpsList.push(r.rps);
      non2xx += r.non2xx;
      errors += r.errors;
      log(`rss round ${i + 1}: ${afterRoundMb.at(-1)!.toFixed(1)} MB after ${opts.rssSeconds} s at ${Math.round(r.rps)} req/s`);
    }
    const mb = (bytes: number | undefined) => Math.round(((bytes ?? Number.NaN) / 1048576) * 10) / 10;
    const heap = heapAfterRound.map((m) => ({ heapTotalMb: mb(m?.heapTotal), heapUsedMb: mb(m?.heapUsed), externalMb: mb(m?.external) }));
    rss = { startMb, afterRoundMb, maxMb: Math.max(...afterRoundMb), minMb: Math.min(...afterRoundMb), rps: rpsList, non2xx, errors, heap };
    if (app !== service) await stopApp(app);
  }

  // -------------------------------------------------------------------------------------------
  // Verdicts

  const me = byId('me');
  const pass = (ok: boolean | undefined) => (ok === undefined ? 'n/a' : ok ? 'PASS' : 'MISS');
  const verdicts: { target: string; measured: string; verdict: string }[] = [];
  const verdict = (target: string, measured: string, ok: boolean | undefined) => verdicts.push({ target, measured, verdict: pass(ok) });
  const fin = (...xs: (number | undefined)[]) => xs.every((x) => x !== undefined && Number.isFinite(x));
  const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '—');
  const f2 = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : '—');
  const pct = (x: number) => (Number.isFinite(x) ? `${Math.round(x * 100)} %` : '—');

  const ceilingRow = byId('me-ceiling-db');
  verdict(
    'GET /me ≥ 90 % of the ceiling (Express + helmet + cookie + one round trip)',
    me && fin(me.rps, ceilingRps) ? `${pct(me.rps / ceilingRps)} (${Math.round(me.rps)} vs ${Math.round(ceilingRps)} req/s)` : '—',
    me && fin(me.rps, ceilingRps) ? me.rps >= 0.9 * ceilingRps : undefined,
  );
  verdict(
    'GET /me ≥ 8× naive',
    me && fin(me.rps, naiveRps) ? `${f2(me.rps / naiveRps)}× (${Math.round(me.rps)} vs ${Math.round(naiveRps)} req/s)` : '—',
    me && fin(me.rps, naiveRps) ? me.rps >= 8 * naiveRps : undefined,
  );
  verdict(
    "GET /me p99 ≤ 1.5× the ceiling's p99",
    me && ceilingRow ? `${f1(me.p99)} vs ${f1(ceilingRow.p99)} ms (${f2(me.p99 / ceilingRow.p99)}×)` : '—',
    me && ceilingRow ? me.p99 <= 1.5 * ceilingRow.p99 : undefined,
  );
  // The floor under events page 1: what the ceiling loses by answering the same page instead of
  // /me (transport of ~35 kB and its serialization, nothing else), and where the service stands
  // against it; the target's lower bound (80 % of GET /me) is compared with the floor too.
  const first = byId('events-first');
  const ceilingEvents = byId('events-ceiling');
  const floor = ceilingEvents
    ? {
        eventsPageBytes,
        ceilingMeRps: constantRps,
        ceilingEventsRps,
        ceilingEventsOfCeilingMe: ceilingEventsRps / constantRps,
        serviceEventsFirstRps: first?.rps ?? Number.NaN,
        serviceEventsFirstOfCeilingEvents: (first?.rps ?? Number.NaN) / ceilingEventsRps,
        targetRps: 0.8 * (me?.rps ?? Number.NaN),
        targetOfCeilingEvents: (0.8 * (me?.rps ?? Number.NaN)) / ceilingEventsRps,
        cpuMsPerRequest: {
          ceilingMe: byId('me-ceiling')?.cpuMsPerRequest ?? Number.NaN,
          ceilingEvents: ceilingEvents.cpuMsPerRequest,
          serviceMe: me?.cpuMsPerRequest ?? Number.NaN,
          serviceEventsFirst: first?.cpuMsPerRequest ?? Number.NaN,
        },
      }
    : undefined;
  // The changes feed's pages (100 resources, each as its GET) have targets of their own (below).
  for (const r of rows.filter((x) => x.authenticatedGet && !x.id.startsWith('changes'))) {
    let measured = me ? `${pct(r.rps / me.rps)} of GET /me (${Math.round(r.rps)} req/s)` : '—';
    if (r.id === 'events-first' && floor) {
      measured += `; floor: ceiling events page = ${pct(floor.ceilingEventsOfCeilingMe)} of ceiling /me (${Math.round(floor.ceilingEventsRps)} vs ${Math.round(floor.ceilingMeRps)} req/s); service events page = ${pct(floor.serviceEventsFirstOfCeilingEvents)} of the ceiling's events page; 80 % of GET /me (${Math.round(floor.targetRps)} req/s) = ${pct(floor.targetOfCeilingEvents)} of it`;
    }
    // "Within 20 % of GET /me's requests/s" read as a floor: at least 80 % of it. A read that is faster
    // than GET /me (a cached events page) is not a miss of a speed target.
    verdict(`${r.label} within 20 % of GET /me req/s (≥ 80 %)`, measured, me ? r.rps >= 0.8 * me.rps : undefined);
  }
  // Issue 34: the bearer path as fast as the cookie path, in the same run.
  for (const [withToken, withCookie] of [
    ['me-bearer', 'me'],
    ['household-bearer', 'household'],
  ] as const) {
    const t = byId(withToken);
    const c = byId(withCookie);
    verdict(
      `${t?.label ?? withToken} ≥ 90 % of the cookie path's req/s`,
      t && c ? `${pct(t.rps / c.rps)} (${Math.round(t.rps)} vs ${Math.round(c.rps)} req/s)` : '—',
      t && c ? t.rps >= 0.9 * c.rps : undefined,
    );
  }
  // Issue 32: a rename enqueues its news (a job, then the notification) on the causing write; the
  // same PATCH without a rename enqueues nothing.
  const renaming = byId('patch-household');
  const settings = byId('patch-household-settings');
  verdict(
    'PATCH household with a rename (news enqueued) within 10 % of one without',
    renaming && settings
      ? `${pct(renaming.rps / settings.rps)} (${Math.round(renaming.rps)} vs ${Math.round(settings.rps)} req/s); ${renaming.queries} vs ${settings.queries} statements`
      : '—',
    renaming && settings ? renaming.rps >= 0.9 * settings.rps : undefined,
  );
  const deep = byId('events-deep');
  verdict(
    `events page ${deepPage.toLocaleString('en')} within 10 % of page 1`,
    first && deep
      ? `${pct(deep.rps / first.rps)} of page 1 req/s (${Math.round(deep.rps)} vs ${Math.round(first.rps)}); p99 ${f1(deep.p99)} vs ${f1(first.p99)} ms`
      : '—',
    first && deep ? deep.rps >= 0.9 * first.rps : undefined,
  );
  const changesFirst = byId('changes');
  const changesDeep = byId('changes-deep');
  // Issue 44: a page of 100 changes ≥ 80 % of a page of 100 events; a poll with nothing new ≥ 90 % of GET /me.
  for (const c of [changesFirst, changesDeep]) {
    verdict(
      `${c?.label ?? 'changes page'} ≥ 80 % of events page 1`,
      c && first ? `${pct(c.rps / first.rps)} (${Math.round(c.rps)} vs ${Math.round(first.rps)} req/s); ${c.queries} statements` : '—',
      c && first ? c.rps >= 0.8 * first.rps : undefined,
    );
  }
  const poll = byId('changes-empty');
  verdict(
    'GET changes, nothing new ≥ 90 % of GET /me',
    poll && me ? `${pct(poll.rps / me.rps)} (${Math.round(poll.rps)} vs ${Math.round(me.rps)} req/s); ${poll.queries} statement(s)` : '—',
    poll && me ? poll.rps >= 0.9 * me.rps : undefined,
  );
  // Issue 44: each spread write ≥ the naive stack doing the same write on the same rows.
  for (const id of ['patch-spread', 'post-event-spread', 'put-event-spread']) {
    const w = byId(id);
    const n = byId(`${id}-naive`);
    verdict(
      `${w?.label ?? id} ≥ 1.0× naive`,
      w && n ? `${f2(w.rps / n.rps)}× (${Math.round(w.rps)} vs ${Math.round(n.rps)} req/s); ${w.queries} vs ${n.queries} statements` : '—',
      w && n ? w.rps >= n.rps : undefined,
    );
  }
  verdict(
    `changes page ${changesPage.toLocaleString('en')} within 10 % of page 1`,
    changesFirst && changesDeep
      ? `${pct(changesDeep.rps / changesFirst.rps)} of page 1 req/s (${Math.round(changesDeep.rps)} vs ${Math.round(changesFirst.rps)}); p99 ${f1(changesDeep.p99)} vs ${f1(changesFirst.p99)} ms`
      : '—',
    changesFirst && changesDeep ? changesDeep.rps >= 0.9 * changesFirst.rps : undefined,
  );
  verdict(
    'storm: GET /me p99 during ≤ 1.5× before',
    storm ? `${f1(storm.meDuring.p99)} vs ${f1(storm.meBefore.p99)} ms (${f2(storm.meDuring.p99 / storm.meBefore.p99)}×)` : '—',
    storm ? storm.meDuring.p99 <= 1.5 * storm.meBefore.p99 : undefined,
  );
  verdict(
    'storm: service event-loop delay p99 ≤ 20 ms',
    storm ? `${f1(storm.eventLoopP99During)} ms (max ${f1(storm.eventLoopMaxDuring)} ms)` : '—',
    storm ? storm.eventLoopP99During <= 20 : undefined,
  );
  verdict('RSS ≤ 230 MB (Node 24)', rss ? `max ${f1(rss.maxMb)} MB` : '—', rss ? rss.maxMb <= 230 : undefined);
  verdict(
    'RSS flat (max − min ≤ 10 %)',
    rss ? `${rss.afterRoundMb.map(f1).join(' / ')} MB: spread ${pct((rss.maxMb - rss.minMb) / rss.minMb)}` : '—',
    rss ? rss.maxMb - rss.minMb <= 0.1 * rss.minMb : undefined,
  );

  // -------------------------------------------------------------------------------------------
  // Report

  const loadAfter = os.loadavg();
  const lines: string[] = [];
  lines.push(
    `${os.cpus().length} cores (${os.cpus()[0]?.model.trim()}), Node ${process.version}, ${started.toISOString()}; load average before ${loadBefore.map(f2).join(' ')}, after ${loadAfter.map(f2).join(' ')}`,
  );
  lines.push(
    `${opts.rounds} round(s) of ${opts.seconds} s at ${opts.connections} connections per scenario, median shown${opts.profile ? '; service under --cpu-prof' : ''}; load generator (${driver}) on the same cores`,
  );
  lines.push('');
  lines.push(
    '| scenario | req/s | p50 ms | p99 ms | errors / non-2xx | queries/req | CPU ms/req | PostgreSQL CPU ms/req | load generator CPU ms/req | × naive GET /me | % of ceiling (1 round trip) |',
  );
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    lines.push(
      `| ${r.label} | ${Math.round(r.rps)} | ${f1(r.p50)} | ${f1(r.p99)} | ${r.errors} / ${r.non2xx} | ${r.queries ?? '?'} | ${f2(r.cpuMsPerRequest)} | ${f2(r.postgresCpuMsPerRequest)} | ${f2(r.clientCpuMsPerRequest)} | ${f2(r.rps / naiveRps)} | ${pct(r.rps / ceilingRps)} |`,
    );
  }
  lines.push('');
  if (storm) {
    lines.push(
      `Login storm (${opts.stormLogins} concurrent logins, bcrypt cost 12, GET /me at ${opts.stormConnections} connections): GET /me p99 ${f1(storm.meBefore.p99)} ms before → ${f1(storm.meDuring.p99)} ms during (${Math.round(storm.meBefore.rps)} → ${Math.round(storm.meDuring.rps)} req/s); logins ${f1(storm.logins.rps)}/s, p50 ${f1(storm.logins.p50)} ms, p99 ${f1(storm.logins.p99)} ms, errors / non-2xx ${storm.logins.errors} / ${storm.logins.non2xx}; service event-loop delay p99 ${f1(storm.eventLoopP99Before)} ms before → ${f1(storm.eventLoopP99During)} ms during (max ${f1(storm.eventLoopMaxDuring)} ms)`,
    );
  }
  if (rss) {
    lines.push(
      `RSS of the service (VmRSS): ${f1(rss.startMb)} MB at rest, then ${rss.afterRoundMb.map(f1).join(' / ')} MB after each of ${opts.rssRounds} rounds of ${opts.rssSeconds} s mixed load (me, household, rules, events page 1 and ${deepPage}, PATCH) at ${rss.rps.map((x) => Math.round(x)).join(' / ')} req/s; errors / non-2xx ${rss.errors} / ${rss.non2xx}; V8 heap (total / used) ${rss.heap.map((h) => `${f1(h.heapTotalMb)} / ${f1(h.heapUsedMb)}`).join(', ')} MB`,
    );
  }
  lines.push('');
  lines.push('| target | measured | verdict |');
  lines.push('|---|---|---|');
  for (const v of verdicts) lines.push(`| ${v.target} | ${v.measured} | ${v.verdict} |`);
  process.stdout.write(`\n${lines.join('\n')}\n`);

  // Each profile is written when its process exits (already, for all but the shared service).
  const profiles: { scenario: string; file: string; summary: string }[] = [];
  if (opts.profile) {
    for (const r of rows.filter((x) => x.app === 'service')) {
      const file = path.join(opts.profile, `${r.id}.cpuprofile`);
      if (!fs.existsSync(file)) continue;
      const summary = profileReport(file, 25, r.cpuMsPerRequest);
      profiles.push({ scenario: r.id, file, summary });
      process.stdout.write(`\n${r.label}: CPU ${f2(r.cpuMsPerRequest)} ms per request\n${summary}\n`);
    }
  }

  if (args.json) {
    const report = {
      machine: { cores: os.cpus().length, cpu: os.cpus()[0]?.model.trim(), node: process.version, loadavgBefore: loadBefore, loadavgAfter: loadAfter },
      startedAt: started.toISOString(),
      finishedAt: new Date().toISOString(),
      options: { ...opts, only: opts.only ? [...opts.only] : undefined, deepPage, pageLimit: PAGE_LIMIT },
      scenarios: rows.map((r) => ({ ...r, ratioToNaiveMe: r.rps / naiveRps, ratioToCeiling: r.rps / ceilingRps })),
      transportFloor: floor,
      storm,
      rss,
      verdicts,
      profiles: profiles.map(({ scenario, file }) => ({ scenario, file })),
    };
    fs.writeFileSync(args.json, `${JSON.stringify(report, null, 2)}\n`);
    log(`wrote ${args.json}`);
  }
} catch (err) {
  exitCode = 1;
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
} finally {
  for (const app of [...apps].reverse()) await app.stop().catch(() => undefined);
  await db.destroy().catch(() => undefined);
}
if (wanted('fan-out') && (await fanOut()) !== 0) exitCode = 1;
process.exit(exitCode);
