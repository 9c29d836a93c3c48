import v8 from 'node:v8';

/**
 * HEAP_GROWING_PERCENT's default: 40. V8 lets the heap grow past its live data by a factor it
 * derives from the heap's ceiling, which Node sets from the memory the process may use: on a
 * 24 GiB host, with V8's own growth (0), a busy instance's heap reached 160–200 MB over ~40–70 MB
 * of live data (RSS 250–290 MB, not flat) between full collections. Measured by `npm run bench`
 * on a 2-core VM (2026-11-25): 100 keeps RSS flat at 199–202 MB (full run), 75 at 190–191 MB,
 * 50 at ~186 MB; GET /me's share of the Express ceiling stayed within run-to-run noise at 75 and
 * 100 (the first runs had it −5 % with +5–9 ms of p99), from more frequent full collections. One
 * instance of several behind a balancer should stay within a known budget, so 75 was the default.
 * 2026-11-26, after more reads were lent to the session statement (more statement variants and
 * read paths warm in the process): 75 gave 193–200 MB in the RSS rounds (one round at 200.3 MB, the
 * target's edge; the commit before, 190–194 MB), 60 gave 186–191 MB, and interleaved A/B runs of
 * GET /me, household and events page 1 showed no difference in req/s or CPU per request beyond
 * run-to-run noise (±8 %). So 60 was the default.
 * 2026-11-26 evening, once requests were made with Express's prototypes (http-kit createHttpServer)
 * and almost nothing a request allocates reaches the old generation any more: full collections
 * became rare, the old generation filled with what little is promoted up to its limit, and 60 gave
 * 197–202 MB (one round 202.1 MB: a miss); 40 gave 180–185 MB with GET /me, household and events
 * page 1 within run-to-run noise. So 40 is the default; 0 gives V8's own heuristics back.
 * 2026-11-27: 40 gave 189–199 MB in the RSS rounds of full runs (one round at 198.9 MB). 25 gave
 * 177–184 MB, but four interleaved runs (25, 40, 25, 40; GET /me, household, one event, events
 * page 1,000) had GET /me at 14,544 / 14,966 req/s (0.07 ms of CPU) at 25 against 17,325 / 18,377
 * (0.05–0.06 ms) at 40, the other reads 3–10 % slower too, and a full run at 25 missed three of the
 * "within 20 % of GET /me" bars; 32 gave 182–190 MB and no faster reads. So 40 stays.
 */
export const HEAP_GROWING_PERCENT_DEFAULT = 40;

/**
 * Applies HEAP_GROWING_PERCENT to this process's V8 (`--heap-growing-percent`; the flag is read at
 * each collection, so setting it after start-up takes effect from the next one). 0 leaves V8's
 * own heuristics.
 */
export function tuneHeap(percent: number): void {
  if (percent > 0) v8.setFlagsFromString(`--heap-growing-percent=${Math.round(percent)}`);
}
