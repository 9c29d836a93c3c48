/**
 * The parts of the ops suite: TCP proxies the suite can cut or freeze (tcp-proxy.ts; between the instances and
 * PostgreSQL, Redis and SMTP, so the machine's shared servers are never stopped), instances of the
 * built service as real processes, nginx from Debian's package in front of them, PgBouncer, and a
 * bounded load loop. Every wait polls a condition with a deadline; nothing sleeps for a guess.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@svc/db';
import { renderNginxConfig } from '../src/nginx.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const MAIN = path.join(ROOT, 'services/api/dist/src/main.js');
/**
 * How every deployment starts the service's node: the Dockerfile's CMD and ENV, `npm start` and the
 * bench (services/api/src/heap.ts) carry the same; infra/test/runtime-flags.test.ts holds them equal.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8'];
export const SERVICE_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072' };

/** Polls `check` until it answers something truthy; fails with `what` (and `detail()`) at the deadline. */
export async function until<T>(what: string, check: () => T | Promise<T>, timeoutMs = 30_000, detail: () => string = () => ''): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''} ${detail()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export { freePort };

// ---------------------------------------------------------------------------------------------
// An instance of the built service.

export interface LogLine {
  level: number;
  msg: string;
  [k: string]: unknown;
}

export class Instance {
  child: ChildProcess | undefined;
  exited: Promise<number | null> = Promise.resolve(null);
  private out: string[] = [];
  private partial = '';
  /** Every start of this instance (a restart keeps the earlier lines). */
  starts = 0;

  constructor(
    readonly name: string,
    readonly port: number,
    readonly metricsPort: number,
    private readonly env: () => Record<string, string>,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  start(extra: Record<string, string> = {}): void {
    this.starts += 1;
    const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, MAIN], {
      cwd: ROOT,
      env: {
        ...SERVICE_ENV,
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        ...this.env(),
        PORT: String(this.port),
        HOST: '127.0.0.1',
        METRICS_PORT: String(this.metricsPort),
        INSTANCE_ID: this.name,
        ...extra,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    const take = (d: Buffer) => {
      const text = this.partial + d.toString();
      const lines = text.split('\n');
      this.partial = lines.pop() ?? '';
      this.out.push(...lines);
    };
    child.stdout!.on('data', take);
    child.stderr!.on('data', take);
    this.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))));
  }

  /** Log lines (JSON parsed; anything else as `{ msg: line }`) whose raw text contains `needle`. */
  lines(needle = ''): LogLine[] {
    return this.out
      .filter((l) => l.includes(needle))
      .map((l) => {
        try {
          return JSON.parse(l) as LogLine;
        } catch {
          return { level: 0, msg: l };
        }
      });
  }

  tail(n = 20): string {
    return this.out.slice(-n).join('\n');
  }

  async waitReady(timeoutMs = 60_000): Promise<void> {
    const starts = this.starts;
    await until(
      `${this.name} ready`,
      async () => {
        if (this.starts !== starts) throw new Error('restarted');
        const res = await fetch(`${this.url}/readyz`);
        return res.status === 200;
      },
      timeoutMs,
      () => this.tail(),
    );
  }

  /** SIGTERM and the exit code (the drain runs SHUTDOWN_DRAIN_SECONDS first). */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (!this.child || this.child.exitCode !== null || this.child.signalCode !== null) return this.child?.exitCode ?? null;
    this.child.kill(signal);
    return this.exited;
  }

  async metrics(): Promise<string> {
    return (await fetch(`http://127.0.0.1:${this.metricsPort}/metrics`)).text();
  }
}

