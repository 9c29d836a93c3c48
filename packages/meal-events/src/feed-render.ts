import { fork } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { createGzip } from 'node:zlib';
import type { KnexOptions } from '@svc/db';
import { type FeedStreamInput, renderFeedChunks } from './ics.js';
import type { CalendarEvent, EventPosition, MealEventStore } from './store/index.js';

/** A rendered feed as an instance keeps it: gzip-compressed (a feed's text repeats itself: a small part of its size). */
export interface RenderedFeed {
  /** The iCalendar text, gzip-compressed. */
  gzip: Buffer;
  /** Bytes of the text itself. */
  bytes: number;
}

/** Renders the feed and compresses it as it goes (zlib works off the event loop). */
export async function renderCompressed(input: FeedStreamInput): Promise<RenderedFeed> {
  const gz = createGzip();
  const out: Buffer[] = [];
  gz.on('data', (b: Buffer) => out.push(b));
  const done = once(gz, 'end');
  let bytes = 0;
  for await (const chunk of renderFeedChunks(input)) {
    const data = Buffer.from(chunk, 'utf8');
    bytes += data.length;
    if (!gz.write(data)) await once(gz, 'drain');
  }
  gz.end();
  await done;
  return { gzip: Buffer.concat(out), bytes };
}

/** The household's events from `from` to `to` (YYYY-MM-DD), `pageSize` at a time in list order, each page read once the one before is taken. */
export async function* windowPages(events: MealEventStore, householdId: string, from: string, to: string, pageSize: number): AsyncGenerator<CalendarEvent[]> {
  for (let after: EventPosition | null = null; ; ) {
    const page = await events.calendarWindow(householdId, from, to, { after, limit: pageSize });
    yield page;
    if (page.length < pageSize) return;
    const last = page.at(-1)!;
    after = { date: last.date, servingTime: last.servingTime, id: last.id };
  }
}

/** The database a rendering thread reads the window from over a connection of its own (`createKnex`'s URL and options). */
export interface FeedDatabase {
  url: string;
  options?: Pick<KnexOptions, 'statementTimeoutMs' | 'transactionPooling' | 'unansweredMs' | 'acquireTimeoutMs' | 'applicationName'>;
}

/** The window a rendering thread reads itself (`windowPages` over its own connection to `database`). */
export interface FeedWindow {
  database: FeedDatabase;
  householdId: string;
  from: string;
  to: string;
  pageSize: number;
}

/**
 * What the worker is started with: the feed's input but its pages, which it reads itself when
 * `window` is given, and otherwise receive as messages.
 */
export type FeedWorkerData = Omit<FeedStreamInput, 'pages'> & { window?: FeedWindow; nice?: number };

/** Messages from the worker: a page taken (send the next), the result, or what went wrong. */
export type FeedWorkerMessage = { took: true } | { done: RenderedFeed } | { error: string };

/**
 * The calendar rendering's threads to the nice value `nice` (Linux: setpriority by thread id):
 * the calling thread (`/proc/thread-self`), or every thread of the process (`/proc/self/task`;
 * threads started later inherit it from the thread that starts them). Elsewhere nothing.
 */
export function lowerPriority(nice: number, which: 'thread' | 'process'): void {
  let tids: string[];
  try {
    tids = which === 'thread' ? [fs.readlinkSync('/proc/thread-self').split('/').pop()!] : fs.readdirSync('/proc/self/task');
  } catch {
    return; // not Linux, or /proc not mounted: the priority stays the event loop's
  }
  for (const tid of tids) {
    try {
      os.setPriority(Number(tid), nice);
    } catch {
      // A thread gone meanwhile.
    }
  }
}

/** The rendering process's one message: the result, or what went wrong. */
export type FeedProcessMessage = { done: RenderedFeed } | { error: string };

/** A rendering stopped after its time (`renderInWorker`'s and `renderInProcess`'s `timeoutMs`). */
export class FeedRenderTimeout extends Error {
  constructor(readonly timeoutMs: number) {
    super(`The calendar feed was not rendered within ${timeoutMs} ms`);
  }
}

// In the sources (tests run them through tsx) the worker and the process are the .ts files beside this one.
const SOURCES = import.meta.url.endsWith('.ts');
const WORKER_URL = new URL(SOURCES ? './feed-worker.ts' : './feed-worker.js', import.meta.url);
const PROCESS_PATH = fileURLToPath(new URL(SOURCES ? './feed-process.ts' : './feed-process.js', import.meta.url));

