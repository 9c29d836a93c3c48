import { performance } from 'node:perf_hooks';
import knexFactory, { type Knex } from 'knex';
import objection from 'objection';

const { knexSnakeCaseMappers } = objection;

/** The part of a pino logger the database layer writes to. */
export interface DbLogger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

export interface KnexOptions {
  poolMax?: number;
  /** How long a request may wait for a connection (and a new connection to open) before it fails: 503 while the database is down. */
  acquireTimeoutMs?: number;
  /**
   * Server side: PostgreSQL cancels a statement running longer (`statement_timeout`); client side:
   * pg gives up on a query whose answer does not come within this plus a second (`query_timeout`),
   * which is what ends a request against a hung server. 0 or unset: no limit (migrations).
   */
  statementTimeoutMs?: number;
  applicationName?: string;
  /**
   * DATABASE_URL is a transaction-mode pooler (PgBouncer): it refuses any start-up parameter it
   * does not know (`unsupported startup parameter: statement_timeout`), so `statement_timeout` is
   * not sent; set it on the role or database instead (`ALTER ROLE … SET statement_timeout`). The
   * client-side limit (`query_timeout`) applies either way.
   */
  transactionPooling?: boolean;
  /** Where knex's own warnings go: one JSON line per event, the same message at most once per 10 s. */
  logger?: DbLogger;
}

/**
 * knex's own log lines (e.g. ~one "Acquire connection error" with a stack per request during an
 * outage) as one short JSON line each, and the same first line at most once per window with a
 * count of those left out, so an outage does not flood the log.
 */
export function throttledKnexLog(logger: DbLogger, windowMs = 10_000, now: () => number = () => performance.now()) {
  const seen = new Map<string, { at: number; suppressed: number }>();
  const emit = (level: 'warn' | 'error' | 'debug') => (message: unknown) => {
    const text = typeof message === 'string' ? message : String((message as Error)?.message ?? message);
    const line = text.split('\n')[0]!.slice(0, 300);
    const t = now();
    const last = seen.get(line);
    if (last && t - last.at < windowMs) {
      last.suppressed++;
      return;
    }
    seen.set(line, { at: t, suppressed: 0 });
    if (seen.size > 100) seen.delete(seen.keys().next().value!);
    logger[level]({ knex: line, suppressedBefore: last?.suppressed ?? 0 }, 'database');
  };
  return { warn: emit('warn'), error: emit('error'), deprecate: emit('warn'), debug: emit('debug') };
}

/**
 * The one way to open the database: pg, snake_case columns mapped to camelCase fields (for knex
 * and for the Objection models bound to it), short connection timeouts and TCP keep-alive so an
 * outage or a hung server answers 503 quickly instead of hanging. The host wraps it with
 * http-kit's `instrumentKnex` so every query is counted into Server-Timing.
 */
export function createKnex(connectionString: string, options: KnexOptions = {}): Knex {
  const statementTimeout = options.statementTimeoutMs ?? 0;
  const knex = knexFactory({
    client: 'pg',
    connection: {
      connectionString,
      connectionTimeoutMillis: options.acquireTimeoutMs ?? 3000,
      application_name: options.applicationName ?? 'meal-planner',
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      ...(statementTimeout > 0 && !options.transactionPooling ? { statement_timeout: statementTimeout } : {}),
    },
    pool: { min: 0, max: options.poolMax ?? 10, idleTimeoutMillis: 30_000, afterCreate: readTimeoutGuard(statementTimeout > 0 ? statementTimeout + 1000 : 0) },
    acquireConnectionTimeout: options.acquireTimeoutMs ?? 3000,
    ...(options.logger ? { log: throttledKnexLog(options.logger) } : {}),
    ...knexSnakeCaseMappers(),
    // Read by http-kit's preparedQuery: a transaction-mode pooler hands each statement to any
    // server connection, where a named statement prepared on another does not exist.
    transactionPooling: options.transactionPooling === true,
  } as Knex.Config);
  return knex;
}

type PgCallback = (err: Error | null, res?: unknown) => void;
interface PgConnection {
  query(...args: unknown[]): unknown;
  connection?: { stream?: { destroy(): void } };
  __knex__disposed?: unknown;
}

/** A query under way on a connection, with the moment its answer is overdue. */
interface Waiting {
  conn: PgConnection;
  deadline: number;
  answer: PgCallback;
}

/**
 * The client-side read timeout of every query (a hung server: the statement timeout never fires
 * because the server does not answer at all), and what follows it.
 *
 * A query that has not answered `readTimeoutMs` after it was sent fails with "Query read timeout"
 * (a 503 to the request), and its connection is closed at once and marked for knex to discard: a
 * transaction whose statement timed out cannot be rolled back (the ROLLBACK would wait behind it),
 * so a connection returned to the pool as good would carry that open transaction into the next
 * request, whose autocommit INSERT would answer success and be lost when the transaction is rolled
 * back. Closing the socket makes the server roll back whatever it had open.
 *
 * Checked by one sweep per pool (every quarter of the timeout, at most every 250 ms; unref'd)
 * instead of pg's own `query_timeout`, which sets a timer per query: measured with
 * `--trace-gc-nvp` (pg 8.23, Node 20), those timers kept every result's rows alive long enough to
 * be promoted into V8's old generation, 0.65 MB per young collection for a statement answering one
 * row per request, and nothing without them. A query is late by at most one sweep.
 */
