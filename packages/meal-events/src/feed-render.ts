import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { createGzip } from 'node:zlib';
import { type FeedStreamInput, renderFeedChunks } from './ics.js';
import type { CalendarEvent } from './store/index.js';

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

/** What the worker is started with: the feed's input but its pages, which follow as messages. */
export type FeedWorkerData = Omit<FeedStreamInput, 'pages'>;

/** Messages from the worker: a page taken (send the next), the result, or what went wrong. */
export type FeedWorkerMessage = { took: true } | { done: RenderedFeed } | { error: string };

/** A rendering stopped after its time (`renderInWorker`'s `timeoutMs`). */
export class FeedRenderTimeout extends Error {
  constructor(readonly timeoutMs: number) {
    super(`The calendar feed was not rendered within ${timeoutMs} ms`);
  }
}

// In the sources (tests run them through tsx) the worker is the .ts file beside this one.
const WORKER_URL = new URL(import.meta.url.endsWith('.ts') ? './feed-worker.ts' : './feed-worker.js', import.meta.url);

/**
 * `renderCompressed` on a worker thread: rendering the largest household's feed makes seconds of
 * work and garbage, which there neither hold this thread's event loop nor its heap's collections.
 * The pages are read here (the database is this thread's) and handed over one at a time, the next
 * read while the worker renders one (at most two pages on their way).
 */
export async function renderInWorker(input: FeedStreamInput, options: { timeoutMs?: number } = {}): Promise<RenderedFeed> {
  const { pages, ...data } = input;
  const worker = new Worker(WORKER_URL, { workerData: data satisfies FeedWorkerData });
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
    for await (const page of pages as AsyncIterable<CalendarEvent[]>) {
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
