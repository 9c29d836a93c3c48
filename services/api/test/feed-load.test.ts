import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { freePort } from '@svc/db';
import { HOUSEHOLD_BOUNDS } from '@svc/meal-events';
import { createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import { SERVICE_ENV, SERVICE_NODE_FLAGS } from '../src/heap.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Issue 47's target: /healthz within 50 ms on an instance serving the largest feed ten times at
 * once. Held in every run: the longest the service's own work held its event loop (CPU time
 * between two ticks of 5 ms), which no busy neighbour adds to. The slowest /healthz answer as a
 * prober of its own sees it (wall clock) is printed with how busy the host was; it is asserted
 * only where HEALTHZ_WALL_CLOCK=assert says the host is kept for it: a test does not hold a
 * timing the host's scheduler decides (why: docs/decisions.md, issue 47).
 */
const HEALTHZ_MS = 50;
const WALL_CLOCK_ASSERTED = process.env.HEALTHZ_WALL_CLOCK === 'assert';

/**
 * The host's CPU time so far in clock ticks summed over its CPUs (/proc/stat): busy, in all, and
 * `ours`, what the processes `pids` and their ended children spent (/proc/<pid>/stat, every thread);
 * undefined where there is no /proc.
 */
function hostCpu(pids: number[]): { busy: number; all: number; ours: number } | undefined {
  try {
    // cpu  user nice system idle iowait irq softirq steal …
    const ticks = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
    const all = ticks.reduce((a, b) => a + b, 0);
    let ours = 0;
    for (const pid of pids) {
      // The fields after the command name (in parentheses): utime is [11], stime [12]; cutime [13]
      // and cstime [14], its children's that ended (the service's rendering processes).
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ours += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    }
    return { busy: all - ticks[3]! - ticks[4]!, all, ours };
  } catch {
    return undefined;
  }
}

/**
 * The priorities this test asks of Linux, so that what it measures is the service's and not the
 * host's other work (docs/decisions.md, issue 47). The service and the prober each start in a
 * session of their own (`detached`), which with autogroup scheduling (Linux's default on desktops
 * and CI images: `/proc/sys/kernel/sched_autogroup_enabled`) is a CPU group of its own, shared
 * fairly with every other session's group whatever their threads' nice values; each group is given
 * the nice value PROBED_NICE (`/proc/<pid>/autogroup`), and the service's event-loop thread and the
 * prober's too (setpriority), above the ten clients (this process, nice 0) and whatever else keeps
 * the cores busy. As in production, the service itself puts its helper threads and the feed's
 * render worker at HELPER_THREAD_NICE (19), below its event loop. Raising a priority needs root
 * (CAP_SYS_NICE): without it everything stays where it started and the test says so.
 */
const PROBED_NICE = -10;

/** Whether an error is Linux refusing a priority (EACCES, EPERM), or there being no such file (no autogroups). */
function refused(err: unknown): boolean {
  const code = (err as { info?: { code?: string }; code?: string }).info?.code ?? (err as { code?: string }).code;
  return code === 'EACCES' || code === 'EPERM' || code === 'ENOENT';
}

/** Gives `pid`'s thread and its session's autogroup the nice value `nice` where permitted; answers the two it holds afterwards. */
function prioritize(pid: number, nice: number): { thread: number; group: number | null } {
  try {
    os.setPriority(pid, nice);
  } catch (err) {
    if (!refused(err)) throw err;
  }
  const autogroup = `/proc/${pid}/autogroup`;
  try {
    fs.writeFileSync(autogroup, String(nice));
  } catch (err) {
    if (!refused(err)) throw err;
  }
  let group: number | null = null;
  try {
    group = Number(/ nice (-?\d+)/.exec(fs.readFileSync(autogroup, 'utf8'))?.[1] ?? Number.NaN);
  } catch (err) {
    if (!refused(err)) throw err;
  }
  return { thread: os.getPriority(pid), group };
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  ms: number;
}

/** A request over a connection of its own (no pooling: each answer's time is its own), gzip accepted and not inflated. */
function send(port: number, method: string, urlPath: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: urlPath, headers: { 'accept-encoding': 'gzip', ...headers }, agent: false }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (b: Buffer) => parts.push(b));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts), ms: performance.now() - started }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The service's main thread since the last ask (test/loop-probe.mjs): event-loop delay, and the longest its own work held the loop. */
interface Loop {
  delayMaxMs: number;
  delayP99Ms: number;
  heldMaxMs: number;
  cpuMs: number;
  gcMs: number;
  gcMaxMs: number;
}

/**
 * Issue 47: "A serving instance's /healthz answers within 50 ms while the largest household's feed
 * is fetched ten times at once." The service runs as in production (`node dist/src/main.js`) in a
 * process of its own, the /healthz prober in another (test/health-probe.mjs); the ten clients are
 * this process. The household is
 * filled through the API to its bounds with the audit's load case: daily series with the longest
 * notes and the most participants with the longest names.
 */
