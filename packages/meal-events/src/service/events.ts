import { ADULT_ROLES, type Clock, type HouseholdAccess, type HouseholdMemberIds, type RandomBytes, type SessionReadAhead } from '@svc/contracts';
import { assertRole, InputError, NotFoundError, systemRandom } from '@svc/http-kit';
import type { Knex } from 'knex';
import { CursorCodec, invalidCursor } from '../cursor.js';
import type { ListEventsQuery, MealEvent, MealEventInput } from '../schemas.js';
import {
  type EventPosition,
  eventReadAhead,
  eventsReadAhead,
  type MealEventStore,
  type MealEventValues,
  type PageAnswer,
  type PageRequest,
} from '../store/index.js';

export interface MealEventsServiceOptions {
  store: MealEventStore;
  clock: Clock;
  /** Membership and role of the caller, from @svc/households. */
  access: HouseholdAccess;
  /** The household's member ids, from @svc/households: a participant's `memberId` must be one of them. */
  memberIds: HouseholdMemberIds;
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
    participants: input.participants.map((p) => ({ memberId: p.memberId === null ? null : p.memberId.toLowerCase(), name: p.name })),
  };
}

/**
 * The meal-events rules: any member of the household reads (a Junior too), Owner and Adult write,
 * a non-member (or an unknown household) gets 404 from `access`; the list is paged with signed
 * keyset cursors that keep the filter they were made under. No HTTP here.
 */
export class MealEventsService {
  /** GET …/events: the list version the session statement may read ahead, for the store's page cache; GET of one event (for the host to hand to accounts). */
  readonly readAheads: readonly SessionReadAhead[] = [eventsReadAhead, eventReadAhead];
  private readonly store: MealEventStore;
  private readonly clock: Clock;
  private readonly access: HouseholdAccess;
  private readonly memberIds: HouseholdMemberIds;
  private readonly codec: CursorCodec;
  private readonly random: RandomBytes;

  constructor(options: MealEventsServiceOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.access = options.access;
    this.memberIds = options.memberIds;
    this.codec = new CursorCodec(options.cursorSecret);
    this.random = options.random ?? systemRandom;
  }

  /**
   * One page of a household's events, earliest first (`date`, `servingTime`, `id`), as the JSON
   * text of PagedMealEventResponse with its length in UTF-8 bytes: the events come from PostgreSQL as JSON already (the
   * list route's hot read; no object per event is made here), and a page read again while the list
   * is unchanged is the text made the first time (the store keeps it).
   *
   * A cursor carries the `from`/`to` of the page that made it, and the next page keeps that filter:
   * a client may pass the cursor alone, or with the same `from`/`to` again; a different `from` or
   * `to` next to a cursor is 400 `invalid_cursor` (start over without a cursor to change the
   * filter). `limit` may change from page to page.
   */
  async listJson(userId: string, householdId: string, query: ListEventsQuery): Promise<PageAnswer> {
    const request = await this.pageRequest(userId, householdId, query);
    // The answer depends on nothing but the household, the request and the page (the cursor codec
    // is deterministic), so the store may keep it and send it again while the list is unchanged.
    return this.store.pageAnswer(householdId, request, (page) => {
      const nextCursor = page.last ? this.cursorAfter(householdId, request, page.last) : null;
      return `{"items":[${page.items}],"nextCursor":${nextCursor === null ? 'null' : JSON.stringify(nextCursor)},"total":null}`;
    });
  }

  /** Checks the caller and the query (range, cursor and its filter) and says which page to read. */
  private async pageRequest(userId: string, householdId: string, query: ListEventsQuery): Promise<PageRequest> {
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
    return { from, to, after, limit: query.limit };
  }

  /** The cursor of the page after `last`, keeping the request's filter. */
  private cursorAfter(householdId: string, request: PageRequest, last: EventPosition): string {
    return this.codec.encode(householdId, { after: { date: last.date, servingTime: last.servingTime, id: last.id }, from: request.from, to: request.to });
  }

  /** One event; any member. */
  async get(userId: string, householdId: string, eventId: string): Promise<MealEvent> {
    await this.access.roleOf(userId, householdId);
    return (await this.store.get(householdId, eventId)) ?? Promise.reject(notFoundEvent());
  }

  /** The same event as the JSON text GET …/events/{eventId} sends (lent by the session statement, it is sent as PostgreSQL wrote it); any member. */
  async getJson(userId: string, householdId: string, eventId: string): Promise<string> {
    await this.access.roleOf(userId, householdId);
    return (await this.store.getJson(householdId, eventId)) ?? Promise.reject(notFoundEvent());
  }

