import { performance } from 'node:perf_hooks';
import type { Knex } from 'knex';
import type { DbLogger } from './knex.js';

/**
 * The database has stopped answering: no reply on any connection for `unansweredMs` while queries
 * wait, and a fresh connection's `select 1` did not answer either. Every query waiting then, and
 * every one asked for until a probe answers, fails at once with this error (a 503 to the request:
 * http-kit knows its `code`), instead of hanging until the read timeout.
 */
export class DatabaseNotAnsweringError extends Error {
  /** What http-kit recognises (503 `service_unavailable`), also through knex's and Objection's wrapping. */
  readonly code = 'EDBNOTANSWERING';
  constructor(unansweredMs: number) {
    super(`Database not answering: no reply on any connection for ${unansweredMs} ms; failing fast until a probe answers`);
    this.name = 'DatabaseNotAnsweringError';
  }
}

/** What a test (or an operator's tool) can see of a pool's watch, and the sweep it can run by hand with an injected clock. */
export interface DatabaseWatch {
  /** True from the moment the database was found not answering until a probe answers. */
  readonly frozen: boolean;
  /** One sweep now: read timeouts, then the stall rules (it also runs by itself while the pool is busy). */
  check(): void;
  /** Resolves when no probe is under way (a probe's answer arrives on the real network, whatever the clock says). */
  probed(): Promise<void>;
}

export interface WatchOptions {
  /** A query not answered this long after it was sent fails ("Query read timeout"); 0: none. */
  readTimeoutMs: number;
  /** No reply on any connection for this long while queries wait: the database is taken as frozen (after a probe); 0: no stall detection. */
  unansweredMs: number;
  /** Monotonic milliseconds (performance.now by default); a test injects its own. */
  now?: () => number;
  logger?: DbLogger;
}

type PgCallback = (err: Error | null, res?: unknown) => void;
interface PgConnection {
  query(...args: unknown[]): unknown;
  connection?: { stream?: { destroy(): void } };
  __knex__disposed?: unknown;
}
interface PgProbeClient {
  connect(): Promise<unknown>;
  query(text: string): Promise<unknown>;
  end(): Promise<void>;
  on(event: 'error', listener: (err: Error) => void): unknown;
  connection?: { stream?: { destroy(): void } };
}
interface KnexClientInternals {
  acquireConnection(): Promise<unknown>;
  acquireRawConnection(): Promise<unknown>;
  pool?: { pendingAcquires?: { reject?(err: Error): void }[] };
  driver: { Client: new (settings: object) => PgProbeClient };
  connectionSettings: object;
}

/** A query under way on a connection. */
interface Waiting {
  conn: PgConnection;
  sentAt: number;
  callback: PgCallback;
  settled: boolean;
}

const watches = new WeakMap<object, ConnectionWatch>();

/** The watch of a knex made by createKnex (undefined for any other knex). */
export function databaseWatch(knex: Knex): DatabaseWatch | undefined {
  return watches.get(knex.client);
}

/**
 * Watches every query of one knex pool, from a wrapper around each pooled connection's `query`
 * (installed when the connection is made) and one sweep timer per pool while queries are under way.
 * Per query the cost is O(1): one Set insert and delete, two clock readings (sent, answered) and a
 * boolean check; everything else happens in the sweep (every `unansweredMs / 8`, at most 250 ms,
 * unref'd, stopped after a few idle sweeps), whose work grows only with the queries overdue.
 *
 * 1. **Read timeout**: a query not answered `readTimeoutMs` after it was sent fails with "Query
 *    read timeout" (a 503 to the request), and its connection is closed at once and marked for knex
 *    to discard: a transaction whose statement timed out cannot be rolled back (the ROLLBACK would
 *    wait behind it), so a connection returned to the pool as good would carry that open
 *    transaction into the next request, whose autocommit INSERT would answer success and be lost
 *    when the transaction is rolled back. Closing the socket makes the server roll back whatever it
 *    had open. A sweep rather than pg's own `query_timeout`, whose timer per query keeps each
 *    result alive into V8's old generation (docs/benchmarks.md, "What the bench settled"). A query is
 *    late by at most one sweep.
 * 2. **A frozen database** (its processes stopped, a hung host; connections stay open, nothing is
 *    refused): when a query has waited `unansweredMs / 2` and no reply came on any connection
 *    meanwhile, a probe starts: a new connection of its own, `select 1`. When the query has waited
 *    `unansweredMs`, still no reply came on any connection and the probe has not answered for
 *    `unansweredMs / 2` either, the database is taken as frozen: every waiting query fails with
 *    DatabaseNotAnsweringError (its connection closed, so the server rolls back whatever it held
 *    open), so do the requests waiting for a pooled connection, and so does every new query or
 *    connection request, at once, until a probe (one at a time, each given `unansweredMs`)
 *    answers. A query that is merely slow is told apart by the probe, which answers; a sweep that
 *    ran late (a blocked event loop, whose replies are still unread) decides nothing.
 */