/**
 * `renderCompressed` on a worker thread, handed the pages read here one at a time, the next read
 * while the worker renders one (at most two pages on their way): rendering the largest household's
 * feed makes seconds of work and tens of MB of garbage, which there hold neither this thread's
 * event loop nor its heap's collections. (A rendering that reads its window itself runs in a
 * process of its own: `renderInProcess`.) `nice` (Linux, 1–19) lowers the rendering's CPU
 * priority, so that on a busy host the event loop runs first and the rendering takes what is left.
 */
export async function renderInWorker(input: FeedStreamInput, options: { timeoutMs?: number; nice?: number } = {}): Promise<RenderedFeed> {
  const { pages, ...data } = input;
  const worker = new Worker(WORKER_URL, { workerData: { ...data, nice: options.nice } satisfies FeedWorkerData });
  // A rendering that outlasts its time is stopped (the thread ends), so no feed costs without bound.
  let timedOut = false;
  const timer = options.timeoutMs
    ? setTimeout(() => {
        timedOut = true;
        void worker.terminate();
      }, options.timeoutMs)
    : undefined;
  try {
    let took = 0;
    let wake: (() => void) | undefined;
    let failure: Error | undefined;
    let result: RenderedFeed | undefined;
    const finished = new Promise<void>((resolve) => {
      worker.on('message', (m: FeedWorkerMessage) => {
        if ('took' in m) took++;
        else if ('done' in m) {
          result = { gzip: Buffer.from(m.done.gzip), bytes: m.done.bytes };
          resolve();
        } else {
          failure = new Error(`calendar feed worker: ${m.error}`);
          resolve();
        }
        wake?.();
      });
      worker.on('error', (err) => {
        failure = err;
        resolve();
        wake?.();
      });
      worker.on('exit', (code) => {
        if (!result && !failure) failure = new Error(`calendar feed worker exited with ${code}`);
        resolve();
        wake?.();
      });
    });
    let sent = 0;
    for await (const page of pages) {
      while (sent - took >= 2 && !failure) await new Promise<void>((resolve) => (wake = resolve));
      if (failure) throw timedOut ? new FeedRenderTimeout(options.timeoutMs!) : failure;
      worker.postMessage(page);
      sent++;
    }
    worker.postMessage(null);
    await finished;
    if (failure) throw timedOut ? new FeedRenderTimeout(options.timeoutMs!) : failure;
    return result!;
  } finally {
    clearTimeout(timer);
    await worker.terminate();
  }
}

/**
 * `renderCompressed` of a window in a process of its own (feed-process.ts), which reads the window
 * over a connection of its own and answers the compressed text. A process, not a thread: a thread
 * shares the service's address space, its malloc arenas and V8's helper threads, and a rendering
 * thread at a low priority that holds one of those while a busy host runs other work leaves the
 * event loop waiting for it (docs/decisions.md, issue 47). A rendering that outlasts `timeoutMs`
 * is killed: FeedRenderTimeout. The process ends with the service (its IPC channel closes).
 */
export async function renderInProcess(
  input: Omit<FeedStreamInput, 'pages'> & { window: FeedWindow },
  options: { timeoutMs?: number; nice?: number } = {},
): Promise<RenderedFeed> {
  const child = fork(PROCESS_PATH, [], {
    // The sources run through tsx, as this process does; the built files need nothing.
    execArgv: SOURCES ? ['--conditions=source', '--import', 'tsx/esm'] : [],
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let timedOut = false;
  const timer = options.timeoutMs
    ? setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, options.timeoutMs)
    : undefined;
  try {
    const outcome = await new Promise<FeedProcessMessage | Error>((resolve) => {
      child.once('message', (m: FeedProcessMessage) => resolve(m));
      child.once('error', resolve);
      // 'close', not 'exit': it comes once the channel is read to its end, so an answer sent just
      // before the process ended is never taken for a silent end.
      child.once('close', (code, signal) => resolve(new Error(`calendar feed process ended with ${signal ?? code}`)));
      child.send({ ...input, nice: options.nice } satisfies FeedWorkerData);
    });
    if (timedOut) throw new FeedRenderTimeout(options.timeoutMs!);
    if (outcome instanceof Error) throw outcome;
    if ('error' in outcome) throw new Error(`calendar feed process: ${outcome.error}`);
    return { gzip: Buffer.from(outcome.done.gzip), bytes: outcome.done.bytes };
  } finally {
    clearTimeout(timer);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  }
}
