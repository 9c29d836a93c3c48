/**
 * Background work scenarios (issues 32 and 33), in this process on a database of their own:
 *
 * - `series-extend`: H households (default 10,000) with a daily series each, whose window is a day
 *   behind (as on the morning after the last extension): one pass of the daily extension
 *   (SeriesExtender.extendAll, batches of 200 series per transaction) timed, with this process's
 *   event-loop delay meanwhile (a request arriving then would wait that long). Target (issue 33):
 *   ≤ 60 s for 10,000 households, event-loop p99 ≤ 20 ms.
 * - `fan-out`: internal notifications to households of 10 people with 3 phones each (30
 *   deliveries each) delivered to the local FCM fake: one household, then F households (default
 *   1,000) at once, with one instance and with two — each instance a process of its own running the
 *   service's job runner and push handlers (this file with FANOUT_RUNNER set). Reported as a table
 *   with verdicts: deliveries per second, time from the first send to the last delivery, any phone
 *   that got a notification twice or not at all, and the runners' CPU per delivery. Targets
 *   (issue 32): ≥ 1,000 deliveries/s from one instance, two ≥ 1.6× one, none lost or doubled.
 *   Also run by the main bench: `npm run bench -- --only fan-out`.
 *
 *   npx tsx --conditions=source services/api/bench/background.ts [--households 10000] [--fanout-households 1000] [--only series-extend,fan-out]
 *
 * Numbers from a shared, loaded machine are for checking that the scenarios run, not verdicts.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { HouseholdProfile } from '@svc/contracts';
import { createKnex } from '@svc/db';
import { createLogger, ManualClock, systemClock } from '@svc/http-kit';
import * as jobs from '@svc/jobs';
import * as mealEvents from '@svc/meal-events';
import * as push from '@svc/push';
import { createTestDatabase, FakeFcm } from '@svc/test-support';
import type { Knex } from 'knex';

const { values: args } = parseArgs({
  options: {
    households: { type: 'string' },
    'fanout-households': { type: 'string' },
    'fanout-latency-ms': { type: 'string' },
    only: { type: 'string' },
  },
});
const HOUSEHOLDS = Number(args.households ?? 10_000);
const FANOUT_HOUSEHOLDS = Number(args['fanout-households'] ?? 1_000);
/** The FCM fake's answer time in the fan-out's second pair of runs (0: no such runs). */
const FANOUT_LATENCY_MS = Number(args['fanout-latency-ms'] ?? 50);
const only = args.only ? new Set(args.only.split(',')) : undefined;
const wanted = (id: string) => !only || only.has(id);
const log = (line: string) => process.stdout.write(`${line}\n`);
const quiet = createLogger({ level: 'silent' });
const profile = async (id: string): Promise<HouseholdProfile> => ({ id, country: 'NO', timeZoneId: 'Europe/Oslo', preferredLanguage: 'nb' });

/** What a runner process is told (FANOUT_RUNNER, JSON). */
interface RunnerConfig {
  dbUrl: string;
  fcm: { projectId: string; credentials: object; url: string; tokenUrl: string };
}

/**
 * A runner process: one instance's job runner with push's handlers, delivering until SIGTERM; then
 * it prints the CPU it used since it was ready (ms) and exits.
 */