export class ConnectionWatch implements DatabaseWatch {
  frozen = false;
  private readonly waiting = new Set<Waiting>();
  /** Connections being opened (they wait for the server too). */
  private readonly connecting = new Set<{ startedAt: number }>();
  private readonly now: () => number;
  private readonly interval: number;
  private lastReplyAt: number;
  private frozenAt = 0;
  private probe: { startedAt: number; abandon(): void; done: Promise<void> } | undefined;
  private sweep: NodeJS.Timeout | undefined;
  private idleSweeps = 0;
  private lastSweepReal = performance.now();
  private client: KnexClientInternals | undefined;

  constructor(private readonly options: WatchOptions) {
    this.now = options.now ?? (() => performance.now());
    this.lastReplyAt = this.now();
    const shortest = Math.min(...[options.readTimeoutMs / 4, options.unansweredMs / 8].filter((n) => n > 0));
    this.interval = Math.min(250, Math.max(10, Number.isFinite(shortest) ? shortest : 250));
  }

  private get tracking(): boolean {
    return this.options.readTimeoutMs > 0 || this.options.unansweredMs > 0;
  }

  /** Wraps the knex client: new connections are counted while they open; no connection is handed out while frozen. */
  attach(knex: Knex): void {
    const client = knex.client as unknown as KnexClientInternals;
    this.client = client;
    watches.set(client, this);
    if (this.options.unansweredMs <= 0) return;
    const acquire = client.acquireConnection.bind(client);
    client.acquireConnection = () => (this.frozen ? Promise.reject(new DatabaseNotAnsweringError(this.options.unansweredMs)) : acquire());
    const open = client.acquireRawConnection.bind(client);
    client.acquireRawConnection = () => {
      const entry = { startedAt: this.now() };
      this.connecting.add(entry);
      this.startSweep();
      return open().then(
        (conn) => {
          this.connecting.delete(entry);
          this.lastReplyAt = this.now();
          return conn;
        },
        (err: unknown) => {
          this.connecting.delete(entry);
          throw err;
        },
      );
    };
  }

  /** knex's pool `afterCreate`: every query of the connection passes through the watch. */
  readonly afterCreate = (conn: PgConnection, done: (err: Error | null, conn: PgConnection) => void): void => {
    if (this.tracking) {
      const query = conn.query.bind(conn);
      conn.query = (...args: unknown[]) => {
        const at = args.findIndex((a) => typeof a === 'function');
        if (at < 0) return query(...args);
        const callback = args[at] as PgCallback;
        if (this.frozen) {
          // Not sent. The connection may be inside a transaction whose ROLLBACK would fail the same
          // way: closed, it cannot go back to the pool with that transaction open.
          this.dispose(conn, new DatabaseNotAnsweringError(this.options.unansweredMs));
          queueMicrotask(() => callback(new DatabaseNotAnsweringError(this.options.unansweredMs)));
          return undefined;
        }
        const entry: Waiting = { conn, sentAt: this.now(), callback, settled: false };
        args[at] = (err: Error | null, res?: unknown) => {
          if (entry.settled) return; // the watch answered already; the closed socket's error comes after
          entry.settled = true;
          this.waiting.delete(entry);
          this.lastReplyAt = this.now();
          callback(err, res);
        };
        this.waiting.add(entry);
        this.startSweep();
        return query(...args);
      };
    }
    done(null, conn);
  };

  private startSweep(): void {
    if (this.sweep) return;
    this.lastSweepReal = performance.now();
    this.sweep = setInterval(() => this.check(), this.interval).unref();
  }

  private dispose(conn: PgConnection, err: Error): void {
    if (conn.__knex__disposed) return;
    conn.__knex__disposed = err;
    conn.connection?.stream?.destroy();
  }

