import { parentPort, workerData } from 'node:worker_threads';
import { type FeedWorkerData, type FeedWorkerMessage, renderCompressed } from './feed-render.js';
import type { CalendarEvent } from './store/index.js';

/** The calendar feed's rendering thread (see `renderInWorker`): pages arrive as messages, null ends them. */
const port = parentPort!;
const queue: (CalendarEvent[] | null)[] = [];
let wake: (() => void) | undefined;
port.on('message', (page: CalendarEvent[] | null) => {
  queue.push(page);
  wake?.();
});

async function* pages(): AsyncGenerator<CalendarEvent[]> {
  for (;;) {
    while (!queue.length) await new Promise<void>((resolve) => (wake = resolve));
    const page = queue.shift()!;
    if (page === null) return;
    port.postMessage({ took: true } satisfies FeedWorkerMessage);
    yield page;
  }
}

const send = (m: FeedWorkerMessage) => port.postMessage(m);
renderCompressed({ ...(workerData as FeedWorkerData), pages: pages() }).then(
  (done) => {
    send({ done });
    port.close();
  },
  (err: unknown) => {
    send({ error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    port.close();
  },
);