describe('the largest household’s calendar feed on a service process of its own: /healthz meanwhile', function () {
  this.timeout(600_000);
  let db: TestDatabase;
  let child: ChildProcess | undefined;
  let prober: ChildProcess | undefined;
  let port = 0;
  // In memory (tmpfs) where there is one: the service writes its log line of each request there,
  // and a write to a disk file may wait for a disk that other work on a shared host keeps busy.
  const dataDir = fs.mkdtempSync(path.join(fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'svc-feed-load-'));
  let cookie = '';
  let origin = '';
  let householdId = '';
  let feedPath = '';

  const api = async (method: string, urlPath: string, body?: unknown): Promise<Answer & { json: <T>() => T }> => {
    const a = await send(
      port,
      method,
      urlPath,
      { 'content-type': 'application/json', origin, cookie, 'accept-encoding': 'identity' },
      body === undefined ? undefined : JSON.stringify(body),
    );
    return { ...a, json: <T>() => JSON.parse(a.body.toString('utf8')) as T };
  };

  before(async () => {
    // The packages' dist is built before any test runs (turbo: test dependsOn ^build); this one's now.
    execFileSync(process.execPath, [path.join(root, '../../node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
    db = await createTestDatabase();
    port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    const logFile = path.join(dataDir, 'service.log');
    const logFd = fs.openSync(logFile, 'w');
    child = spawn(
      process.execPath,
      [
        ...(process.env.FEED_NODE_FLAGS?.split(' ').filter(Boolean) ?? []),
        ...(process.env.FEED_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.FEED_PROF}`] : []),
        '--import',
        './test/loop-probe.mjs',
        ...SERVICE_NODE_FLAGS,
        'dist/src/main.js',
      ],
      {
        cwd: root,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          ...SERVICE_ENV,
          NODE_ENV: 'production',
          DATABASE_URL: db.url,
          DATA_DIR: dataDir,
          SESSION_SECRET: 'feed load test secret, long enough for production',
          PUBLIC_BASE_URL: origin,
          COOKIE_SECURE: 'false',
          PORT: String(port),
          HOST: '127.0.0.1',
          LOG_LEVEL: 'info',
          PASSWORD_BREACH_API: 'off',
          SHUTDOWN_DRAIN_SECONDS: '0',
        },
        // Its log goes to a file: a pipe this busy process reads late would hold the service's writes.
        stdio: ['ignore', logFd, logFd, 'ipc'],
        // A session of its own: its own CPU group (PROBED_NICE).
        detached: true,
      },
    );
    fs.closeSync(logFd);
    // Ready once it says so (event-driven: the file's changes, no polling).
    await new Promise<void>((resolve, reject) => {
      const watcher = fs.watch(logFile);
      const done = (err?: Error) => {
        watcher.close();
        child!.off('exit', onExit);
        if (err) reject(err);
        else resolve();
      };
      const check = () => {
        if (fs.readFileSync(logFile, 'utf8').includes('"msg":"ready at ')) done();
      };
      const onExit = () => done(new Error(`the service exited: ${fs.readFileSync(logFile, 'utf8')}`));
      watcher.on('change', check);
      child!.once('exit', onExit);
      check();
    });
    expect((await send(port, 'GET', '/readyz')).status).to.equal(200);
    prober = spawn(process.execPath, ['test/health-probe.mjs', String(port)], { cwd: root, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], detached: true });
    await new Promise((resolve, reject) => prober!.once('spawn', resolve).once('error', reject));
    const nice = { service: prioritize(child.pid!, PROBED_NICE), prober: prioritize(prober.pid!, PROBED_NICE) };
    console.log(
      `      nice values: the service's event loop ${nice.service.thread} (its CPU group ${nice.service.group ?? 'none'}), the prober ${nice.prober.thread} (${nice.prober.group ?? 'none'}), the clients ${os.getPriority()}` +
        (nice.service.thread === PROBED_NICE ? '' : ' (not permitted to raise a priority here)'),
    );

    const registered = await api('POST', '/api/v1/auth/register', { email: 'feed-load@example.test', password: 'correct horse battery', displayName: 'Load' });
    expect(registered.status, registered.body.toString()).to.equal(200);
    cookie = (registered.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]).join('; ');
    const household = await api('POST', '/api/v1/households', { name: 'Largest', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '18:00' });
    expect(household.status, household.body.toString()).to.equal(201);
    householdId = household.json<{ id: string }>().id;
    const today = new Date().toISOString().slice(0, 10);
    const event = (over: Record<string, unknown>) => ({
      date: today,
      eventType: 'Activity',
      servingTime: '18:00',
      availableCookingMinutes: 30,
      notes: 'N'.repeat(2000),
      participants: Array.from({ length: 50 }, (_, i) => ({ memberId: null, name: `${String(i).padStart(2, '0')}${'p'.repeat(98)}` })),
      ...over,
    });
    // 13 daily series without end (367 occurrences each, today's included), then one of 229: 5,000 events.
    for (let i = 0; i < 13; i++)
      expect((await api('POST', `/api/v1/households/${householdId}/events`, event({ repeat: { frequency: 'daily' } }))).status).to.equal(201);
    expect((await api('POST', `/api/v1/households/${householdId}/events`, event({ repeat: { frequency: 'daily', count: 229 } }))).status).to.equal(201);
    const n = (await db.knex('meal_events').where('household_id', householdId).count<{ n: string }[]>('* as n'))[0]!.n;
    expect(Number(n)).to.equal(HOUSEHOLD_BOUNDS.liveEvents);
    const feed = await api('POST', `/api/v1/households/${householdId}/calendar-feed`);
    expect(feed.status).to.equal(201);
    feedPath = new URL(feed.json<{ url: string }>().url).pathname;
  });

  after(async () => {
    if (prober && prober.exitCode === null && prober.signalCode === null) {
      prober.kill('SIGKILL');
      await new Promise((resolve) => prober!.once('exit', resolve));
    }
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill(process.env.FEED_PROF ? 'SIGTERM' : 'SIGKILL');
      await new Promise((resolve) => child!.once('exit', resolve));
    }
    await db?.destroy();
    if (process.env.FEED_SERVICE_LOG) fs.copyFileSync(path.join(dataDir, 'service.log'), process.env.FEED_SERVICE_LOG);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const loop = () =>
    new Promise<Loop>((resolve) => {
      child!.once('message', (m) => resolve(m as Loop));
      child!.send('loop');
    });

  /** This test's processes: this one, the service, the prober, and the test database's backends now. */
  const ourPids = async () => [
    process.pid,
    child!.pid!,
    prober!.pid!,
    ...(await db.knex.raw<{ rows: { pid: number }[] }>('select pid from pg_stat_activity where datname = current_database()')).rows.map((r) => r.pid),
  ];

  /** How busy the host's cores were during a round, on average (undefined where /proc cannot be read). */
  interface HostLoad {
    /** Cores idle. */
    idle: number;
    /** Cores kept busy by other work than this test's processes. */
    other: number;
  }

  /**
   * Runs `load` while the prober asks /healthz one after another; answers its times, the service's
   * loop, what `load` gave, and how busy the host was meanwhile.
   */
  async function underLoad<T>(load: () => Promise<T>): Promise<{ result: T; health: number[]; loop: Loop; host: HostLoad | undefined }> {
    const pidsBefore = await ourPids();
    const before = hostCpu(pidsBefore);
    await loop(); // starts the service's readings again
    prober!.send('start');
    const result = await load();
    const probed = new Promise<{ ms: number[]; failures: string[] }>((resolve) => prober!.once('message', (m) => resolve(m as never)));
    prober!.send('stop');
    const { ms, failures } = await probed;
    // Backends that ended meanwhile (a rendering's connection) are not counted as ours: their work counts as other work.
    const after = hostCpu(pidsBefore.filter((pid) => fs.existsSync(`/proc/${pid}`)));
    expect(failures, 'answers of /healthz other than 200').to.deep.equal([]);
    const cores = (ticks: number) => (ticks / (after!.all - before!.all)) * os.cpus().length;
    const host =
      before && after && after.all > before.all
        ? { idle: cores(after.all - before.all - (after.busy - before.busy)), other: cores(after.busy - before.busy - Math.max(0, after.ours - before.ours)) }
        : undefined;
    return { result, health: ms, loop: await loop(), host };
  }

  /** The round's limits: the longest the service's own work held its loop; the slowest /healthz answer where HEALTHZ_WALL_CLOCK=assert. */
  const expectWithinTarget = (health: number[], l: Loop) => {
    expect(health.length).to.be.greaterThan(2);
    expect(l.heldMaxMs, "the longest the service's own work held its event loop (ms)").to.be.below(HEALTHZ_MS);
    const slowest = Math.max(...health);
    if (WALL_CLOCK_ASSERTED) expect(slowest, 'the slowest /healthz answer (ms, wall clock)').to.be.below(HEALTHZ_MS);
    else if (slowest >= HEALTHZ_MS)
      console.log(`      the slowest /healthz answer (${slowest.toFixed(1)} ms) is printed, not held (HEALTHZ_WALL_CLOCK=assert holds it to ${HEALTHZ_MS} ms)`);
  };

  const report = (what: string, { health, loop: l, host }: { health: number[]; loop: Loop; host: HostLoad | undefined }) => {
    const sorted = [...health].sort((a, b) => a - b);
    const busy = host ? `${host.idle.toFixed(2)} cores idle, ${host.other.toFixed(2)} kept busy by other work` : "the host's cores unknown";
    console.log(
      `      ${what} (${busy}): /healthz ${health.length} answers, p50 ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} ms, slowest ${sorted.at(-1)!.toFixed(1)} ms; ` +
        `service event-loop delay p99 ${l.delayP99Ms.toFixed(1)} ms, max ${l.delayMaxMs.toFixed(1)} ms; its own work held the loop at most ${l.heldMaxMs.toFixed(1)} ms, ${Math.round(l.cpuMs)} ms of its CPU in all; collections ${Math.round(l.gcMs)} ms, longest ${l.gcMaxMs.toFixed(1)} ms`,
    );
  };

  const tenAtOnce = () => Promise.all(Array.from({ length: 10 }, () => send(port, 'GET', feedPath)));

  /** A PUT of the household's first event: a new version of the feed, rendered again on the next fetch. */
  const changeAnEvent = async () => {
    const first = (await api('GET', `/api/v1/households/${householdId}/events?limit=1`)).json<{ items: Record<string, unknown>[] }>().items[0]!;
    const changed = await api('PUT', `/api/v1/households/${householdId}/events/${first.id}`, {
      date: first.date,
      eventType: first.eventType,
      servingTime: first.servingTime,
      availableCookingMinutes: first.availableCookingMinutes,
      notes: `changed ${String(first.notes)}`.slice(0, 2000),
      participants: first.participants,
    });
    expect(changed.status, changed.body.toString()).to.equal(200);
  };

  for (const round of ['first rendering (cold)', 'after a change (a new version, rendered again)']) {
    it(`${round}: ten fetches at once are answered, one text; the service's own work never holds its event loop ${HEALTHZ_MS} ms, so /healthz answers within it on a host with a core to spare`, async () => {
      if (round.startsWith('after')) await changeAnEvent();
      if (round.startsWith('first')) {
        // The floor: the same prober with nothing asked but this process's 100 probes beside it, on this host as busy as it is now.
        report(
          'nothing else asked',
          await underLoad(async () => {
            for (let i = 0; i < 100; i++) await send(port, 'GET', '/healthz');
          }),
        );
      }
      const started = performance.now();
      const measured = await underLoad(tenAtOnce);
      const { result: feeds, health, loop } = measured;
      const tookMs = performance.now() - started;
      expect(feeds.map((f) => f.status)).to.deep.equal(Array(10).fill(200));
      expect(new Set(feeds.map((f) => f.headers.etag)).size).to.equal(1);
      const text = gunzipSync(feeds[0]!.body).toString('utf8');
      expect(text.match(/BEGIN:VEVENT/g)).to.have.length(HOUSEHOLD_BOUNDS.liveEvents);
      console.log(
        `      feed ${(Buffer.byteLength(text) / 1e6).toFixed(1)} MB (${(feeds[0]!.body.length / 1e6).toFixed(2)} MB gzip), ten fetches in ${Math.round(tookMs)} ms`,
      );
      report(round, measured);
      expectWithinTarget(health, loop);
    });
  }

  it('a rendering costs the event loop next to nothing: ten fetches of a new version take a small part of its CPU (the rows never reach it)', async () => {
    await changeAnEvent();
    await loop();
    const feeds = await tenAtOnce();
    const { cpuMs, heldMaxMs, gcMs, gcMaxMs } = await loop();
    expect(feeds.map((f) => f.status)).to.deep.equal(Array(10).fill(200));
    console.log(
      `      ten fetches alone: ${Math.round(cpuMs)} ms of the event loop's CPU, at most ${heldMaxMs.toFixed(1)} ms at a time; collections ${Math.round(gcMs)} ms, longest ${gcMaxMs.toFixed(1)} ms`,
    );
    // Reading the 5,000 rows here (38 MB of text parsed, handed to the worker, collected) cost about a
    // second of it; what is left is the ten answers and the instance's own background work.
    expect(cpuMs).to.be.below(550);
  });

  it(`the data export of the largest household's owner streams: the service's own work never holds its event loop ${HEALTHZ_MS} ms, so /healthz answers within it on a host with a core to spare`, async () => {
    const exporting = await underLoad(() => api('GET', '/api/v1/me/export'));
    const { result: exported, health, loop } = exporting;
    expect(exported.status).to.equal(200);
    const doc = JSON.parse(exported.body.toString('utf8'));
    expect(doc.households[0].events).to.have.length(HOUSEHOLD_BOUNDS.liveEvents);
    console.log(`      export ${(exported.body.length / 1e6).toFixed(1)} MB in ${Math.round(exported.ms)} ms`);
    report('export', exporting);
    expectWithinTarget(health, loop);
  });
});
