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
import os from 'node:os';
import { createTestDatabase } from '@svc/test-support';
import { loadBefore, log, opts, wanted } from './options.js';
import { App, fanOut, plannerBench } from './processes.js';
import { writeReport } from './report.js';
import { type Fleet, runScenarios } from './runner.js';
import { scenariosOf } from './scenarios.js';
import { seed } from './seed.js';
import { measureRss, measureStorm } from './storm.js';

if (opts.only && [...opts.only].every((id) => id === 'planner')) process.exit(await plannerBench());
if (opts.only && [...opts.only].every((id) => id === 'fan-out')) process.exit(await fanOut());

// Set-up: database, the measured processes, data
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

  const fleet: Fleet = { db, apps: { service, naive, ceiling, ceilingDb, bare }, startApp, stopApp };
  const seeded = await seed(db, service, naive, ceiling);
  const rows = await runScenarios(fleet, scenariosOf(seeded), seeded);
  const storm = wanted('storm') ? await measureStorm(fleet, service, seeded) : undefined;
  const rss = wanted('rss') ? await measureRss(fleet, service, seeded) : undefined;
  writeReport(rows, storm, rss, seeded);
} catch (err) {
  exitCode = 1;
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
} finally {
  for (const app of [...apps].reverse()) await app.stop().catch(() => undefined);
  await db.destroy().catch(() => undefined);
}
if (wanted('fan-out') && (await fanOut()) !== 0) exitCode = 1;
process.exit(exitCode);