async function runnerProcess(config: RunnerConfig): Promise<void> {
  const knex = createKnex(config.dbUrl, { poolMax: 10 });
  const queue = new jobs.JobQueue({ knex, clock: systemClock, logger: quiet, pollIntervalMs: 100, concurrency: 32 });
  const provider = new push.FcmProvider({ ...config.fcm, credentials: config.fcm.credentials as never, clock: systemClock, timeoutMs: 10_000 });
  new push.NotificationService({
    knex,
    clock: systemClock,
    jobs: queue,
    accountIds: async () => [],
    profiles: profile,
    providers: { fcm: provider },
    logger: quiet,
  });
  // Statements this runner sends, by what they do (pg-boss's fetch and completion, job inserts, the rest by verb).
  const statements: Record<string, number> = {};
  knex.on('query', (q: { sql: string }) => {
    const kind = statementKind(q.sql);
    statements[kind] = (statements[kind] ?? 0) + 1;
  });
  await queue.start();
  const cpuAtReady = process.cpuUsage();
  process.stdout.write('ready\n');
  process.once('SIGTERM', () => {
    void (async () => {
      await queue.stop();
      const cpu = process.cpuUsage(cpuAtReady);
      process.stdout.write(`${JSON.stringify({ cpuMs: (cpu.user + cpu.system) / 1000, statements })}\n`);
      await provider.close();
      await knex.destroy();
      process.exit(0);
    })();
  });
}

/** What a statement does, by its text: pg-boss's fetch, completion and job insert, else its first word. */
function statementKind(sql: string): string {
  if (/^\s*WITH next as/i.test(sql)) return 'job fetch';
  if (/^\s*WITH results AS/i.test(sql)) return 'job complete';
  if (/INSERT INTO \w+\.job\b/i.test(sql)) return 'job insert';
  return (/^\s*(\w+)/.exec(sql)?.[1] ?? '?').toLowerCase();
}

/** CPU ms (user + system) used so far by the PostgreSQL backends serving `knex`'s database (from /proc; NaN off Linux). */
async function backendCpu(knex: Knex): Promise<Map<number, number>> {
  const { rows } = await knex.raw('select pid from pg_stat_activity where datname = current_database()');
  const cpu = new Map<number, number>();
  for (const { pid } of rows as { pid: number }[]) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      cpu.set(pid, ((Number(fields[11]) + Number(fields[12])) * 1000) / 100);
    } catch {
      /* not on this machine, or gone */
    }
  }
  return cpu;
}

/** CPU the database's backends used between two `backendCpu` readings (a backend new since the first counts whole). */
function cpuSince(before: Map<number, number>, after: Map<number, number>): number {
  let ms = 0;
  for (const [pid, now] of after) ms += now - (before.get(pid) ?? 0);
  return ms;
}

