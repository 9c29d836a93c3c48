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
