import { ADULT_ROLES, type Clock, type HouseholdAccess, type RandomBytes } from '@svc/contracts';
import { assertRole, InputError, NotFoundError, systemRandom } from '@svc/http-kit';
import { CursorCodec, invalidCursor } from './cursor.js';
import type { ListEventsQuery, MealEvent, MealEventInput, PagedMealEvents, Participant } from './schemas.js';
import type { EventPosition, MealEventStore, MealEventValues } from './store.js';

export interface MealEventsServiceOptions {
  store: MealEventStore;
  clock: Clock;
  /** Membership and role of the caller, from @svc/households. */
  access: HouseholdAccess;
  /** HMAC key of page cursors; the host derives it from SESSION_SECRET. */
  cursorSecret: string;
  /** Source of new event ids (uuid v4); the system's unless given. */
  random?: RandomBytes;
}

const notFoundEvent = () => new NotFoundError('not_found', 'No such meal event in this household');

/** A version-4 uuid from 16 random bytes (RFC 9562). */
function uuidV4(bytes: Buffer): string {
  const b = Buffer.from(bytes.subarray(0, 16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** What is stored of a body: `servingTime` to the minute (the list is ordered by what clients see), participants with only their two members, memberId lower-cased. */
function valuesOf(input: MealEventInput): MealEventValues {
  return {
    date: input.date,
    eventType: input.eventType,
    servingTime: input.servingTime.slice(0, 5),
    availableCookingMinutes: input.availableCookingMinutes,
    notes: input.notes,
    participants: input.participants.map((p): Participant => ({ memberId: p.memberId === null ? null : p.memberId.toLowerCase(), name: p.name })),
  };
}

/**
 * The meal-events rules: any member of the household reads (a Junior too), Owner and Adult write,
 * a non-member (or an unknown household) gets 404 from `access`; the list is paged with signed
 * keyset cursors that keep the filter they were made under. No HTTP here.
 */
export class MealEventsService {
  private readonly store: MealEventStore;
  private readonly clock: Clock;
  private readonly access: HouseholdAccess;
  private readonly codec: CursorCodec;
  private readonly random: RandomBytes;

  constructor(options: MealEventsServiceOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.access = options.access;
    this.codec = new CursorCodec(options.cursorSecret);
    this.random = options.random ?? systemRandom;
  }

  /**
   * One page of a household's events, earliest first (`date`, `servingTime`, `id`).
   *
   * A cursor carries the `from`/`to` of the page that made it, and the next page keeps that filter:
   * a client may pass the cursor alone, or with the same `from`/`to` again; a different `from` or
   * `to` next to a cursor is 400 `invalid_cursor` (start over without a cursor to change the
   * filter). `limit` may change from page to page.
   */
  async list(userId: string, householdId: string, query: ListEventsQuery): Promise<PagedMealEvents> {
    assertRange(query.from, query.to);
    await this.access.roleOf(userId, householdId);
    let from = query.from ?? null;
    let to = query.to ?? null;
    let after: EventPosition | null = null;
    if (query.cursor !== undefined) {
      const state = this.codec.decode(householdId, query.cursor);
      if ((query.from !== undefined && query.from !== state.from) || (query.to !== undefined && query.to !== state.to)) {
        throw invalidCursor('The cursor belongs to a list with another from/to; repeat the same from/to, or leave them out, or start again without a cursor');
      }
      ({ from, to, after } = state);
    }
    const page = await this.store.page(householdId, { from, to, after, limit: query.limit });
    const last = page.items.at(-1);
    const nextCursor =
      page.hasMore && last ? this.codec.encode(householdId, { after: { date: last.date, servingTime: last.servingTime, id: last.id }, from, to }) : null;
    return { items: page.items, nextCursor, total: null };
  }

  async create(userId: string, householdId: string, input: MealEventInput): Promise<MealEvent> {
    assertRole(await this.access.roleOf(userId, householdId), ADULT_ROLES);
    return this.store.create(householdId, uuidV4(this.random(16)), valuesOf(input), this.clock.now());
  }

  /** Full replacement: every field is written, `id` and `createdAt` stay. */
  async replace(userId: string, householdId: string, eventId: string, input: MealEventInput): Promise<MealEvent> {
    assertRole(await this.access.roleOf(userId, householdId), ADULT_ROLES);
    return (await this.store.replace(householdId, eventId, valuesOf(input), this.clock.now())) ?? Promise.reject(notFoundEvent());
  }

  async remove(userId: string, householdId: string, eventId: string): Promise<void> {
    assertRole(await this.access.roleOf(userId, householdId), ADULT_ROLES);
    if (!(await this.store.remove(householdId, eventId))) throw notFoundEvent();
  }
}

/** 400 `validation_failed` when `from` is later than `to`. */
function assertRange(from: string | undefined, to: string | undefined): void {
  // YYYY-MM-DD strings compare like the dates they name.
  if (from !== undefined && to !== undefined && from > to) {
    throw new InputError('validation_failed', 'The query is not valid: from must not be later than to', [
      { field: 'from', message: 'must not be later than to', in: 'query' },
    ]);
  }
}
