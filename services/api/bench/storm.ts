/**
 * The service under loads of its own: GET /me while real logins (bcrypt cost 12) run at once, with its
 * event-loop delay; and its RSS after each of three rounds of mixed load.
 */
import { rssKb } from './harness.js';
import { log, opts } from './options.js';
import type { App } from './processes.js';
import { type Fleet, load, median } from './runner.js';
import type { Seeded } from './seed.js';

export interface Storm {
  meBefore: { rps: number; p99: number };
  meDuring: { rps: number; p99: number };
  logins: { rps: number; p50: number; p99: number; non2xx: number; errors: number };
  eventLoopP99Before: number;
  eventLoopP99During: number;
  eventLoopMaxDuring: number;
  rounds: unknown[];
}

/** Login storm: GET /me p99 before vs while --storm-logins real logins run at once; event-loop delay meanwhile. */
export async function measureStorm({ startApp, stopApp }: Fleet, service: App, { cookies, email, password }: Seeded): Promise<Storm> {
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
  const storm: Storm = {
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
  return storm;
}

export interface Rss {
  startMb: number;
  afterRoundMb: number[];
  maxMb: number;
  minMb: number;
  rps: number[];
  non2xx: number;
  errors: number;
  heap: { heapTotalMb: number; heapUsedMb: number; externalMb: number }[];
}

/** RSS of the service process after each round of mixed load. */
export async function measureRss({ startApp, stopApp }: Fleet, service: App, seeded: Seeded): Promise<Rss> {
  const { cookies, householdId, eventsPath, deepPath } = seeded;
  const hh = `/api/v1/households/${householdId}`;
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
  const rss: Rss = { startMb, afterRoundMb, maxMb: Math.max(...afterRoundMb), minMb: Math.min(...afterRoundMb), rps: rpsList, non2xx, errors, heap };
  if (app !== service) await stopApp(app);
  return rss;
}
