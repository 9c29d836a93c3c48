import { AsyncResource } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';
import DataLoader from 'dataloader';
import type { Knex } from 'knex';
import { currentContext, type RequestContext } from './context.js';

interface QueryEvent {
  __knexQueryUid?: string;
}

const instrumented = new WeakSet<object>();

/**
 * Counts every query a request makes, and its time, into the request's context. Knex emits
 * `query` in the caller's async context, and the response continues in it, so no id plumbing
 * is needed. Safe to call more than once on the same instance.
 */
export function instrumentKnex(knex: Knex): Knex {
  if (instrumented.has(knex)) return knex;
  instrumented.add(knex);
  knex.on('query', (q: QueryEvent) => {
    const ctx = currentContext();
    if (!ctx) return;
    ctx.db.queries += 1;
    if (q.__knexQueryUid) ctx.inFlight.set(q.__knexQueryUid, performance.now());
  });
  const done = (_err: unknown, q: QueryEvent) => {
    const ctx = currentContext();
    if (!ctx || !q?.__knexQueryUid) return;
    const started = ctx.inFlight.get(q.__knexQueryUid);
    if (started === undefined) return;
    ctx.inFlight.delete(q.__knexQueryUid);
    ctx.db.ms += performance.now() - started;
  };
  knex.on('query-response', (_res: unknown, q: QueryEvent) => done(undefined, q));
  knex.on('query-error', (err: unknown, q: QueryEvent) => done(err, q));
  return knex;
}

/** A statement for `preparedQuery`: pg's named form, so each pooled connection parses it once. */
export interface PreparedStatement {
  /** Unique per statement text (pg refuses one name for two texts on a connection). */
  name: string;
  text: string;
  values: unknown[];
}

interface PgConnection {
  query(config: { name?: string; text: string; values: unknown[] }, callback: (err: Error | null, result?: { rows: unknown[] }) => void): void;
}

/**
 * pg's query in its callback form, as a promise of our own. pg's promise form (no callback) kept
 * each result's rows alive long enough to be promoted into V8's old generation, the callback form
 * did not (docs/benchmarks.md, "What the bench settled"). pg's `query_timeout` (createKnex) applies to it as to every query.
 */
function runQuery(connection: PgConnection, config: { name?: string; text: string; values: unknown[] }): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    connection.query(config, (err, result) => (err ? reject(err) : resolve(result!.rows)));
  });
}
interface PooledClient {
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(connection: PgConnection): Promise<unknown>;
}

/**
 * Runs a named (prepared) statement on a connection of the knex pool, for the few hot statements
 * knex cannot name: PostgreSQL plans it once per connection and each later run sends only Bind and
 * Execute. It goes around knex's query events, so it is counted into the request's Server-Timing /
 * X-Diagnostics here, as one query with its time, like every knex query: into the current
 * request's, or into each of `contexts` when the statement answers several requests at once
 * (PreparedBatch).
 */
export async function preparedQuery<R>(knex: Knex, statement: PreparedStatement, contexts?: readonly (RequestContext | undefined)[]): Promise<R[]> {
  const counted = contexts ?? [currentContext()];
  const started = performance.now();
  for (const ctx of counted) if (ctx) ctx.db.queries += 1;
  const client = knex.client as unknown as PooledClient;
  const connection = await client.acquireConnection();
  try {
    // Behind a transaction-mode pooler (createKnex's `transactionPooling`) the statement goes
    // unnamed: a named one is prepared on one server connection and missing on the next.
    const name = (knex.client.config as { transactionPooling?: boolean }).transactionPooling ? undefined : statement.name;
    let rows: unknown[];
    try {
      rows = await runQuery(connection, { name, text: statement.text, values: statement.values });
    } catch (err) {
      // Reported as knex reports its own queries' outcomes (its public events), so what listens to
      // them — @svc/db's outage log, "database not answering" — hears these statements too.
      knex.emit('query-error', err, { sql: statement.text });
      throw err;
    }
    knex.emit('query-response', rows, { sql: statement.text });
    return rows as R[];
  } finally {
    await client.releaseConnection(connection);
    const ms = performance.now() - started;
    for (const ctx of counted) if (ctx) ctx.db.ms += ms;
  }
}

