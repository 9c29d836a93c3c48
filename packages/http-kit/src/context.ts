import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';

/** What one request has spent so far; read by the Server-Timing and X-Diagnostics headers. */
export interface RequestContext {
  traceId: string;
  startedAt: number;
  db: { ms: number; queries: number };
  steps: { name: string; ms: number }[];
  /** Start times of queries in flight, keyed by knex's query uid. */
  inFlight: Map<string, number>;
}

const storage = new AsyncLocalStorage<RequestContext>();

export function newRequestContext(traceId: string): RequestContext {
  return { traceId, startedAt: performance.now(), db: { ms: 0, queries: 0 }, steps: [], inFlight: new Map() };
}

/** Runs `fn` with `ctx` as the current request context. */
export function runWithContext<T>(ctx: RequestContext, fn: () => T): T {
  return storage.run(ctx, fn);
}

export function currentContext(): RequestContext | undefined {
  return storage.getStore();
}

/** Names a step of a handler; it shows as `<name>;dur=<ms>` in Server-Timing. Outside a request it just runs. */
export async function step<T>(name: string, fn: () => Promise<T> | T): Promise<T> {
  const ctx = storage.getStore();
  const started = performance.now();
  try {
    return await fn();
  } finally {
    ctx?.steps.push({ name, ms: performance.now() - started });
  }
}

export const timing = { step };

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/** Step names are HTTP tokens in Server-Timing; anything else becomes '_'. */
function token(name: string): string {
  return name.replace(/[^A-Za-z0-9!#$%&'*+.^_`|~-]/g, '_') || '_';
}

export function serverTimingHeader(ctx: RequestContext, now = performance.now()): string {
  const parts = [
    `total;dur=${round(now - ctx.startedAt)}`,
    `db;dur=${round(ctx.db.ms)};desc="${ctx.db.queries} queries"`,
    ...ctx.steps.map((s) => `${token(s.name)};dur=${round(s.ms)}`),
  ];
  return parts.join(', ');
}

export function diagnosticsHeader(ctx: RequestContext, now = performance.now()): string {
  return JSON.stringify({
    traceId: ctx.traceId,
    totalMs: round(now - ctx.startedAt),
    db: { ms: round(ctx.db.ms), queries: ctx.db.queries },
    steps: ctx.steps.map((s) => ({ name: s.name, ms: round(s.ms) })),
  });
}
