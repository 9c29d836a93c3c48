import fs from 'node:fs';
import os from 'node:os';

/**
 * HELPER_THREAD_NICE's default: 19, the lowest CPU priority Linux gives a thread.
 *
 * One Node process is one thread that serves every request (the event loop) and helper threads
 * that do work for it in the background: libuv's pool (bcrypt of every login, sign-up and password
 * change — a fifth of a second of CPU each at cost 12 — and fs, dns.lookup, zlib), V8's platform
 * workers (concurrent and parallel garbage collection, compilation). Linux schedules them all as
 * equals, so on a busy small host a login storm's bcrypt takes CPU slices away from the event loop
 * and every other request waits for them. Measured by `npm run bench -- --only storm` on a 2-core VM
 * (2026-11-26, GET /me p99 at 20 connections before → during 20 concurrent logins, median of 3):
 * all threads equal 17.4 → 28.1 ms (1.62×) and 15.4 → 25.3 ms (1.64×); libuv's pool at nice 19
 * 15.4 → 18.4 ms (1.19×); V8's workers at 19 11.6 → 25.5 ms; every helper at 19 10.4 → 13.9 ms
 * (1.34×), with the event-loop delay p99 during the storm 11.3 → 6.5 ms. Logins went from 4.4 to
 * 3.5–3.8 a second while GET /me saturated the machine; on an idle one they take the whole core as
 * before (nice only matters when threads compete for a CPU).
 */
export const HELPER_THREAD_NICE_DEFAULT = 19;

export interface ThreadPriorityOptions {
  /** Where the threads are listed (Linux: /proc/self/task). */
  taskDir?: string;
  /** The event loop's thread id (Linux: the process id). */
  mainThreadId?: number;
  /** Sets one thread's nice value (Linux: setpriority(PRIO_PROCESS, tid), which is per thread). */
  setPriority?: (tid: number, nice: number) => void;
  /** Reads one thread's nice value; undefined when the thread has ended. */
  getPriority?: (tid: number) => number | undefined;
}

/**
 * Gives every thread of this process but the event loop's the nice value `nice` (1–19; 0 does
 * nothing), so that under contention the event loop runs first and the helpers take what is left.
 * Linux only: elsewhere (and where /proc is not mounted) it does nothing and returns 0. Raising a
 * nice value needs no privilege; a thread already nicer than `nice` is left as it is.
 *
 * libuv starts its pool on the first job it is given and V8 its workers at start-up; the threads
 * are listed by a pool job, so the pool exists when they are. Threads started later (a worker_thread)
 * inherit the event loop's priority and are left alone. Returns how many threads it lowered.
 * `os.setPriority(tid)` is setpriority(2) with a thread id, which on Linux sets that thread alone.
 */
export async function lowerHelperThreadPriority(nice: number, options: ThreadPriorityOptions = {}): Promise<number> {
  if (!Number.isInteger(nice) || nice < 0 || nice > 19) throw new RangeError(`nice must be a whole number from 0 to 19, not ${nice}`);
  if (nice === 0) return 0;
  const taskDir = options.taskDir ?? (process.platform === 'linux' ? '/proc/self/task' : undefined);
  if (!taskDir) return 0;
  const mainThreadId = options.mainThreadId ?? process.pid;
  const setPriority = options.setPriority ?? ((tid: number, value: number) => os.setPriority(tid, value));
  const getPriority =
    options.getPriority ??
    ((tid: number) => {
      try {
        return os.getPriority(tid);
      } catch {
        return undefined;
      }
    });
  // fs.promises.readdir is a libuv pool job, and the first pool job starts the whole pool
  // (UV_THREADPOOL_SIZE threads) before it runs: the pool's threads are in the list it reads.
  let tids: number[];
  try {
    tids = (await fs.promises.readdir(taskDir)).map(Number).filter((tid) => Number.isInteger(tid) && tid > 0);
  } catch {
    return 0;
  }
  let lowered = 0;
  for (const tid of tids) {
    if (tid === mainThreadId) continue;
    const current = getPriority(tid);
    if (current === undefined || current >= nice) continue;
    try {
      setPriority(tid, nice);
      lowered++;
    } catch {
      // The thread ended between the listing and now.
    }
  }
  return lowered;
}
