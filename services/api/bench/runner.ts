/**
 * The runner: each scenario warmed up, its statements per request sampled, then --rounds rounds of
 * --seconds (interleaved across scenarios, writes last and PostgreSQL settled after them); the median row.
 */
import path from 'node:path';
import type { TestDatabase } from '@svc/test-support';
import { type ChildStats, postgresCpuMs } from './harness.js';
import { call } from './http.js';
import { generatorCpuMs, type LoadSpec, load as loadWith } from './load.js';
import { driver, log, opts } from './options.js';
import type { App } from './processes.js';
import type { Scenario } from './scenarios.js';
import type { Seeded } from './seed.js';

/** A scenario's load, with the driver this run uses. */
export const load = (spec: LoadSpec) => loadWith(driver, spec);

export const median = (xs: number[]) => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!s.length) return Number.NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const cpuMs = (a: ChildStats, b: ChildStats) => (b.cpu.user - a.cpu.user + b.cpu.system - a.cpu.system) / 1000;

/** The processes a run measures, and how it starts and stops one of its own (a service per profiled scenario). */
export interface Fleet {
  db: TestDatabase;
  apps: Record<Scenario['app'], App>;
  startApp(name: string, file: string, profileName?: string): Promise<App>;
  stopApp(app: App): Promise<void>;
}

export interface RoundResult {
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
  /**
   * Reads only: GET /me's req/s measured right before and right after this round (their mean), the
   * reference the read's targets compare it with (see `runScenarios`).
   */
  meBeside?: number;
}

/** The sessions a scenario sends: its own, else the bench account's on its process (none for the constant anchors). */
const cookiesOf = (s: Scenario, seeded: Seeded) =>
  s.cookies ?? (s.app === 'ceiling' || s.app === 'bare' ? [] : s.app === 'naive' ? seeded.naiveCookies : seeded.cookies);

async function sampleQueriesOf(s: Scenario, app: App, seeded: Seeded): Promise<number | null> {
  const cookie = cookiesOf(s, seeded)[0];
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

async function roundOf(s: Scenario, app: App, seconds: number, seeded: Seeded): Promise<RoundResult> {
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
    cookies: cookiesOf(s, seeded),
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
 * After writes: PostgreSQL's deferred work is done now, between rounds, not during the next
 * scenario. The bench's service runs no job queue (serve-service.ts: no mailer, no jobs), so the
 * jobs a write enqueues (a rename's news) stay in the table and are not waited for: their cost is
 * the enqueueing, inside the write.
 */
async function settleAfterWrites(db: TestDatabase): Promise<void> {
  for (const sql of ['vacuum (analyze)', 'checkpoint']) {
    try {
      await db.knex.raw(sql);
    } catch (err) {
      log(`settle: ${sql} failed (${(err as Error).message}); going on`);
    }
  }
}

/** Runs the scenarios and answers a row per scenario (medians of its rounds), in their order. */
export async function runScenarios(fleet: Fleet, scenarios: Scenario[], seeded: Seeded) {
  const { db, apps: appFor, startApp, stopApp } = fleet;
  const results = new Map<string, { queries: number | null; rounds: RoundResult[] }>();
  const sampleQueries = (s: Scenario, app: App) => sampleQueriesOf(s, app, seeded);
  const round = (s: Scenario, app: App, seconds: number) => roundOf(s, app, seconds, seeded);
  const settle = () => settleAfterWrites(db);
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
    // Three phases, each warmed up and run for every round before the next begins: the reads, the
    // naive app's reads (it re-saves its session on every hit) and the writes. A write leaves work
    // behind (autovacuum, dirty buffers, WAL), so PostgreSQL is settled after each round of a phase
    // that writes (VACUUM, CHECKPOINT), and no read runs after a write: a read is never billed for
    // a write's leftovers. The table keeps the declared order.
    const writes = (s: Scenario) => s.app === 'naive' || s.method !== 'GET';
    const naiveReads = (s: Scenario) => s.app === 'naive' && s.method === 'GET';
    const phases = [scenarios.filter((s) => !writes(s)), scenarios.filter(naiveReads), scenarios.filter((s) => writes(s) && !naiveReads(s))];
    // The seeding wrote too (100,000 events, the spread households): settled before anything is measured.
    await settle();
    for (const phase of phases.filter((p) => p.length)) {
      const settles = phase.some(writes);
      for (const s of phase) {
        // The service's queries per request are sampled after the warm-up (its Server-Timing counts this
        // request's own): the steady state, not the first request's cold caches. The anchors count
        // every query of the process, so theirs are sampled before it (after it, the naive app's
        // session saves still queued from the warm-up would count too).
        const anchorQueries = s.app === 'service' ? null : await sampleQueries(s, appFor[s.app]);
        await round(s, appFor[s.app], opts.warmupSeconds);
        results.set(s.id, { queries: s.app === 'service' ? await sampleQueries(s, appFor[s.app]) : anchorQueries, rounds: [] });
      }
      if (settles) await settle();
      // Each round starts at another point of the phase's list (round i of n at i/n of it): a
      // machine that slows down during a round (a neighbour on the host) then weighs on different
      // scenarios each time instead of always on the last ones, and each scenario runs early, midway
      // and late once in three rounds, so the median sees a slow stretch at most once per scenario.
      const runOrder = (i: number) => {
        const from = Math.floor((i * phase.length) / opts.rounds);
        return [...phase.slice(from), ...phase.slice(0, from)];
      };
      // The reads' targets are ratios to GET /me, and this VM's speed drifts by up to 40 % within
      // minutes (every scenario of a round at once): a read measured at one end of a round and GET
      // /me at the other compare two machines. So in the reads phase GET /me also runs, shorter,
      // between every two scenarios, and each round of a read carries the mean of the GET /me right
      // before and right after it (`meBeside`): its ratio is measured at one speed.
      const me = settles ? undefined : phase.find((s) => s.id === 'me');
      const probe = async () => (me ? (await round(me, appFor[me.app], Math.max(2, Math.round(opts.seconds / 2)))).rps : Number.NaN);
      for (let i = 0; i < opts.rounds; i++) {
        let before = await probe();
        for (const s of runOrder(i)) {
          const result = await round(s, appFor[s.app], opts.seconds);
          const after = await probe();
          if (me) result.meBeside = (before + after) / 2;
          before = after;
          results.get(s.id)!.rounds.push(result);
          log(`round ${i + 1}/${opts.rounds} ${s.id}: ${Math.round(result.rps)} req/s${me ? ` (GET /me beside it ${Math.round(result.meBeside!)})` : ''}`);
        }
        if (settles) await settle();
      }
    }
  }

  return scenarios.map((s) => {
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
      /** req/s as a share of GET /me's beside it, the median of the rounds (NaN: not measured beside GET /me). */
      ofMeBeside: median(r.rounds.map((x) => (x.meBeside === undefined ? Number.NaN : x.rps / x.meBeside))),
      rounds: r.rounds,
    };
  });
}

export type Row = Awaited<ReturnType<typeof runScenarios>>[number];
