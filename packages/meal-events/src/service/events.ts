import {
  ADULT_ROLES,
  type Caller,
  type Clock,
  type ExportJsonPage,
  type HouseholdAccess,
  type HouseholdMemberIds,
  type HouseholdProfiles,
  type RandomBytes,
} from '@svc/contracts';
import type { Pojo, ReadDeclaration } from '@svc/db';
import { assertRole, ConflictError, InputError, type KernelChecked, NotFoundError, systemRandom } from '@svc/http-kit';
import type { Knex } from 'knex';
import { v4 as uuidV4 } from 'uuid';
import { CursorCodec, invalidCursor } from '../cursor.js';
import { MealEventModel } from '../models/index.js';
import { eventRead } from '../reads.js';
import type { EventScope, ListEventsQuery, MealEvent, MealEventCreateInput, MealEventInput, MealEventSeries } from '../schemas.js';
import { HOUSEHOLD_BOUNDS, type HouseholdBounds } from '../schemas.js';
import { addDays, MAX_AHEAD, normalizeRule, occurrences } from '../series/rule.js';
import { boundOf } from '../store/bounds.js';
import {
  apiSeries,
  CARRY_FORMER_MEMBERS,
  type EventPage,
  type EventPosition,
  type MealEventStore,
  type MealEventValues,
  type PageRequest,
  type SeriesStore,
  type StoredSeries,
} from '../store/index.js';
import { type EventReminders, reminderInstant } from './reminders.js';
import { windowOf } from './series.js';

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
  /** The series of repeating events. */
  series: SeriesStore;
  /** The household's time zone (today, for a series' window; when a reminder is due), from @svc/households. */
  profiles: HouseholdProfiles;
  /** Reminders of events (`reminderMinutes`): enqueued with each write; none: stored but never sent (tests of other things). */
  reminders?: EventReminders;
  /** How large a household may grow (HOUSEHOLD_BOUNDS unless given: tests use small ones). */
  bounds?: Partial<HouseholdBounds>;
}

/**
 * A page's answer (PagedMealEventResponse): its UTF-8 bytes, kept and sent as they are (http-kit's
 * `sendJsonText` takes a Buffer), their length (Content-Length), and the text read back from them
 * when asked (tests, a caller that wants the string; nothing on the hot path asks).
 */
export interface PageAnswer {
  /** The answer's UTF-8 bytes. */
  readonly body: Buffer;
  /** `body.length`: the Content-Length. */
  readonly bytes: number;
  /** The answer as text, decoded from `body` each time it is read. */
  readonly text: string;
}

function pageAnswerOf(text: string): PageAnswer {
  // Encoded once, so every send of it writes these bytes as they are (no string joined to the head and encoded again).
  const body = Buffer.from(text, 'utf8');
  return {
    body,
    bytes: body.length,
    get text() {
      return body.toString('utf8');
    },
  };
}

const notFoundEvent = () => new NotFoundError('not_found', 'No such meal event in this household');
const limitReached = (detail: string) => new ConflictError('limit_reached', detail);

/** What is stored of a body: `servingTime` to the minute (the list is ordered by what clients see), participants with only their two members, memberId lower-cased. */
function valuesOf(input: MealEventInput): MealEventValues {
  return {
    date: input.date,
    eventType: input.eventType,
    servingTime: input.servingTime.slice(0, 5),
    availableCookingMinutes: input.availableCookingMinutes,
    notes: input.notes,
    participants: input.participants.map((p) => ({ memberId: p.memberId === null ? null : p.memberId.toLowerCase(), name: p.name })),
    reminderMinutes: input.reminderMinutes ?? null,
  };
}

/**
 * The meal-events rules: any member of the household reads (a Junior too), Owner and Adult write,
 * a non-member (or an unknown household) gets 404 from `access`; the list is paged with signed
 * keyset cursors that keep the filter they were made under. No HTTP here.
 */