/** Starts a runner process and waits until it is ready; `stop()` ends it and answers its CPU ms since ready and its statements. */
async function startRunner(config: RunnerConfig): Promise<{ stop(): Promise<{ cpuMs: number; statements: Record<string, number> }> }> {
  const child = spawn(process.execPath, [...process.execArgv, process.argv[1]!], {
    env: { ...process.env, FANOUT_RUNNER: JSON.stringify(config) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.on('data', (b: Buffer) => {
    out += b.toString();
  });
  await new Promise<void>((resolve, reject) => {
    const check = setInterval(() => {
      if (out.includes('ready\n')) {
        clearInterval(check);
        resolve();
      }
    }, 20);
    child.once('exit', (code) => {
      clearInterval(check);
      reject(new Error(`runner exited early (${code})`));
    });
  });
  return {
    async stop() {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      await exited;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      return line ? (JSON.parse(line) as { cpuMs: number; statements: Record<string, number> }) : { cpuMs: Number.NaN, statements: {} };
    },
  };
}

interface FanOutRow {
  label: string;
  instances: number;
  expected: number;
  delivered: number;
  lost: number;
  doubled: number;
  requestToLastMs: number;
  rate: number;
  cpuMsPerDelivery: number;
  /** CPU ms per delivery of the bench's own process (the sending side and the FCM fake). */
  parentCpuMsPerDelivery: number;
  /** CPU ms per delivery of the scratch database's PostgreSQL backends (every process's connections). */
  pgCpuMsPerDelivery: number;
  /** The runners' statements per delivery, by kind. */
  statements: Record<string, number>;
  load: [number, number];
  /** Statements per notification of the sending side (the causing write, its transaction's BEGIN/COMMIT included). */
  sendStatements: number;
  /** ms from the first request until every notification was stored and enqueued, and how many deliveries had arrived by then. */
  sentMs: number;
  deliveredWhenSent: number;
}

async function seriesExtend(): Promise<void> {
  const db = await createTestDatabase([jobs.migrations, mealEvents.migrations, mealEvents.queues]);
  try {
    const clock = new ManualClock('2026-11-22T09:00:00.000Z');
    const { today, horizon } = mealEvents.windowOf(clock.now(), 'Europe/Oslo');
    // One daily series per household, written through the day before today's horizon.
    const t0 = performance.now();
    await db.knex.raw(
      `insert into meal_event_series (id, household_id, repeat, template, exceptions, written_through, created_at, updated_at)
       select gen_random_uuid(), gen_random_uuid(), '{"frequency":"daily","interval":1,"byDay":null,"until":null,"count":null}'::jsonb,
              jsonb_build_object('date', ?::text, 'eventType', 'Activity', 'servingTime', '17:00', 'availableCookingMinutes', 20, 'notes', '', 'participants', '[]'::jsonb),
              '{}', ?::date - 1, now(), now()
         from generate_series(1, ?)`,
      [today, horizon, HOUSEHOLDS],
    );
    log(`series-extend: seeded ${HOUSEHOLDS} households' daily series in ${Math.round(performance.now() - t0)} ms`);
    const extender = new mealEvents.SeriesExtender({ series: new mealEvents.SeriesStore(db.knex), clock, profiles: profile, random: randomBytes });
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    const started = performance.now();
    const result = await extender.extendAll();
    const ms = performance.now() - started;
    loop.disable();
    const p99 = loop.percentile(99) / 1e6;
    log(
      `series-extend: ${result.series} series, ${result.written} occurrences written in ${(ms / 1000).toFixed(1)} s ` +
        `(${Math.round(result.written / (ms / 1000))}/s); event-loop delay p50 ${(loop.percentile(50) / 1e6).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${(loop.max / 1e6).toFixed(1)} ms` +
        ` | targets: ≤ 60 s for 10,000 households, p99 ≤ 20 ms`,
    );
  } finally {
    await db.destroy();
  }
}

async function fanOut(): Promise<void> {
  const db = await createTestDatabase([jobs.migrations, push.migrations]);
  const fcm = new FakeFcm();
  await fcm.start();
  try {
    const fcmConfig = { projectId: fcm.projectId, credentials: fcm.serviceAccount as object, url: fcm.url, tokenUrl: fcm.tokenUrl };
    /** household → its 10 people */
    const people = new Map<string, string[]>();
    const households = Array.from({ length: FANOUT_HOUSEHOLDS + 1 }, () => crypto.randomUUID());
    for (const h of households)
      people.set(
        h,
        Array.from({ length: 10 }, () => crypto.randomUUID()),
      );
    const owners = [...people.entries()].flatMap(([, users]) => users);
    // Three phones per person, every switch on, in one INSERT.
    await db.knex.raw(
      `insert into push_devices (token_hash, token, user_id, platform, provider, list_changes, household_news, run_done, reminders, last_seen_at, created_at, updated_at)
       select sha256(convert_to(u || '-' || k, 'UTF8')), u || '-' || k, u::uuid, 'android', 'fcm', true, true, true, true, now(), now(), now()
         from unnest(?::text[]) u, generate_series(1, 3) k`,
      [owners],
    );
    // The sending side (the internal route's service): enqueues only; its queue is never started here.
    const sender = new push.NotificationService({
      knex: db.knex,
      clock: systemClock,
      jobs: new jobs.JobQueue({ knex: db.knex, clock: systemClock, logger: quiet }),
      accountIds: async (h) => people.get(h) ?? [],
      profiles: profile,
      providers: { fcm: new push.FilePushProvider('fcm', { dir: '/nonexistent', clock: systemClock, logger: quiet }) },
      logger: quiet,
    });
    const rows: FanOutRow[] = [];
    const runners = async (count: number, sendTo: string[], label: string) => {
      await db.knex.raw('delete from pgboss.job');
      fcm.delivered.length = 0;
      const instances = await Promise.all(Array.from({ length: count }, () => startRunner({ dbUrl: db.url, fcm: fcmConfig })));
      const expected = sendTo.length * 30;
      const load0 = os.loadavg()[0]!;
      const pg0 = await backendCpu(db.knex);
      const parent0 = process.cpuUsage();
      let sendStatements = 0;
      const countSend = () => {
        sendStatements++;
      };
      db.knex.on('query', countSend);
      const started = performance.now();
      // Every household notified at once (as the planner's nightly run would), 16 requests in flight
      // (as many as one instance's pool serves at once; more only wait for a connection and time out).
      const queue = [...sendTo];
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          for (let h = queue.shift(); h !== undefined; h = queue.shift())
            await sender.send(h, { kind: 'runDone', title: 'Plan ready', body: 'Next week is planned' });
        }),
      );
      db.knex.off('query', countSend);
      const sentMs = performance.now() - started;
      const deliveredAtSent = fcm.delivered.length;
      while (fcm.delivered.length < expected && performance.now() - started < 600_000) await new Promise((r) => setTimeout(r, 20));
      const done = performance.now();
      const parentCpu = process.cpuUsage(parent0);
      const pgMs = cpuSince(pg0, await backendCpu(db.knex));
      const load1 = os.loadavg()[0]!;
      const stopped = await Promise.all(instances.map((i) => i.stop()));
      const cpuMs = stopped.reduce((a, b) => a + b.cpuMs, 0);
      const statements: Record<string, number> = {};
      for (const r of stopped) for (const [k, n] of Object.entries(r.statements)) statements[k] = (statements[k] ?? 0) + n;
      const seen = new Map<string, number>();
      for (const d of fcm.delivered) {
        const key = `${d.token} ${String((d.message.data as Record<string, unknown>)?.notificationId)}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
      }
      const row: FanOutRow = {
        label,
        instances: count,
        expected,
        delivered: fcm.delivered.length,
        lost: expected - seen.size,
        doubled: [...seen.values()].filter((n) => n > 1).length,
        requestToLastMs: done - started,
        rate: fcm.delivered.length / ((done - started) / 1000),
        cpuMsPerDelivery: cpuMs / Math.max(1, fcm.delivered.length),
        parentCpuMsPerDelivery: (parentCpu.user + parentCpu.system) / 1000 / Math.max(1, fcm.delivered.length),
        pgCpuMsPerDelivery: pgMs / Math.max(1, fcm.delivered.length),
        statements: Object.fromEntries(Object.entries(statements).map(([k, n]) => [k, n / Math.max(1, fcm.delivered.length)])),
        load: [load0, load1],
        sendStatements: sendStatements / sendTo.length,
        sentMs,
        deliveredWhenSent: deliveredAtSent,
      };
      rows.push(row);
      log(
        `fan-out ${label}, ${count} instance(s): ${row.delivered}/${expected} deliveries, ${row.lost} lost, ${row.doubled} doubled; ` +
          `request to last delivery ${Math.round(row.requestToLastMs)} ms, ${Math.round(row.rate)} deliveries/s, runner CPU ${row.cpuMsPerDelivery.toFixed(2)} ms/delivery` +
          `; per delivery: bench process (sender + FCM fake) ${row.parentCpuMsPerDelivery.toFixed(2)} ms CPU, PostgreSQL ${row.pgCpuMsPerDelivery.toFixed(2)} ms CPU, ` +
          `runner statements ${Object.entries(row.statements)
            .sort((a, b) => b[1] - a[1])
            .map(([k, n]) => `${k} ${n.toFixed(3)}`)
            .join(
              ', ',
            )}; sender ${row.sendStatements.toFixed(1)} statements per notification, every notification enqueued after ${Math.round(row.sentMs)} ms (${row.deliveredWhenSent} delivered by then); load ${row.load[0].toFixed(1)} → ${row.load[1].toFixed(1)}`,
      );
      return row.rate;
    };
    await runners(1, households.slice(0, 1), 'one household of 10 people × 3 phones');
    await runners(2, households.slice(0, 1), 'one household of 10 people × 3 phones');
    const one = await runners(1, households.slice(1), `${FANOUT_HOUSEHOLDS} households at once`);
    const two = await runners(2, households.slice(1), `${FANOUT_HOUSEHOLDS} households at once`);
    // The same with the fake answering each send after a provider's round trip: an instance is then
    // bound by the sends it keeps in flight (its FCM connections), not by this machine's two cores,
    // and a second instance shows whether instances add up (no leader, no lock between them).
    let far: { one: number; two: number } | undefined;
    if (FANOUT_LATENCY_MS > 0) {
      fcm.latencyMs = FANOUT_LATENCY_MS;
      const label = `${FANOUT_HOUSEHOLDS} households at once, FCM answering after ${FANOUT_LATENCY_MS} ms`;
      far = { one: await runners(1, households.slice(1), label), two: await runners(2, households.slice(1), label) };
      fcm.latencyMs = 0;
    }
    const clean = rows.every((r) => r.lost === 0 && r.doubled === 0);
    const lines = [
      '',
      '| fan-out | instances (processes) | delivered / expected | lost | doubled | request → last delivery ms | deliveries/s | runner CPU ms/delivery | bench process (sender + fake) CPU ms/delivery | PostgreSQL CPU ms/delivery |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...rows.map(
        (r) =>
          `| ${r.label} | ${r.instances} | ${r.delivered} / ${r.expected} | ${r.lost} | ${r.doubled} | ${Math.round(r.requestToLastMs)} | ${Math.round(r.rate)} | ${r.cpuMsPerDelivery.toFixed(2)} | ${r.parentCpuMsPerDelivery.toFixed(2)} | ${r.pgCpuMsPerDelivery.toFixed(2)} |`,
      ),
      '',
      '| target | measured | verdict |',
      '|---|---|---|',
      `| ≥ 1,000 deliveries/s from one instance | ${Math.round(one)}/s | ${one >= 1000 ? 'met' : 'NOT met'} |`,
      `| two instances ≥ 1.6× one (fake answering at once: CPU-bound on this machine) | ${(two / one).toFixed(2)}× | ${two / one >= 1.6 ? 'met' : 'NOT met'} |`,
      ...(far
        ? [
            `| ≥ 1,000 deliveries/s from one instance, FCM answering after ${FANOUT_LATENCY_MS} ms | ${Math.round(far.one)}/s | ${far.one >= 1000 ? 'met' : 'NOT met'} |`,
            `| two instances ≥ 1.6× one, FCM answering after ${FANOUT_LATENCY_MS} ms | ${(far.two / far.one).toFixed(2)}× | ${far.two / far.one >= 1.6 ? 'met' : 'NOT met'} |`,
          ]
        : []),
      `| no message lost or sent twice to one phone | ${rows.reduce((a, r) => a + r.lost, 0)} lost, ${rows.reduce((a, r) => a + r.doubled, 0)} doubled | ${clean ? 'met' : 'NOT met'} |`,
      '',
    ];
    log(lines.join('\n'));
  } finally {
    await fcm.stop();
    await db.destroy();
  }
}

if (process.env.FANOUT_RUNNER) {
  await runnerProcess(JSON.parse(process.env.FANOUT_RUNNER) as RunnerConfig);
} else {
  if (wanted('series-extend')) await seriesExtend();
  if (wanted('fan-out')) await fanOut();
  process.exit(0);
}
