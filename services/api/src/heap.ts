import v8 from 'node:v8';

/**
 * How the service's node process is started (`npm start`, the Dockerfile, the bench, the ops
 * cluster; a test holds them equal): Node 24's V8 sizes the young generation from the host's memory,
 * glibc gives every thread an arena, and glibc's mmap threshold slides up after a large buffer is
 * freed, so later ones fragment its heap (held fixed at its 128 kB start). Why these values:
 * docs/benchmarks.md, "What the bench settled".
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8'];
export const SERVICE_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072' };

/** HEAP_GROWING_PERCENT's default: keeps a busy instance's RSS flat without slowing reads (docs/benchmarks.md, "What the bench settled"). */
export const HEAP_GROWING_PERCENT_DEFAULT = 40;

/**
 * Applies HEAP_GROWING_PERCENT to this process's V8 (`--heap-growing-percent`; the flag is read at
 * each collection, so setting it after start-up takes effect from the next one). 0 leaves V8's
 * own heuristics.
 */
export function tuneHeap(percent: number): void {
  if (percent > 0) v8.setFlagsFromString(`--heap-growing-percent=${Math.round(percent)}`);
}