export class MealEventsService {
  /** The changes feed's value of an event: its GET's declared read (`eventRead`) and the answer the GET makes of that row. */
  readonly changeValue: { readonly read: ReadDeclaration; answer(row: unknown): unknown } = {
    read: eventRead,
    answer: (row) => MealEventModel.fromDatabaseJson(row as Pojo).toApi(),
  };
  private readonly store: MealEventStore;
  private readonly clock: Clock;
  private readonly access: HouseholdAccess;
  private readonly memberIds: HouseholdMemberIds;
  private readonly codec: CursorCodec;
  private readonly random: RandomBytes;
  private readonly series: SeriesStore;
  private readonly profiles: HouseholdProfiles;
  private readonly reminders: EventReminders | undefined;
  private readonly bounds: HouseholdBounds;
  /** The answer made of each page the store handed out, while the store keeps the page (to answer it again). */
  private readonly answers = new WeakMap<EventPage, PageAnswer>();

  constructor(options: MealEventsServiceOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.access = options.access;
    this.memberIds = options.memberIds;
    this.codec = new CursorCodec(options.cursorSecret);
    this.random = options.random ?? systemRandom;
    this.series = options.series;
    this.profiles = options.profiles;
    this.reminders = options.reminders;
    this.bounds = { ...HOUSEHOLD_BOUNDS, ...options.bounds };
  }

  /**
   * `write`, with a refusal of the household's bounds made 409 `limit_reached`. The bounds are
   * held by the writing statement's own triggers (migration 20261202130000_meal_events_bounds:
   * counted under the household's lock, so exact under parallel writers, at no statement more);
   * the refused statement, and the transaction it ran in, wrote nothing.
   */
  private async bounded<T>(write: Promise<T>): Promise<T> {
    try {
      return await write;
    } catch (err) {
      const bound = boundOf(err);
      if (!bound) throw err;
      const b = this.bounds;
      if (bound === 'liveEvents')
        throw limitReached(`A household keeps at most ${b.liveEvents} meal events dated from 31 days ago on (occurrences of series written ahead included)`);
      if (bound === 'activeSeries') throw limitReached(`A household keeps at most ${b.activeSeries} active repeating series`);
      throw limitReached(`A household keeps at most ${b.events} meal events in all`);
    }
  }

  /** The household's zone, asked only when a reminder needs it. */
  private async zoneOf(householdId: string): Promise<string> {
    return (await this.profiles(householdId)).timeZoneId;
  }

