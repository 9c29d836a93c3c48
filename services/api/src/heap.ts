import v8 from 'node:v8';

/**
 * How the service's node process is started (`npm start`, the Dockerfile, the bench, the ops
 * cluster; a test holds them equal): Node 24's V8 sizes the young generation from the host's memory
 * (64 MB semi-spaces on a 24 GB host, 16 MB on Node 20), and glibc gives every thread an arena.
 * Why these values: docs/benchmarks.md, "Runtime flags on Node 24" and the 8 MB semi-spaces of
 * "Short run after this session's merges".
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8'];
export const SERVICE_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };

/** HEAP_GROWING_PERCENT's default: keeps a busy instance's RSS flat without slowing reads (the bench's runs: docs/benchmarks.md). */
export const HEAP_GROWING_PERCENT_DEFAULT = 40;

/**
 * Applies HEAP_GROWING_PERCENT to this process's V8 (`--heap-growing-percent`; the flag is read at
 * each collection, so setting it after start-up takes effect from the next one). 0 leaves V8's
 * own heuristics.
 */
export function tuneHeap(percent: number): void {
  if (percent > 0) v8.setFlagsFromString(`--heap-growing-percent=${Math.round(percent)}`);
}
