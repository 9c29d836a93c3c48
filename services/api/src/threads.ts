import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/**
 * HELPER_THREAD_NICE's default: 19, the lowest CPU priority Linux gives a thread, for every thread
 * but the event loop's (libuv's pool, where bcrypt runs; V8's workers), so that on a busy host a
 * login storm's hashing does not take CPU from the requests (docs/benchmarks.md, "What the bench settled").
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
  const taskDir = options.taskDir ?? TASK_DIR;
  if (!taskDir) return 0;
  // fs.promises.readdir is a libuv pool job, and the first pool job starts the whole pool
  // (UV_THREADPOOL_SIZE threads) before it runs: the pool's threads are in the list it reads.
  const tids = await helperThreadIds(taskDir, options.mainThreadId ?? process.pid);
  return niceThreads(tids, nice, options.getPriority, options.setPriority);
}

/** Where Linux lists this process's threads; undefined elsewhere. */
const TASK_DIR = process.platform === 'linux' ? '/proc/self/task' : undefined;

/** Every thread id in `taskDir` but `mainThreadId`'s ([] when it cannot be read). */
async function helperThreadIds(taskDir: string, mainThreadId: number): Promise<number[]> {
  try {
    return (await fs.promises.readdir(taskDir)).map(Number).filter((tid) => Number.isInteger(tid) && tid > 0 && tid !== mainThreadId);
  } catch {
    return [];
  }
}

function osPriority(tid: number): number | undefined {
  try {
    return os.getPriority(tid);
  } catch {
    return undefined;
  }
}

/** Gives each of `tids` the nice value `nice` unless it is already as nice (or has ended); answers how many it changed. */
function niceThreads(
  tids: readonly number[],
  nice: number,
  getPriority: (tid: number) => number | undefined = osPriority,
  setPriority: (tid: number, nice: number) => void = (tid, value) => os.setPriority(tid, value),
): number {
  let lowered = 0;
  for (const tid of tids) {
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

/** One thread's CPU time so far in clock ticks (utime + stime of /proc/self/task/<tid>/stat); undefined when it has ended. */
function threadTicks(taskDir: string, tid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`${taskDir}/${tid}/stat`, 'utf8');
    // The fields after the command name, which is in parentheses and may hold spaces: state is [0], utime [11], stime [12].
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

export interface PoolThreadsOptions {
  /** Where the threads are listed (Linux: /proc/self/task). */
  taskDir?: string;
  /** The event loop's thread id (Linux: the process id). */
  mainThreadId?: number;
  /** libuv's pool size (UV_THREADPOOL_SIZE, default 4). */
  size?: number;
}

/**
 * The thread ids of libuv's pool, found by what they do: `size` CPU-bound pool jobs (PBKDF2 long
 * enough to show in a thread's clock ticks, one per idle pool thread) run at once, and the threads whose CPU time grew the most
 * meanwhile — at least one clock tick each — are the pool's. Node names no thread and starts V8's
 * and libuv's alike; this asks no one. Run it when the process is otherwise quiet (at start).
 * Linux only: elsewhere, or when fewer threads than `size` moved, it answers [].
 */
export async function poolThreadIds(options: PoolThreadsOptions = {}): Promise<number[]> {
  const taskDir = options.taskDir ?? TASK_DIR;
  if (!taskDir) return [];
  const size = options.size ?? Math.max(1, Math.min(1024, Number(process.env.UV_THREADPOOL_SIZE) || 4)) | 0;
  const before = new Map<number, number>();
  for (const tid of await helperThreadIds(taskDir, options.mainThreadId ?? process.pid)) {
    const ticks = threadTicks(taskDir, tid);
    if (ticks !== undefined) before.set(tid, ticks);
  }
  const pbkdf2 = promisify(crypto.pbkdf2);
  await Promise.all(Array.from({ length: size }, (_, i) => pbkdf2(`probe ${i}`, 'libuv pool', 100_000, 64, 'sha512')));
  const grew: Array<{ tid: number; ticks: number }> = [];
  for (const [tid, was] of before) {
    const now = threadTicks(taskDir, tid);
    if (now !== undefined && now > was) grew.push({ tid, ticks: now - was });
  }
  if (grew.length < size) return [];
  return grew
    .sort((a, b) => b.ticks - a.ticks)
    .slice(0, size)
    .map((t) => t.tid)
    .sort((a, b) => a - b);
}

/**
 * Puts the threads `tids` under SCHED_IDLE (they run only when no other thread wants the CPU) with
 * util-linux's `chrt --idle --pid 0 <tid>` (Node has no call for a thread's scheduling policy;
 * lowering it needs no privilege). Answers how many it changed: 0 where there is no `chrt`.
 */
export async function idleThreads(tids: readonly number[], run: (file: string, args: string[]) => Promise<unknown> = execFileAsync): Promise<number> {
  let changed = 0;
  for (const tid of tids) {
    try {
      await run('chrt', ['--idle', '--pid', '0', String(tid)]);
      changed++;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    }
  }
  return changed;
}

/** What `prioritizeEventLoop` did. */
export interface ThreadPriorities {
  /** Helper threads given HELPER_THREAD_NICE. */
  lowered: number;
  /** libuv's pool threads as `poolThreadIds` found them. */
  pool: number[];
  /** How the pool runs: `idle` (SCHED_IDLE), `nice` (no `chrt`: nice 19) or `as-is`. */
  poolPolicy: 'idle' | 'nice' | 'as-is';
}

/**
 * At start: every helper thread at nice `nice` (lowerHelperThreadPriority), then, with `idlePool`,
 * libuv's pool — where bcrypt runs — under SCHED_IDLE, or at nice 19 where `chrt` is missing: the
 * pool then runs only when nothing else wants a CPU (docs/benchmarks.md, "What the bench settled").
 */
export async function prioritizeEventLoop(nice: number, idlePool: boolean): Promise<ThreadPriorities> {
  const lowered = await lowerHelperThreadPriority(nice);
  if (!idlePool) return { lowered, pool: [], poolPolicy: 'as-is' };
  const pool = await poolThreadIds();
  if (!pool.length) return { lowered, pool, poolPolicy: 'as-is' };
  if ((await idleThreads(pool)) === pool.length) return { lowered, pool, poolPolicy: 'idle' };
  niceThreads(pool, 19);
  return { lowered, pool, poolPolicy: 'nice' };
}
