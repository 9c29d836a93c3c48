import { performance } from 'node:perf_hooks';
import knexFactory, { type Knex } from 'knex';
import objection from 'objection';
import { ConnectionWatch } from './watch.js';

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
  /**
   * A database that answers nothing for this long while queries wait (its processes stopped, a
   * hung host: connections stay open, nothing is refused) is taken as frozen once a probe does not
   * answer either: waiting and new queries fail at once (DatabaseNotAnsweringError, a 503) until a
   * probe answers. Default 1000; 0: off (queries then wait for the read timeout). See ConnectionWatch.
   */
  unansweredMs?: number;
  /** Monotonic milliseconds for the watch (tests inject a clock and run `databaseWatch(knex).check()`); performance.now by default. */
  watchClock?: () => number;
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
  // The client-side read timeout of every query (a hung server: the statement timeout never fires
  // because the server does not answer at all) and the frozen-database detector: see ConnectionWatch.
  const watch = new ConnectionWatch({
    readTimeoutMs: statementTimeout > 0 ? statementTimeout + 1000 : 0,
    unansweredMs: options.unansweredMs ?? 1000,
    now: options.watchClock,
    logger: options.logger,
  });
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
    pool: { min: 0, max: options.poolMax ?? 10, idleTimeoutMillis: 30_000, afterCreate: watch.afterCreate },
    acquireConnectionTimeout: options.acquireTimeoutMs ?? 3000,
    ...(options.logger ? { log: throttledKnexLog(options.logger) } : {}),
    ...knexSnakeCaseMappers(),
    // Read by http-kit's preparedQuery: a transaction-mode pooler hands each statement to any
    // server connection, where a named statement prepared on another does not exist.
    transactionPooling: options.transactionPooling === true,
  } as Knex.Config);
  watch.attach(knex);
  return knex;
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