/** The keys a declared read is bound by as a statement of its own (`StandaloneRead.values` of `@svc/db`); a key left out is null. */
export interface StandaloneKeys {
  /** The household (uuid) of a household read. */
  household?: string;
  /** The path's other parameter. */
  arg?: string;
  /** The account (uuid) of an account read. */
  account?: string;
  /** The clock rows are unexpired by. */
  now?: Date;
  /** The session being read: a `session` field is true for its row. */
  session?: string;
}

/** A declared read as a statement of its own, as `standaloneRead` of `@svc/db` makes it: one row, its answer in `value`. */
export interface StandaloneStatement {
  /** The statement's name (prepared once per connection). */
  readonly name: string;
  /** Its text: one row, the answer in its column `value`. */
  readonly text: string;
  /** The values of its parameters for `keys`. */
  values(keys: StandaloneKeys): unknown[];
}

/**
 * What a declared read answers for `keys` when the read kernel did not lend it (a transaction, a
 * path the kernel does not serve): its own compiled SQL run as a prepared statement on `knex` (or
 * the transaction given as `knex`), so a read has one SQL however it is loaded. `T` is what the read
 * loads (its `ReadDeclaration<T>`); null when the statement answers no value (a single read without
 * its row).
 */
export async function loadStandalone<T>(knex: Knex, statement: StandaloneStatement, keys: StandaloneKeys): Promise<T | null> {
  const [row] = await preparedQuery<{ value: T | null }>(knex, { name: statement.name, text: statement.text, values: statement.values(keys) });
  return row?.value ?? null;
}

/** The statements a PreparedBatch runs. */
export interface PreparedBatchOptions<K> {
  /**
   * The statement for `keys` (at least one, at most `max`, in the order they were asked for): it
   * answers at most one row per key, carrying the key's 1-based position in `keys` as
   * `batch_index` (an integer; `unnest(…) with ordinality` gives it). Called once per run, when
   * the batch is sent, so a value it reads (the clock) is read then.
   */
  statement(keys: readonly K[]): PreparedStatement;
  /** The most keys in one statement (default 100); more asked for in one turn go in several. */
  max?: number;
}

/**
 * Lookups of one kind asked for during one turn of the event loop, answered by ONE prepared
 * statement run when the turn's I/O callbacks are done (`setImmediate`): under load, the requests
 * a turn parsed share one round trip, one Bind/Execute and one pooled connection instead of each
 * taking their own, so PostgreSQL runs one statement where it ran many, and the process writes to
 * and reads from its socket once. Each caller still gets only its own row (`undefined`: none), and
 * each request counts the statement as one query of its own (Server-Timing, X-Diagnostics). A
 * lookup alone in its turn is one statement, as before, a turn's I/O later at most. A failed
 * statement fails every lookup it carried. The batching is DataLoader's (no cache: every lookup
 * reads the database), scheduled at `setImmediate`.
 */
export class PreparedBatch<K, R> {
  private readonly loader: DataLoader<{ key: K; ctx: RequestContext | undefined }, R | undefined>;

  constructor(knex: Knex, options: PreparedBatchOptions<K>) {
    // The statement runs in no request's context: it is counted into each request explicitly.
    const scope = new AsyncResource('prepared-batch');
    this.loader = new DataLoader(
      async (items) => {
        const rows = await preparedQuery<R & { batch_index: number | string }>(
          knex,
          options.statement(items.map((w) => w.key)),
          items.map((w) => w.ctx),
        );
        const found: (R | undefined)[] = new Array(items.length).fill(undefined);
        for (const row of rows) found[Number(row.batch_index) - 1] = row;
        return found;
      },
      { cache: false, maxBatchSize: Math.max(1, options.max ?? 100), batchScheduleFn: (run) => scope.runInAsyncScope(() => setImmediate(run)) },
    );
  }

  /** The row for `key`, from the statement that carries it with the other keys of this turn. */
  load(key: K): Promise<R | undefined> {
    return this.loader.load({ key, ctx: currentContext() });
  }
}