  /** When an event with these values reminds (null: it does not); the zone is asked only when it does. */
  private async reminderOf(householdId: string, values: MealEventValues, zone?: string): Promise<Date | null> {
    if ((values.reminderMinutes ?? null) === null) return null;
    return reminderInstant(values.date, values.servingTime, values.reminderMinutes, zone ?? (await this.zoneOf(householdId)));
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
  async list(caller: Caller, householdId: string, query: ListEventsQuery, loaded?: KernelChecked<{ version: string }>): Promise<PageAnswer> {
    const request = await this.pageRequest(caller, householdId, query);
    // `loaded`: the list version `eventsRead` loaded with the caller, under which the store may answer a page it read before.
    const page = await this.store.page(householdId, request, loaded?.version);
    // The answer depends on nothing but the household, the request and the page (the cursor codec
    // is deterministic), so the one made of a page the store answers again is sent again.
    let answer = this.answers.get(page);
    if (answer === undefined) {
      const nextCursor = page.last ? this.cursorAfter(householdId, request, page.last) : null;
      answer = pageAnswerOf(`{"items":${page.items},"nextCursor":${nextCursor === null ? 'null' : JSON.stringify(nextCursor)},"total":null}`);
      this.answers.set(page, answer);
    }
    return answer;
  }

  /** Checks the caller and the query (range, cursor and its filter) and says which page to read. */
  private async pageRequest(caller: Caller, householdId: string, query: ListEventsQuery): Promise<PageRequest> {
    assertRange(query.from, query.to);
    await this.access.roleOf(caller, householdId);
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

  /**
   * One event; any member. `loaded`: the row of `eventRead` the read kernel loaded with the caller
   * (it checked the membership; `false`: the household has no such event), made into the answer by
   * the model without a statement.
   */
  async get(caller: Caller, householdId: string, eventId: string, loaded?: KernelChecked<Pojo | false>): Promise<MealEvent> {
    if (loaded === undefined) await this.access.roleOf(caller, householdId);
    return (await this.store.get(householdId, eventId, loaded)) ?? Promise.reject(notFoundEvent());
  }

  async create(caller: Caller, householdId: string, input: MealEventCreateInput): Promise<MealEvent> {
    assertRole(await this.access.roleOf(caller, householdId), ADULT_ROLES);
    const values = valuesOf(input);
    if (input.repeat) return this.createSeries(householdId, values, input.repeat);
    const id = uuidV4({ random: this.random(16) });
    // The reminder's job is made by the event's INSERT itself (meal-events' `jobSources`): it exists exactly when the event does.
    const reminderAt = await this.reminderOf(householdId, values);
    // The household's bounds are held by the INSERT's own trigger: no transaction of its own.
    if (!named(values)) return this.bounded(this.store.create(householdId, id, values, this.clock.now(), undefined, reminderAt, this.bounds));
    // The members named are locked until the event is written: a removal racing this waits, then
    // finds (and unlinks) the participant, so no event keeps the link of someone no longer a member.
    return this.bounded(
      this.store.transaction(async (trx) => {
        refuseStrangers(await this.strangers(householdId, values, trx));
        return this.store.create(householdId, id, values, this.clock.now(), trx, reminderAt, this.bounds);
      }),
    );
  }

  /**
   * A series (decisions.md §8): the rule checked against `date`, its occurrences from `date` to
   * 366 days after today (household zone) written with the series in ONE statement (two more
   * round trips than a single event at most: the zone, and the members' lock when the body names
   * members), answered with the first. More than 366 occurrences at once (today's not counted: a
   * daily series may start today), or none in the window: 400 naming the field.
   */
  private async createSeries(householdId: string, values: MealEventValues, repeat: NonNullable<MealEventCreateInput['repeat']>): Promise<MealEvent> {
    const rule = normalizeRule(repeat, values.date);
    const zone = await this.zoneOf(householdId);
    const { today, horizon } = windowOf(this.clock.now(), zone);
    if (values.date > horizon) throw fieldError('date', `is more than ${366} days after today: the series would have no occurrence in the window`);
    const dates = occurrences(rule, values.date, values.date, horizon);
    if (dates.filter((d) => d !== today).length > MAX_AHEAD) {
      throw fieldError('repeat', `makes ${dates.length} occurrences from date to 366 days after today; at most ${MAX_AHEAD} (besides today's) are allowed`);
    }
    const seriesId = uuidV4({ random: this.random(16) });
    const occ = dates.map((date) => ({
      id: uuidV4({ random: this.random(16) }),
      date,
      remindAt: reminderInstant(date, values.servingTime, values.reminderMinutes, zone),
    }));
    const now = this.clock.now();
    const write = (trx?: Knex.Transaction) =>
      this.series.create({ id: seriesId, householdId, repeat: rule, template: values, writtenThrough: horizon }, occ, now, trx, this.bounds);
    // Every occurrence's reminder still ahead is enqueued by the occurrences' INSERT itself, and
    // the bounds (events and active series) are held by its triggers: a series past one is refused whole.
    if (!named(values)) await this.bounded(write());
    else
      await this.bounded(
        this.series.transaction(async (trx) => {
          refuseStrangers(await this.strangers(householdId, values, trx));
          await write(trx);
        }),
      );
    const at = now.toISOString();
    // The first occurrence as written (as the store answers a single event it created).
    return MealEventModel.fromJson({ id: occ[0]!.id, householdId, ...values, createdAt: at, updatedAt: at, seriesId }).toApi();
  }

  /** GET …/series/{seriesId}: any member; 404 for an unknown (or deleted) series. */
  async getSeries(caller: Caller, householdId: string, seriesId: string): Promise<MealEventSeries> {
    await this.access.roleOf(caller, householdId);
    const s = await this.series.get(householdId, seriesId);
    if (!s) throw new NotFoundError('not_found', 'No such series in this household');
    return apiSeries(s);
  }

  /**
   * Full replacement: every field is written, `id` and `createdAt` stay. A participant whose
   * `memberId` is no longer a member but is the one the stored event already links (the member
   * left between a client's GET and its PUT) is accepted unchanged and stored as the departed
   * participant it is (`memberId` null, its name kept): what a GET answered always goes back.
   */
  async replace(caller: Caller, householdId: string, eventId: string, input: MealEventInput, scope: EventScope = 'this'): Promise<MealEvent> {
    assertRole(await this.access.roleOf(caller, householdId), ADULT_ROLES);
    const values = valuesOf(input);
    if (scope !== 'this') return this.replaceInSeries(householdId, eventId, values, scope);
    return this.replaceThis(householdId, eventId, values);
  }

  /** PUT of a single event, or of an occurrence with scope=this. */
  private async replaceThis(householdId: string, eventId: string, values: MealEventValues): Promise<MealEvent> {
    const reminderAt = await this.reminderOf(householdId, values);
    // An event of no series, with no member named: ONE statement (it says too whether the event is
    // there). An occurrence takes the transaction below, which locks its series first.
    if (!named(values)) {
      const single = await this.bounded(this.store.replaceSingle(householdId, eventId, values, this.clock.now(), reminderAt, this.bounds));
      if (single === 'absent') throw notFoundEvent();
      if (single !== 'occurrence') return single;
    }
    // One transaction: the replacement, an occurrence's exception and the reminder are kept together or not at all.
    // A date moved into the window the bound counts is held to it by the UPDATE's own trigger.
    return this.bounded(
      this.series.transaction(async (trx) => {
        // An occurrence's series row first, then its events (the order every writer of a series takes); 404 for no such event.
        const locked = await this.lockOccurrence(householdId, eventId, trx);
        const event = await this.replaceOne(householdId, eventId, values, trx, reminderAt);
        // scope=this: the occurrence stays in its series, listed as an exception by its original date.
        if (locked) await this.series.addException(locked.series.id, locked.originalDate, this.clock.now(), trx);
        return event;
      }),
    );
  }

  /** PUT with scope=following or all; a single event is replaced as with scope=this. */
  private async replaceInSeries(householdId: string, eventId: string, values: MealEventValues, scope: 'following' | 'all'): Promise<MealEvent> {
    const now = this.clock.now();
    const zone = (await this.profiles(householdId)).timeZoneId;
    let single = false;
    // Every write below that may grow the household is held to its bounds by its own triggers.
    const event = await this.bounded(
      this.series.transaction(async (trx) => {
        const locked = await this.lockOccurrence(householdId, eventId, trx);
        if (!locked) {
          single = true;
          return undefined;
        }
        const { series, originalDate, occurrences: all } = locked;
        const seriesId = series.id;
        if (named(values)) refuseStrangers(await this.strangers(householdId, values, trx));
        const reminderAt = await this.reminderOf(householdId, values, zone);
        if (scope === 'all') {
          // Every occurrence on its own original date (earlier exceptions too), this one on the body's date.
          const reminders = all.map((o) => ({
            id: o.id,
            at: o.id === eventId ? reminderAt : reminderInstant(o.originalDate, values.servingTime, values.reminderMinutes, zone),
          }));
          await this.series.applyToAll(seriesId, values, now, CARRY_FORMER_MEMBERS, trx, reminders, this.bounds);
          const replaced = (await this.store.replace(householdId, eventId, values, now, trx, reminderAt, this.bounds))!;
          const deleted = series.exceptions.filter((d) => d !== originalDate);
          const stillExceptions = await this.deletedDates(seriesId, deleted, trx);
          if (values.date !== originalDate) stillExceptions.push(originalDate);
          await this.series.update(seriesId, { template: { ...values, date: series.template.date }, exceptions: stillExceptions.sort() }, now, trx);
          return replaced;
        }
        // following: the old series ends the day before; a new one, with the same rule, starts at the body's date.
        const rule = normalizeRule(series.repeat, values.date);
        const kept = occurrences(series.repeat, series.template.date, series.template.date, addDays(originalDate, -1)).length;
        const newRule = { ...rule, count: rule.count === null ? null : Math.max(1, rule.count - kept) };
        const { horizon } = windowOf(now, zone);
        const newId = uuidV4({ random: this.random(16) });
        const dates = values.date > horizon ? [values.date] : occurrences(newRule, values.date, values.date, horizon);
        await this.series.create({ id: newId, householdId, repeat: newRule, template: values, writtenThrough: horizon }, [], now, trx, this.bounds);
        // Moved out before the old series may be deleted (its occurrences go with it).
        await this.series.moveOccurrence(eventId, newId, values.date, trx);
        await this.series.deleteOccurrencesFrom(seriesId, originalDate, trx);
        await this.endSeries(series, originalDate, kept, now, trx);
        const replaced = (await this.store.replace(householdId, eventId, values, now, trx, reminderAt, this.bounds))!;
        await this.series.writeOccurrences(
          dates.slice(1).map((date) => ({
            seriesId: newId,
            id: uuidV4({ random: this.random(16) }),
            date,
            remindAt: reminderInstant(date, values.servingTime, values.reminderMinutes, zone),
          })),
          now,
          trx,
          this.bounds,
        );
        return { ...replaced, seriesId: newId };
      }),
    );
    if (single) return this.replaceThis(householdId, eventId, values);
    return event!;
  }

  /**
   * The event's series and the event, locked in that order (every writer of a series takes the
   * series row first, then its events, so parallel scoped writes wait for each other instead of
   * deadlocking); null for a single event; 404 when the household has no such event. The event
   * is read again under the lock: a parallel `following` may have moved it to a new series.
   */
  private async lockOccurrence(
    householdId: string,
    eventId: string,
    trx: Knex.Transaction,
  ): Promise<{ series: StoredSeries; originalDate: string; occurrences: { id: string; originalDate: string }[] } | null> {
    for (;;) {
      const peek = await this.series.occurrenceOf(householdId, eventId, trx);
      if (!peek) throw notFoundEvent();
      if (!peek.ref) return null;
      const series = await this.series.get(householdId, peek.ref.seriesId, trx, true);
      const found = await this.series.occurrenceOf(householdId, eventId, trx, true);
      if (!found) throw notFoundEvent();
      if (found.ref && series && found.ref.seriesId === series.id) {
        // Every occurrence too, before anything is written (see SeriesStore.transaction): a parallel
        // single-row write then waits for this transaction, never the other way round.
        const occurrences = await this.series.lockOccurrences(series.id, trx);
        return { series, originalDate: found.ref.originalDate, occurrences };
      }
      // Moved to another series meanwhile (or made single): look again.
    }
  }

  /** The dates among `dates` the series has no occurrence of (deleted on their own), earliest first. */
  private async deletedDates(seriesId: string, dates: string[], trx: Knex.Transaction): Promise<string[]> {
    if (!dates.length) return [];
    const { rows } = await trx.raw(
      `select to_char(d, 'YYYY-MM-DD') as d from unnest(?::date[]) d where not exists (select 1 from meal_events e where e.series_id = ?::uuid and e.original_date = d) order by d`,
      [dates, seriesId],
    );
    return rows.map((r: { d: string }) => r.d);
  }

  /**
   * Ends a series the day before `split` (its rule gets `until`, its count dropped, exceptions
   * from `split` on dropped); a series left without any occurrence before `split` is deleted.
   */
  private async endSeries(
    series: { id: string; householdId: string; repeat: MealEventSeries['repeat']; exceptions: string[] },
    split: string,
    kept: number,
    now: Date,
    trx: Knex.Transaction,
  ): Promise<void> {
    if (kept === 0) {
      await this.series.remove(series.householdId, series.id, trx);
      return;
    }
    await this.series.update(
      series.id,
      { repeat: { ...series.repeat, until: addDays(split, -1), count: null }, exceptions: series.exceptions.filter((d) => d < split) },
      now,
      trx,
    );
  }

  /** Full replacement of one event (the PUT of a single event, and scope=this), inside `trx`. */
  private async replaceOne(householdId: string, eventId: string, values: MealEventValues, trx: Knex.Transaction, reminderAt: Date | null): Promise<MealEvent> {
    if (named(values)) {
      // As in create: the members named stay members until the event is written.
      const strangers = await this.strangers(householdId, values, trx);
      if (strangers.length) {
        const links = await this.store.participantLinks(householdId, eventId, trx);
        if (!links) throw notFoundEvent();
        refuseStrangers(strangers.filter((p) => !links.has(p.memberId)));
        for (const { i, memberId } of strangers) values.participants[i] = { memberId: null, name: values.participants[i]!.name, formerMemberId: memberId };
      }
    }
    return (await this.store.replace(householdId, eventId, values, this.clock.now(), trx, reminderAt, this.bounds)) ?? Promise.reject(notFoundEvent());
  }

  /**
   * DELETE: a single event, or an occurrence with `scope` — this (kept as an exception of its
   * series), following (the series ends the day before; later occurrences go) or all (the series
   * and every occurrence go; GET of the series answers 404 afterwards).
   */
  async remove(caller: Caller, householdId: string, eventId: string, scope: EventScope = 'this'): Promise<void> {
    assertRole(await this.access.roleOf(caller, householdId), ADULT_ROLES);
    // An event of no series goes in one statement, whatever the scope (it has no following ones);
    // an occurrence takes the transaction below, which locks its series first.
    const single = await this.store.removeSingle(householdId, eventId);
    if (single === 'removed') return;
    if (single === 'absent') throw notFoundEvent();
    const now = this.clock.now();
    if (scope === 'this') {
      // The deletion and an occurrence's exception in one transaction: both or neither.
      await this.series.transaction(async (trx) => {
        const locked = await this.lockOccurrence(householdId, eventId, trx);
        if (!(await this.store.remove(householdId, eventId, trx))) throw notFoundEvent();
        if (locked) await this.series.addException(locked.series.id, locked.originalDate, now, trx);
      });
      return;
    }
    await this.series.transaction(async (trx) => {
      const locked = await this.lockOccurrence(householdId, eventId, trx);
      if (!locked) {
        if (!(await this.store.remove(householdId, eventId, trx))) throw notFoundEvent();
        return;
      }
      const { series, originalDate } = locked;
      const seriesId = series.id;
      if (scope === 'all') {
        await this.series.remove(householdId, seriesId, trx);
        return;
      }
      await this.series.deleteOccurrencesFrom(seriesId, originalDate, trx);
      // The occurrence itself may have been moved before its original date: it goes too.
      await this.store.remove(householdId, eventId, trx);
      const kept = occurrences(series.repeat, series.template.date, series.template.date, addDays(originalDate, -1)).length;
      await this.endSeries(series, originalDate, kept, now, trx);
    });
  }

  /**
   * The `events` part of the data export (PersonalDataSources in @svc/contracts): every event of
   * the household in list order, yielded EXPORT_PAGE at a time (keyset, so memory holds one page
   * however many events there are). No access check: the export asks for households the person
   * belongs to. The export itself reads `exportEventPages`, which makes no object per event.
   */
  async *exportEvents(householdId: string): AsyncIterable<MealEvent[]> {
    for await (const page of this.exportEventPages(householdId)) yield JSON.parse(page.json) as MealEvent[];
  }

  /**
   * The same pages as `exportEvents`, each as the JSON text PostgreSQL wrote of it, the list
   * route's own (PersonalDataSources' `eventPages`): the export writes it through as it is. Pages
   * without events are not yielded.
   */
  async *exportEventPages(householdId: string): AsyncIterable<ExportJsonPage> {
    let after: EventPosition | null = null;
    for (;;) {
      const page = await this.store.walkPage(householdId.toLowerCase(), { from: null, to: null, after, limit: EXPORT_PAGE });
      if (page.items !== '[]') yield { json: page.items };
      if (!page.last) return;
      after = page.last;
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

/** 400 `validation_failed` naming one field of the body. */
function fieldError(field: string, message: string): InputError {
  return new InputError('validation_failed', `The body is not valid: ${field} ${message}`, [{ field, message, in: 'body' }]);
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

/**
 * Events per page of the export: at the events' bounds (2,000-character notes, 50 participants of
 * 100 characters, two bytes a character at worst) a page's text stays under V8's large-object size
 * (128 KB), so it lives and dies in the young generation (why: docs/decisions.md, issue 47).
 */
export const EXPORT_PAGE = 8;

/** 400 `validation_failed` when `from` is later than `to`. */
function assertRange(from: string | undefined, to: string | undefined): void {
  // YYYY-MM-DD strings compare like the dates they name.
  if (from !== undefined && to !== undefined && from > to) {
    throw new InputError('validation_failed', 'The query is not valid: from must not be later than to', [
      { field: 'from', message: 'must not be later than to', in: 'query' },
    ]);
  }
}
