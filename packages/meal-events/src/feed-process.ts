import type { FeedProcessMessage, FeedWindow, FeedWorkerData } from './feed-render.js';
import { lowerPriority, renderCompressed, windowPages } from './feed-render.js';

/**
 * The calendar feed's rendering process (see `renderInProcess`): started with an IPC channel, it
 * takes one message (the feed's input and the window to read), reads the window itself over a
 * connection of its own, renders and compresses it, answers `{ done }` or `{ error }` and ends.
 * It ends too when the service that started it is gone (the channel closes).
 */
process.once('message', (data: FeedWorkerData & { window: FeedWindow }) => {
  const { window, nice, ...feed } = data;
  if (nice) lowerPriority(nice, 'process');
  render(feed, window).then(
    (done) => answer({ done }, 0),
    (err: unknown) => answer({ error: err instanceof Error ? (err.stack ?? err.message) : String(err) }, 1),
  );
});
process.on('disconnect', () => process.exit(0));

async function render(feed: Omit<FeedWorkerData, 'window' | 'nice'>, window: FeedWindow) {
  const [{ createKnex }, { ObjectionMealEventStore }] = await Promise.all([import('@svc/db'), import('./store/index.js')]);
  // One connection, no page cache: each page is read once, rendered, and let go.
  const knex = createKnex(window.database.url, { ...window.database.options, poolMax: 1 });
  try {
    const store = new ObjectionMealEventStore(knex, { pageCacheBytes: 0 });
    return await renderCompressed({ ...feed, pages: windowPages(store, window.householdId, window.from, window.to, window.pageSize) });
  } finally {
    await knex.destroy();
  }
}

function answer(message: FeedProcessMessage, code: number): void {
  process.send!(message, () => process.exit(code));
}