  async create(userId: string, householdId: string, input: MealEventInput): Promise<MealEvent> {
    assertRole(await this.access.roleOf(userId, householdId), ADULT_ROLES);
    const values = valuesOf(input);
    const id = uuidV4(this.random(16));
    if (!named(values)) return this.store.create(householdId, id, values, this.clock.now());
    // The members named are locked until the event is written: a removal racing this waits, then
    // finds (and unlinks) the participant, so no event keeps the link of someone no longer a member.
    return this.store.transaction(async (trx) => {
      refuseStrangers(await this.strangers(householdId, values, trx));
      return this.store.create(householdId, id, values, this.clock.now(), trx);
    });
  }

  /** Full replacement: every field is written, `id` and `createdAt` stay. */
  /**
   * Full replacement: every field is written, `id` and `createdAt` stay. A participant whose
   * `memberId` is no longer a member but is the one the stored event already links (the member
   * left between a client's GET and its PUT) is accepted unchanged and stored as the departed
   * participant it is (`memberId` null, its name kept): what a GET answered always goes back.
   */
  async replace(userId: string, householdId: string, eventId: string, input: MealEventInput): Promise<MealEvent> {
    assertRole(await this.access.roleOf(userId, householdId), ADULT_ROLES);
    const values = valuesOf(input);
    if (!named(values)) return (await this.store.replace(householdId, eventId, values, this.clock.now())) ?? Promise.reject(notFoundEvent());
    // As in create: the members named stay members until the event is written.
    return this.store.transaction(async (trx) => {
      const strangers = await this.strangers(householdId, values, trx);
      if (strangers.length) {
        const links = await this.store.participantLinks(householdId, eventId, trx);
        if (!links) throw notFoundEvent();
        refuseStrangers(strangers.filter((p) => !links.has(p.memberId)));
        for (const { i, memberId } of strangers) values.participants[i] = { memberId: null, name: values.participants[i]!.name, formerMemberId: memberId };
      }
      return (await this.store.replace(householdId, eventId, values, this.clock.now(), trx)) ?? Promise.reject(notFoundEvent());
    });
  }

  async remove(userId: string, householdId: string, eventId: string): Promise<void> {
    assertRole(await this.access.roleOf(userId, householdId), ADULT_ROLES);
    if (!(await this.store.remove(householdId, eventId))) throw notFoundEvent();
  }

  /**
   * The `events` part of the data export (PersonalDataSources in @svc/contracts): every event of
   * the household in list order, yielded a page of 100 at a time (keyset, so memory holds one page
   * however many events there are). No access check: the export asks for households the person
   * belongs to.
   */
  async *exportEvents(householdId: string): AsyncIterable<MealEvent[]> {
    let after: EventPosition | null = null;
    for (;;) {
      const page = await this.store.page(householdId.toLowerCase(), { from: null, to: null, after, limit: EXPORT_PAGE });
      if (page.items.length) yield page.items;
      const last = page.items.at(-1);
      if (!page.hasMore || !last) return;
      after = { date: last.date, servingTime: last.servingTime, id: last.id };
    }
  }

  /**
   * The participants whose `memberId` is not a member of this household (a guest has none, and is
   * never one), the members' rows locked in `trx` until it ends. Asked only when the body names
   * someone, so events of guests alone cost no lookup and no transaction.
   */
  private async strangers(householdId: string, values: MealEventValues, trx: Knex.Transaction): Promise<{ i: number; memberId: string }[]> {
    const linked = values.participants.flatMap((p, i) => (p.memberId === null ? [] : [{ i, memberId: p.memberId }]));
    const members = await this.memberIds(householdId, trx);
    return linked.filter((p) => !members.has(p.memberId));
  }
}

/** True when a participant names a member. */
function named(values: MealEventValues): boolean {
  return values.participants.some((p) => p.memberId !== null);
}

/** 400 `validation_failed` naming each participant whose `memberId` is not a member of this household. */
function refuseStrangers(strangers: { i: number; memberId: string }[]): void {
  if (!strangers.length) return;
  throw new InputError(
    'validation_failed',
    `The body is not valid: ${strangers.map((p) => `participants[${p.i}].memberId is not a member of this household`).join('; ')}`,
    strangers.map((p) => ({ field: `participants[${p.i}].memberId`, message: 'is not a member of this household', in: 'body' as const })),
  );
}

/** Events per page of the export. */
const EXPORT_PAGE = 100;

/** 400 `validation_failed` when `from` is later than `to`. */
function assertRange(from: string | undefined, to: string | undefined): void {
  // YYYY-MM-DD strings compare like the dates they name.
  if (from !== undefined && to !== undefined && from > to) {
    throw new InputError('validation_failed', 'The query is not valid: from must not be later than to', [
      { field: 'from', message: 'must not be later than to', in: 'query' },
    ]);
  }
}
