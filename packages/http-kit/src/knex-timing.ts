import { performance } from 'node:perf_hooks';
import type { Knex } from 'knex';
import { currentContext } from './context.js';

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
  query(config: { name?: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}
interface PooledClient {
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(connection: PgConnection): Promise<unknown>;
}

/**
 * Runs a named (prepared) statement on a connection of the knex pool, for the few hot statements
 * knex cannot name: PostgreSQL plans it once per connection and each later run sends only Bind and
 * Execute. It goes around knex's query events, so it is counted into the request's Server-Timing /
 * X-Diagnostics here, as one query with its time, like every knex query.
 */
export async function preparedQuery<R>(knex: Knex, statement: PreparedStatement): Promise<R[]> {
  const ctx = currentContext();
  const started = performance.now();
  if (ctx) ctx.db.queries += 1;
  const client = knex.client as unknown as PooledClient;
  const connection = await client.acquireConnection();
  try {
    // Behind a transaction-mode pooler (createKnex's `transactionPooling`) the statement goes
    // unnamed: a named one is prepared on one server connection and missing on the next.
    const name = (knex.client.config as { transactionPooling?: boolean }).transactionPooling ? undefined : statement.name;
    return (await connection.query({ name, text: statement.text, values: statement.values })).rows as R[];
  } finally {
    await client.releaseConnection(connection);
    if (ctx) ctx.db.ms += performance.now() - started;
  }
}
