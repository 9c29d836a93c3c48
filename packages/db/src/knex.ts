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
  /** How long a request may wait for a pooled connection, and a new connection to open, before it fails: 503 while the database is down (default 3000; at most `unansweredMs`). */
  acquireTimeoutMs?: number;
  /**
   * Server side: PostgreSQL cancels a statement running longer (`statement_timeout`, a 503). 0 or
   * unset: no limit (migrations).
   */
  statementTimeoutMs?: number;
  /**
   * Client side: a query the server does not answer within this fails (pg's `query_timeout`, "Query
   * read timeout", a 503), and so do a wait for a pooled connection and a connection being opened.
   * What ends a request against a frozen server (processes stopped, a hung host: connections stay
   * open, nothing is refused), where `statement_timeout` never fires. Keep it above
   * `statementTimeoutMs`, so a merely slow statement is cancelled by the server first. Default (and
   * 0): `statementTimeoutMs` + 1000 (none without a statement timeout).
   */
  unansweredMs?: number;
  /**
   * `idle_in_transaction_session_timeout`: the server ends a session left idle inside a
   * transaction this long (default 60000 with a statement timeout, else none).
   */
  idleInTransactionTimeoutMs?: number;
  applicationName?: string;
  /**
   * DATABASE_URL is a transaction-mode pooler (PgBouncer): it refuses any start-up parameter it
   * does not know (`unsupported startup parameter: statement_timeout`), so `statement_timeout` and
   * `idle_in_transaction_session_timeout` are not sent; set them on the role or database instead
   * (`ALTER ROLE … SET statement_timeout`). The client-side limits apply either way.
   */
  transactionPooling?: boolean;
  /** Where knex's own warnings go, and the database's "not answering" / "answers again" lines: one JSON line per event, the same message at most once per 10 s. */
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

/** pg's Client, as far as the pool's validation reads it. */
interface PgClient {
  /** False while a query is under way (or was given up by `query_timeout` and never answered). */
  readyForQuery: boolean;
  /** 'I' outside a transaction, as of the server's last ReadyForQuery. */
  getTransactionStatus(): string | null;
}

/**
 * The one way to open the database: pg, snake_case columns mapped to camelCase fields (for knex
 * and for the Objection models bound to it), and the driver's and the server's own timeouts so an
 * outage or a hung server answers 503 quickly instead of hanging: `statement_timeout` (server),
 * pg's `query_timeout` (no answer at all), `connectionTimeoutMillis` and the pool's acquire
 * timeout, TCP keep-alive, `idle_in_transaction_session_timeout`. A connection handed back with a
 * query still unanswered (given up by `query_timeout`) or inside a transaction (its ROLLBACK timed
 * out) is never handed out again: the pool's `validate` discards it, and the server rolls back
 * whatever it held when it reads the close. The host
 * wraps the knex with http-kit's `instrumentKnex` so every query is counted into Server-Timing.
 */
export function createKnex(connectionString: string, options: KnexOptions = {}): Knex {
  const statementTimeout = options.statementTimeoutMs ?? 0;
  const queryTimeout = options.unansweredMs || (statementTimeout > 0 ? statementTimeout + 1000 : 0);
  const acquireTimeout = Math.min(options.acquireTimeoutMs ?? 3000, queryTimeout || Number.POSITIVE_INFINITY);
  const idleInTransaction = options.idleInTransactionTimeoutMs ?? (statementTimeout > 0 ? 60_000 : 0);
  const serverSide = !options.transactionPooling;
  const knex = knexFactory({
    client: 'pg',
    connection: {
      connectionString,
      connectionTimeoutMillis: acquireTimeout,
      application_name: options.applicationName ?? 'meal-planner',
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      ...(queryTimeout > 0 ? { query_timeout: queryTimeout } : {}),
      ...(statementTimeout > 0 && serverSide ? { statement_timeout: statementTimeout } : {}),
      ...(idleInTransaction > 0 && serverSide ? { idle_in_transaction_session_timeout: idleInTransaction } : {}),
    },
    pool: {
      min: 0,
      max: options.poolMax ?? 10,
      idleTimeoutMillis: 30_000,
      // Only a connection with nothing under way, outside any transaction, goes to the next request.
      validate: (conn: PgClient) => conn.readyForQuery && conn.getTransactionStatus() === 'I',
    },
    acquireConnectionTimeout: acquireTimeout,
    ...(options.logger ? { log: throttledKnexLog(options.logger) } : {}),
    ...knexSnakeCaseMappers(),
    // Read by http-kit's preparedQuery: a transaction-mode pooler hands each statement to any
    // server connection, where a named statement prepared on another does not exist.
    transactionPooling: options.transactionPooling === true,
  } as Knex.Config);
  if (options.logger && queryTimeout > 0) logOutages(knex, options.logger, queryTimeout);
  return knex;
}

/**
 * One error line when queries start timing out ("database not answering") and one warning when an
 * answer comes again, with how long it lasted: from knex's public query events.
 */
function logOutages(knex: Knex, logger: DbLogger, unansweredMs: number, now: () => number = () => performance.now()): void {
  let since: number | undefined;
  knex.on('query-error', (err: unknown) => {
    if (since !== undefined || !(err instanceof Error) || !/Query read timeout/.test(err.message)) return;
    since = now();
    logger.error({ unansweredMs }, 'database not answering: requests answer 503 until it answers again');
  });
  knex.on('query-response', () => {
    if (since === undefined) return;
    logger.warn({ notAnsweringMs: Math.round(now() - since) }, 'database answers again');
    since = undefined;
  });
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
 * migrating), so this transaction has no statement timeout, whatever the role or session says,
 * and its wait no client-side read timeout, whatever the pool's.
 */
async function withAdvisoryLock<T>(knex: Knex, key: number, fn: () => Promise<T>): Promise<T> {
  return knex.transaction(async (trx) => {
    await trx.raw('set local statement_timeout = 0');
    // Nor the pool's client-side read timeout (pg's per-query `query_timeout` outranks the pool's).
    await trx.raw('select pg_advisory_xact_lock(?)', [key]).options({ query_timeout: LOCK_WAIT_MS });
    return fn();
  });
}

/** How long an instance waits for another's migrations at most (pg's timer cannot be unbounded). */
const LOCK_WAIT_MS = 30 * 60_000;

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
  lockNotAvailable: '55P03',
} as const;

/** The one check of a PostgreSQL error code: the driver's error, or Objection's DBError wrapping it (`nativeError`). */
export function isPgError(err: unknown, code: string): boolean {
  if (typeof err !== 'object' || err === null) return false;
  // Objection wraps the driver's error (UniqueViolationError …) and keeps it as `nativeError`.
  const { code: own, nativeError } = err as { code?: unknown; nativeError?: { code?: unknown } };
  return own === code || nativeError?.code === code;
}