  private fail(w: Waiting, err: Error): void {
    if (w.settled) return;
    w.settled = true;
    this.waiting.delete(w);
    this.dispose(w.conn, err);
    w.callback(err);
  }

  check(): void {
    const now = this.now();
    const real = performance.now();
    const late = real - this.lastSweepReal > 3 * this.interval;
    this.lastSweepReal = real;
    const { readTimeoutMs, unansweredMs } = this.options;
    if (readTimeoutMs > 0) {
      // In the order sent: the first one not overdue ends the walk.
      for (const w of this.waiting) {
        if (now - w.sentAt < readTimeoutMs) break;
        this.fail(w, new Error('Query read timeout'));
      }
    }
    if (unansweredMs > 0) this.checkStall(now, late);
    // Stopped once nothing has been under way for a few sweeps (an idle pool keeps no timer).
    if (this.waiting.size || this.connecting.size || this.frozen || this.probe) this.idleSweeps = 0;
    else if (++this.idleSweeps >= 8) {
      clearInterval(this.sweep);
      this.sweep = undefined;
      this.idleSweeps = 0;
    }
  }

  private checkStall(now: number, late: boolean): void {
    const ms = this.options.unansweredMs;
    if (this.frozen) {
      if (this.probe && now - this.probe.startedAt >= ms) this.dropProbe();
      if (!this.probe) this.startProbe(now);
      return;
    }
    const first = this.waiting.values().next().value as Waiting | undefined;
    const opening = this.connecting.values().next().value as { startedAt: number } | undefined;
    if (first === undefined && opening === undefined) {
      if (this.probe && now - this.probe.startedAt >= ms) this.dropProbe();
      return;
    }
    const oldest = Math.min(first?.sentAt ?? Number.POSITIVE_INFINITY, opening?.startedAt ?? Number.POSITIVE_INFINITY);
    // How long the database has been silent towards a request that waits for it.
    const quiet = now - Math.max(this.lastReplyAt, oldest);
    if (quiet < ms / 2) {
      if (this.probe && now - this.probe.startedAt >= ms) this.dropProbe();
      return;
    }
    if (!this.probe) {
      this.startProbe(now);
      return;
    }
    if (!late && quiet >= ms && now - this.probe.startedAt >= ms / 2) this.freeze(now);
  }

  private freeze(now: number): void {
    this.frozen = true;
    this.frozenAt = now;
    const err = new DatabaseNotAnsweringError(this.options.unansweredMs);
    const stuck = [...this.waiting];
    for (const w of stuck) this.fail(w, err);
    const pending = [...(this.client?.pool?.pendingAcquires ?? [])];
    for (const p of pending) p.reject?.(err);
    this.options.logger?.error(
      { waitingQueries: stuck.length, waitingForConnection: pending.length, unansweredMs: this.options.unansweredMs },
      'database not answering: requests answer 503 until a probe answers',
    );
  }

  private dropProbe(): void {
    this.probe?.abandon();
    this.probe = undefined;
  }

  private startProbe(now: number): void {
    const client = this.client;
    if (!client) return;
    const ms = this.options.unansweredMs;
    // A connection of its own, with the pool's settings: the pooled ones may all be stuck.
    const pg = new client.driver.Client({
      ...client.connectionSettings,
      connectionTimeoutMillis: 2 * ms,
      application_name: 'db-watch-probe',
    });
    pg.on('error', () => {}); // a dropped probe's socket error has nowhere else to go
    let abandoned = false;
    const probe = {
      startedAt: now,
      abandon: () => {
        abandoned = true;
        pg.connection?.stream?.destroy();
      },
      done: Promise.resolve(),
    };
    probe.done = (async () => {
      let answered = false;
      try {
        await pg.connect();
        await pg.query('select 1');
        answered = true;
      } catch {
        /* not answering, or refusing: the next sweep decides */
      }
      if (answered) pg.end().catch(() => {});
      else pg.connection?.stream?.destroy();
      if (this.probe === probe) this.probe = undefined;
      if (!answered || abandoned) return;
      this.lastReplyAt = this.now();
      if (this.frozen) {
        this.frozen = false;
        this.options.logger?.warn({ frozenMs: Math.round(this.now() - this.frozenAt) }, 'database answers again');
      }
    })();
    this.probe = probe;
  }

  async probed(): Promise<void> {
    while (this.probe) await this.probe.done;
  }
}