/** The value of one series in a Prometheus text answer (`name{labels}` exactly as written), or undefined. */
export function metricValue(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

// ---------------------------------------------------------------------------------------------
// Debian packages the suite needs (nginx, pgbouncer): found, or installed with apt-get.

export type Found = { bin: string } | { why: string };

export function findOrInstall(binary: string, pkg: string, versionFlag = '-V'): Found {
  const candidates = () => [binary, `/usr/sbin/${binary}`, `/usr/bin/${binary}`].filter((c) => spawnSync(c, [versionFlag], { stdio: 'ignore' }).status === 0);
  let found = candidates()[0];
  if (!found) {
    if (process.getuid?.() !== 0) return { why: `${binary} is not installed and installing it needs root (apt-get install ${pkg})` };
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    spawnSync('apt-get', ['update'], { stdio: 'ignore', timeout: 300_000, env });
    spawnSync('apt-get', ['install', '-y', '--no-install-recommends', pkg], { stdio: 'ignore', timeout: 300_000, env });
    found = candidates()[0];
    if (!found) return { why: `${binary} is not installed and apt-get install ${pkg} failed` };
  }
  return { bin: found };
}

/** Skips the suite (with the reason) when a part is missing, or fails it when CI is set: CI must run every case. */
export function requirePart(ctx: Mocha.Context, found: Found): string {
  if ('bin' in found) return found.bin;
  if (process.env.CI) throw new Error(`CI is set and the ops suite cannot run: ${found.why}`);
  console.log(`      (skipped: ${found.why})`);
  ctx.skip();
}

// ---------------------------------------------------------------------------------------------
// nginx (the repository's template) and PgBouncer, each in a private directory.

export class Nginx {
  private child: ChildProcess | undefined;
  private readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-nginx-'));
  port = 0;
  stderr = '';

  constructor(
    private readonly bin: string,
    private readonly upstreams: string[],
  ) {}

  private get file(): string {
    return path.join(this.dir, 'nginx.conf');
  }

  /** The template rendered for this run; `down` upstreams are kept in the list but get no requests. */
  private write(down: string[] = []): void {
    let conf = renderNginxConfig({ listen: `127.0.0.1:${this.port}`, upstreams: this.upstreams }).replace(
      /^pid .*;$/m,
      `pid ${path.join(this.dir, 'nginx.pid')};`,
    );
    for (const u of down) conf = conf.replace(`server ${u} `, `server ${u} down `);
    // One worker: with several, each keeps its own failure counts and idle connections, and
    // on two shared cores one is plenty for the load here.
    fs.writeFileSync(this.file, conf.replace(/^worker_processes .*;$/m, 'worker_processes 1;'));
  }

  /**
   * Marks `down` upstreams out of rotation (or none) and reloads: a new worker takes the new
   * configuration, the old one finishes what it has in flight and exits. Resolves once only the
   * new worker is left.
   */
  async reload(down: string[]): Promise<void> {
    this.write(down);
    const workers = () =>
      spawnSync('ps', ['-o', 'pid=,args=', '--ppid', String(this.child!.pid)], { encoding: 'utf8' })
        .stdout.trim()
        .split('\n')
        .filter(Boolean);
    const before = new Set(workers().map((w) => w.trim().split(/\s+/)[0]));
    this.child!.kill('SIGHUP');
    await until(
      'nginx to reload',
      () => {
        const now = workers();
        return now.length === 1 && !before.has(now[0]!.trim().split(/\s+/)[0]) && !now[0]!.includes('shutting down');
      },
      30_000,
      () => this.stderr,
    );
  }

  async start(): Promise<void> {
    this.port = await freePort();
    const file = this.file;
    this.write();
    fs.mkdirSync(path.join(this.dir, 'logs'), { recursive: true });
    this.child = spawn(this.bin, ['-p', this.dir, '-e', 'stderr', '-c', file, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
    this.child.stderr!.on('data', (d) => {
      this.stderr += d;
    });
    await until(
      'nginx to listen',
      async () => (await fetch(`${this.url}/nginx-health`)).status === 200,
      20_000,
      () => this.stderr,
    );
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async stop(): Promise<void> {
    if (this.child && this.child.exitCode === null) {
      const exited = new Promise((r) => this.child!.once('exit', r));
      this.child.kill('SIGQUIT');
      await exited;
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

export class PgBouncer {
  private child: ChildProcess | undefined;
  private readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-pgbouncer-'));
  port = 0;
  output = '';

  constructor(
    private readonly bin: string,
    private readonly target: { host: string; port: number; database: string; user: string; password: string },
  ) {}

  async start(): Promise<void> {
    this.port = await freePort();
    const ini = [
      '[databases]',
      // PgBouncer logs in to PostgreSQL with this password (the embedded server wants one); its
      // own clients are trusted (auth_type trust: loopback only, a test).
      `${this.target.database} = host=${this.target.host} port=${this.target.port} dbname=${this.target.database}${this.target.password ? ` user=${this.target.user} password=${this.target.password}` : ''}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${this.port}`,
      `unix_socket_dir = ${this.dir}`,
      'auth_type = trust',
      `auth_file = ${path.join(this.dir, 'users.txt')}`,
      'pool_mode = transaction',
      // Fewer server connections than the instances' pools together: clients share them
      // transaction by transaction, which is the point of the mode.
      'default_pool_size = 8',
      'max_client_conn = 200',
      `logfile = ${path.join(this.dir, 'pgbouncer.log')}`,
      `pidfile = ${path.join(this.dir, 'pgbouncer.pid')}`,
      '',
    ].join('\n');
    fs.writeFileSync(path.join(this.dir, 'pgbouncer.ini'), ini);
    fs.writeFileSync(path.join(this.dir, 'users.txt'), `"${this.target.user}" "${this.target.password}"\n`);
    // PgBouncer refuses to run as root; the postgres user (Debian's package makes it) can read the directory.
    const asRoot = process.getuid?.() === 0;
    if (asRoot) fs.chmodSync(this.dir, 0o777);
    for (const f of fs.readdirSync(this.dir)) fs.chmodSync(path.join(this.dir, f), 0o666);
    const args = [path.join(this.dir, 'pgbouncer.ini')];
    this.child = asRoot
      ? spawn('runuser', ['-u', 'postgres', '--', this.bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(this.bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const take = (d: Buffer) => {
      this.output += d;
    };
    this.child.stdout!.on('data', take);
    this.child.stderr!.on('data', take);
    await until(
      'pgbouncer to listen',
      () =>
        new Promise<boolean>((resolve) => {
          const s = net.connect(this.port, '127.0.0.1');
          s.once('connect', () => {
            s.destroy();
            resolve(true);
          });
          s.once('error', () => resolve(false));
        }),
      20_000,
      () => this.output + this.log(),
    );
  }

  log(): string {
    try {
      return fs.readFileSync(path.join(this.dir, 'pgbouncer.log'), 'utf8');
    } catch {
      return '';
    }
  }

  url(): string {
    return `postgres://${this.target.user}@127.0.0.1:${this.port}/${this.target.database}`;
  }

  async stop(): Promise<void> {
    if (this.child && this.child.exitCode === null) {
      const exited = new Promise((r) => this.child!.once('exit', r));
      this.child.kill('SIGTERM');
      await exited;
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// HTTP as a client sees it.

export interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers of many shapes, read field by field in the tests
  body: any;
  headers: Headers;
}

export class Client {
  /** Cookies by name (a small jar: the session and social sign-in's state and external cookies). */
  readonly cookies = new Map<string, string>();

  constructor(
    public base: string,
    /** Client address the instances read from X-Forwarded-For (they trust loopback); nginx overwrites it. */
    readonly ip = `198.18.${(randomBytes(1)[0]! % 250) + 1}.${(randomBytes(1)[0]! % 250) + 1}`,
  ) {}

  /**
   * A connection of its own for every request (no keep-alive) instead of fetch's pool. The load
   * through nginx uses it: reloading nginx (taking an instance out of rotation) closes the idle
   * client connections of its old worker, and a request sent on one at that moment fails between
   * the client and nginx, which is nginx's reload and not the service under test.
   */
  fresh = false;

  private send(method: string, target: string, headers: Record<string, string>, body: string | undefined): Promise<Response> {
    if (!this.fresh) return fetch(target, { method, headers, body, redirect: 'manual' });
    return new Promise((resolve, reject) => {
      const req = http.request(target, { method, headers: { ...headers, connection: 'close' }, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers)) for (const x of Array.isArray(v) ? v : [v ?? '']) h.append(k, x);
          resolve(new Response(res.statusCode === 204 ? null : Buffer.concat(chunks), { status: res.statusCode ?? 0, headers: h }));
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  async call(method: string, url: string, body?: unknown, base = this.base): Promise<Answer> {
    const headers: Record<string, string> = { 'x-forwarded-for': this.ip };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.cookies.size) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await this.send(method, `${base}${url}`, headers, body === undefined ? undefined : JSON.stringify(body));
    for (const c of res.headers.getSetCookie()) {
      const pair = c.split(';')[0]!;
      const at = pair.indexOf('=');
      const [name, value] = [pair.slice(0, at), pair.slice(at + 1)];
      if (value === '' || /Max-Age=0|Expires=Thu, 01 Jan 1970/i.test(c)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed, headers: res.headers };
  }
}

// ---------------------------------------------------------------------------------------------
// A bounded load loop: `concurrency` workers each send requests one after another until stopped.

export interface Outcome {
  kind: string;
  status: number;
  /** 0 when the request failed without an answer (connection error). */
  code?: string;
  retryAfter?: string | null;
  /** Answered by an instance (X-Trace-Id), not by nginx itself. */
  fromService: boolean;
  marker?: string;
  /** When the answer came (epoch ms). */
  at: number;
  /** How long the request took, from sending to the whole answer (ms). */
  ms: number;
}

export class Load {
  readonly outcomes: Outcome[] = [];
  private running = false;
  private workers: Promise<void>[] = [];
  private seq = 0;

  constructor(
    private readonly step: (n: number) => { kind: string; method: string; url: string; body?: unknown; marker?: string; client: Client },
    private readonly concurrency = 6,
  ) {}

  start(): void {
    this.running = true;
    for (let w = 0; w < this.concurrency; w++) {
      this.workers.push(
        (async () => {
          while (this.running) {
            const n = this.seq++;
            const s = this.step(n);
            const sent = Date.now();
            try {
              const a = await s.client.call(s.method, s.url, s.body);
              this.outcomes.push({
                kind: s.kind,
                status: a.status,
                code: (a.body as { code?: string } | undefined)?.code,
                retryAfter: a.headers.get('retry-after'),
                fromService: a.headers.has('x-trace-id'),
                marker: s.marker,
                at: Date.now(),
                ms: Date.now() - sent,
              });
            } catch {
              this.outcomes.push({ kind: s.kind, status: 0, fromService: false, marker: s.marker, at: Date.now(), ms: Date.now() - sent });
            }
          }
        })(),
      );
    }
  }

  /** Resolves once `n` more requests have been answered than when called. */
  async more(n: number, timeoutMs = 60_000): Promise<void> {
    const target = this.outcomes.length + n;
    await until(`${n} more requests`, () => this.outcomes.length >= target, timeoutMs);
  }

  async stop(): Promise<Outcome[]> {
    this.running = false;
    await Promise.all(this.workers);
    this.workers = [];
    return this.outcomes;
  }

  since(t: number): Outcome[] {
    return this.outcomes.filter((o) => o.at >= t);
  }
}

/** A short summary of outcomes for assertion messages: counts by kind and status. */
export function summary(outcomes: Outcome[]): string {
  const counts = new Map<string, number>();
  for (const o of outcomes) {
    const key = `${o.kind} ${o.status}${o.code ? ` ${o.code}` : ''}${o.fromService ? '' : ' (not from the service)'}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return JSON.stringify(Object.fromEntries([...counts].sort()));
}
