import { InputError } from '@svc/http-kit';
import { type CursorCodec, invalidCursor } from './cursor.js';
import type { MealEvent, MealEventStore } from './MealEventStore.js';

/** Query of GET …/events, as validated by the schema (limit defaulted to 50). */
export interface EventListQuery {
  from?: string;
  to?: string;
  cursor?: string;
  limit: number;
}

/** PagedMealEventResponse of the spec; `total` is always null and always sent. */
export interface PagedMealEvents {
  items: MealEvent[];
  nextCursor: string | null;
  total: null;
}

/**
 * One page of a household's events, earliest first (`date`, `servingTime`, `id`).
 *
 * A cursor carries the `from`/`to` of the page that made it, and the next page keeps that filter:
 * a client may pass the cursor alone, or with the same `from`/`to` again; a different `from` or `to`
 * next to a cursor is 400 `invalid_cursor` (start over without a cursor to change the filter).
 * `limit` may change from page to page.
 */
export async function listEvents(store: MealEventStore, codec: CursorCodec, householdId: string, query: EventListQuery): Promise<PagedMealEvents> {
  let from = query.from ?? null;
  let to = query.to ?? null;
  let after = null;
  if (query.cursor !== undefined) {
    const state = codec.decode(householdId, query.cursor);
    if ((query.from !== undefined && query.from !== state.from) || (query.to !== undefined && query.to !== state.to)) {
      throw invalidCursor('The cursor belongs to a list with another from/to; repeat the same from/to, or leave them out, or start again without a cursor');
    }
    ({ from, to, after } = state);
  }
  const page = await store.page(householdId, { from, to, after, limit: query.limit });
  const last = page.items.at(-1);
  const nextCursor =
    page.hasMore && last ? codec.encode(householdId, { after: { date: last.date, servingTime: last.servingTime, id: last.id }, from, to }) : null;
  return { items: page.items, nextCursor, total: null };
}

/** 400 `validation_failed` when `from` is later than `to` (decisions.md §5). */
export function assertRange(from: string | undefined, to: string | undefined): void {
  // YYYY-MM-DD strings compare like the dates they name.
  if (from !== undefined && to !== undefined && from > to) {
    throw new InputError('validation_failed', 'The query is not valid: from must not be later than to', [
      { field: 'from', message: 'must not be later than to', in: 'query' },
    ]);
  }
}