function readTimeoutGuard(readTimeoutMs: number): (conn: PgConnection, done: (err: Error | null, conn: PgConnection) => void) => void {
  const waiting = new Set<Waiting>();
  let sweep: NodeJS.Timeout | undefined;
  let idleSweeps = 0;
  const check = () => {
    const now = performance.now();
    for (const w of waiting) {
      if (now < w.deadline) continue;
      waiting.delete(w);
      const err = new Error('Query read timeout');
      if (!w.conn.__knex__disposed) {
        w.conn.__knex__disposed = err;
        w.conn.connection?.stream?.destroy();
      }
      w.answer(err);
    }
    // Stopped once nothing has been under way for a few sweeps (an idle pool keeps no timer).
    if (waiting.size) idleSweeps = 0;
    else if (++idleSweeps >= 8) {
      clearInterval(sweep);
      sweep = undefined;
      idleSweeps = 0;
    }
  };
  return (conn, done) => {
    const query = conn.query.bind(conn);
    conn.query = (...args: unknown[]) => {
      const at = args.findIndex((a) => typeof a === 'function');
      if (at < 0 || readTimeoutMs <= 0) return query(...args);
      const callback = args[at] as PgCallback;
      let answered = false;
      const entry: Waiting = {
        conn,
        deadline: performance.now() + readTimeoutMs,
        answer: (err, res) => {
          if (answered) return; // the timeout answered already; the closed socket's error comes after
          answered = true;
          waiting.delete(entry);
          callback(err, res);
        },
      };
      waiting.add(entry);
      // One interval while the pool is busy, not a timer per query.
      sweep ??= setInterval(check, Math.min(250, Math.max(10, readTimeoutMs / 4))).unref();
      args[at] = entry.answer;
      return query(...args);
    };
    done(null, conn);
  };
}

/** One migration of one package. Names sort in the order they run (a timestamp prefix). */
export interface Migration {
  name: string;
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

/** A package's migrations; each package keeps its own history table `knex_migrations_<name>`. */
export interface MigrationSet {
  name: string;
  migrations: Migration[];
}

// Any constant works; it only has to be the same for every instance of this service.
const MIGRATION_LOCK_KEY = 7_320_191_226;

function config(set: MigrationSet): Knex.MigratorConfig {
  return {
    tableName: `knex_migrations_${set.name.replace(/[^a-z0-9_]/gi, '_')}`,
    migrationSource: {
      getMigrations: async () => [...set.migrations].sort((a, b) => a.name.localeCompare(b.name)),
      getMigrationName: (m: Migration) => m.name,
      getMigration: async (m: Migration) => ({ up: m.up, down: m.down }),
    },
  };
}

/**
 * Runs the sets' pending migrations in the order given (dependencies first). An advisory lock,
 * held by a transaction of its own, makes instances that start together take turns, so none sees a
 * half-made schema or races creating the history tables.
 */
export async function runMigrations(knex: Knex, sets: MigrationSet[]): Promise<string[]> {
  const applied: string[] = [];
  await withAdvisoryLock(knex, MIGRATION_LOCK_KEY, async () => {
    for (const set of sets) {
      const [, names] = (await knex.migrate.latest(config(set))) as [number, string[]];
      applied.push(...names.map((n) => `${set.name}/${n}`));
    }
  });
  return applied;
}

/** Rolls every migration of the sets back, last set first (tests and the migration test use it). */
export async function rollbackMigrations(knex: Knex, sets: MigrationSet[]): Promise<void> {
  await withAdvisoryLock(knex, MIGRATION_LOCK_KEY, async () => {
    for (const set of [...sets].reverse()) await knex.migrate.rollback(config(set), true);
  });
}

/**
 * Runs `fn` while a transaction holds the advisory lock `key` (released when it ends). A
 * transaction-level lock rather than a session-level one: behind a transaction-mode pooler
 * (PgBouncer) a session's statements may each run on another server connection, so a session lock
 * could be taken on one and "released" on another, and stay held for good. A transaction keeps
 * its server connection to the end. The wait for the lock may be long (another instance
 * migrating), so this transaction has no statement timeout, whatever the role or session says.
 */
async function withAdvisoryLock<T>(knex: Knex, key: number, fn: () => Promise<T>): Promise<T> {
  return knex.transaction(async (trx) => {
    await trx.raw('set local statement_timeout = 0');
    await trx.raw('select pg_advisory_xact_lock(?)', [key]);
    return fn();
  });
}

/** True when a trivial query answers within `timeoutMs` (readiness; never hangs on a hung server). */
export async function databaseAnswers(knex: Knex, timeoutMs = 2000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    // A hung server would keep `select 1` waiting: the answer is "not ready" once timeoutMs has passed.
    return await Promise.race([knex.raw('select 1').then(() => true), late]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** PostgreSQL error codes a store maps to domain errors. */
export const PG = {
  uniqueViolation: '23505',
  foreignKeyViolation: '23503',
  serializationFailure: '40001',
  deadlockDetected: '40P01',
} as const;

export function isPgError(err: unknown, code: string): boolean {
  if (typeof err !== 'object' || err === null) return false;
  // Objection wraps the driver's error (UniqueViolationError …) and keeps it as `nativeError`.
  const { code: own, nativeError } = err as { code?: unknown; nativeError?: { code?: unknown } };
  return own === code || nativeError?.code === code;
}
