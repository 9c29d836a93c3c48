import v8 from 'node:v8';

/**
 * HEAP_GROWING_PERCENT's default. V8 grows a heap by a factor it derives from the heap's ceiling,
 * which Node sets from the machine's memory: on a 24 GiB host a busy instance's heap reached
 * 170–200 MB over ~55 MB of live data (RSS 250–290 MB) before a full collection. Growing by at most
 * this share past the live data keeps the instance's RSS flat under 200 MB at the cost of more
 * frequent (incremental) full collections; `npm run bench` measures both sides.
 */
export const HEAP_GROWING_PERCENT_DEFAULT = 50;

/**
 * Applies HEAP_GROWING_PERCENT to this process's V8 (the flag is read at each collection, so
 * setting it after start-up takes effect from the next one). 0 leaves V8's own heuristics.
 */
export function tuneHeap(percent: number): void {
  if (percent > 0) v8.setFlagsFromString(`--heap-growing-percent=${Math.round(percent)}`);
}
