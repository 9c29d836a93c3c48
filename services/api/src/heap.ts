import v8 from 'node:v8';

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
