import v8 from 'node:v8';

/**
 * HEAP_GROWING_PERCENT's default: 0, V8's own growth. V8 lets the heap grow past its live data by a
 * factor it derives from the heap's ceiling, which Node sets from the memory the process may use:
 * on a 24 GiB host a busy instance's heap reached 160–200 MB over ~40–60 MB of live data (RSS
 * 250–290 MB) between full collections, while in a container with a memory limit the ceiling, and
 * so the growth, is small by itself. Measured by `npm run bench` on a 2-core VM (quick runs,
 * 2026-11-25): 100 keeps RSS flat at ~199 MB (75: ~191 MB, 50: ~186 MB) but costs GET /me ~5 % of
 * its requests/s and ~5–9 ms of p99, from more frequent full collections. Speed comes first by
 * default; a deployment with a memory budget sets it (the Kubernetes manifest sets 100).
 */
export const HEAP_GROWING_PERCENT_DEFAULT = 0;

/**
 * Applies HEAP_GROWING_PERCENT to this process's V8 (`--heap-growing-percent`; the flag is read at
 * each collection, so setting it after start-up takes effect from the next one). 0 leaves V8's
 * own heuristics.
 */
export function tuneHeap(percent: number): void {
  if (percent > 0) v8.setFlagsFromString(`--heap-growing-percent=${Math.round(percent)}`);
}
