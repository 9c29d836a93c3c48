import { parentPort, workerData } from 'node:worker_threads';
import { type FeedWorkerData, type FeedWorkerMessage, lowerPriority, renderCompressed } from './feed-render.js';
import type { CalendarEvent } from './store/index.js';

/**
 * The calendar feed's rendering thread (see `renderInWorker`): pages arrive as messages, null ends
 * them. (A rendering that reads its window itself runs in a process of its own: feed-process.ts.)
 */
const port = parentPort!;
const { nice, ...data } = workerData as FeedWorkerData;
if (nice) lowerPriority(nice, 'thread');

const queue: (CalendarEvent[] | null)[] = [];
let wake: (() => void) | undefined;
port.on('message', (page: CalendarEvent[] | null) => {
  queue.push(page);
  wake?.();
});

async function* sentPages(): AsyncGenerator<CalendarEvent[]> {
  for (;;) {
    while (!queue.length) await new Promise<void>((resolve) => (wake = resolve));
    const page = queue.shift()!;
    if (page === null) return;
    port.postMessage({ took: true } satisfies FeedWorkerMessage);
    yield page;
  }
}

function render() {
  return renderCompressed({ ...data, pages: sentPages() });
}

const send = (m: FeedWorkerMessage) => port.postMessage(m);
render().then(
  (done) => {
    send({ done });
    port.close();
  },
  (err: unknown) => {
    send({ error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    port.close();
  },
);
