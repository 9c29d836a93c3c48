import { objection, type Pojo, standaloneRead, VersionedAnswers } from '@svc/db';
import { loadStandalone, type PreparedStatement, preparedQuery } from '@svc/http-kit';
import type { Knex } from 'knex';
import { MealEventListVersionModel, MealEventModel } from '../models/index.js';
import { eventRead } from '../reads.js';
import type { HouseholdBounds, MealEvent, MealEventType, Participant } from '../schemas.js';
import { boundsSetting, SET_BOUNDS } from './bounds.js';

/** A place in the list's order (`date`, `servingTime`, `id`): the page starts after it. */
export interface EventPosition {
  date: string;
  servingTime: string;
  id: string;
}

export interface PageRequest {
  /** Inclusive bounds, YYYY-MM-DD; null for open. */
  from: string | null;
  to: string | null;
  /** Start strictly after this position; null for the first page. */
  after: EventPosition | null;
  /** 1 to 100. */
  limit: number;
}

/** An event the kernel did not lend (no row, or a path it does not serve): the same declared read as a statement of its own. */
const EVENT = standaloneRead(eventRead);

/**
 * A page of the list, as PostgreSQL wrote it from the model's declaration (`MealEventModel`'s
 * `apiColumnsSql`): the text is what JSON.stringify writes of each event's `toApi()` (a test holds
 * them byte for byte), so the list route sends it without an object per event in between.
 */
export interface EventPage {
  /** The page's events as the JSON text of an array (`[]` for none). */
  readonly items: string;
  /** The position of the last item when another event follows it (the next page starts after it); null on the last page. */
  readonly last: EventPosition | null;
}

/**
 * A participant as stored: the API's two members and, for a member who has since left or been
 * removed, `formerMemberId`, the member id they held (`memberId` is then null). It is never
 * answered; it lets an account deletion find the person's name later, and a PUT that sends the
 * old link back be recognised (see `MealEventsService.replace`).
 */
export interface StoredParticipant extends Participant {
  formerMemberId?: string;
}

/** The fields of an event as the store writes them: the service has already cut `servingTime` to HH:mm and cleaned the participants. */
export interface MealEventValues {
  date: string;
  eventType: MealEventType;
  servingTime: string;
  availableCookingMinutes: number;
  notes: string;
  participants: StoredParticipant[];
  /** Minutes before the serving time the participants are reminded; null or absent: none. */
  reminderMinutes?: number | null;
}

/** What a deleted event was: an occurrence of a series (and its original date) or a single event (both null). */
export interface RemovedEvent {
  seriesId: string | null;
  originalDate: string | null;
}

/** A meal event with its iCalendar revision, as the calendar feed reads it. */
export interface CalendarEvent extends MealEvent {
  /** 0 when created, one more on every replacement. */
  sequence: number;
}

/**
 * What the meal-events service needs from storage. Every method is scoped to one household: an
 * event of another household is not found. Time comes in as `now`; the store holds no clock.
 */
export interface MealEventStore {
  /**
   * One page in list order (keyset: its cost does not grow with depth). With `version` (the list
   * version the read kernel loaded with the caller), a page this instance read before while the
   * household's list is unchanged is answered again without a statement: the same object, so a
   * caller may keep what it made of it (the answer's bytes) beside it.
   */
  page(householdId: string, request: PageRequest, version?: string): Promise<EventPage>;
  /**
   * The page `page` reads, not kept for answering again: for a walk over every page (the export),
   * which would only push the list route's pages out, each page it kept outliving the young
   * generation of the heap.
   */
  walkPage(householdId: string, request: PageRequest): Promise<EventPage>;
  /**
   * One event of the household; undefined when it has none. `loaded`: the row of `eventRead` as the
   * read kernel loaded it (`false`: none), made into the answer by the model without a statement.
   */
  get(householdId: string, id: string, loaded?: Pojo | false): Promise<MealEvent | undefined>;
  /** Runs `work` in one transaction: everything it writes is kept, or nothing. */
  transaction<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T>;
  /**
   * Writes a new event with the id the service chose, in one statement whose trigger holds the
   * household's `bounds` (the real ones when left out): past one, the statement fails with
   * SQLSTATE `MEBND` (see `boundOf`) and writes nothing.
   */
  create(
    householdId: string,
    id: string,
    values: MealEventValues,
    now: Date,
    trx?: Knex.Transaction,
    reminderAt?: Date | null,
    bounds?: HouseholdBounds,
  ): Promise<MealEvent>;
  /**
   * Full replacement (keeps `id` and `createdAt`, adds one to the sequence); undefined when the
   * household has no such event. A participant written without a member (`memberId` null) keeps
   * the `formerMemberId` of the stored participant of the same name, so editing an event does not
   * lose the link an account deletion needs. A date moved into the counted window is held to
   * `bounds` as in `create`.
   */
  replace(
    householdId: string,
    id: string,
    values: MealEventValues,
    now: Date,
    trx?: Knex.Transaction,
    reminderAt?: Date | null,
    bounds?: HouseholdBounds,
  ): Promise<MealEvent | undefined>;
  /**
   * `replace` of an event that belongs to no series, in ONE statement outside any transaction (the
   * PUT of a single event): `absent` when the household has no such event, `occurrence` (nothing
   * written) when it is an occurrence of a series, which the service replaces in a transaction
   * that locks the series first.
   */
  replaceSingle(
    householdId: string,
    id: string,
    values: MealEventValues,
    now: Date,
    reminderAt: Date | null,
    bounds?: HouseholdBounds,
  ): Promise<MealEvent | 'absent' | 'occurrence'>;
  /** Every member id the event's participants name, as `memberId` or as `formerMemberId`; undefined when the household has no such event. */
  participantLinks(householdId: string, id: string, trx?: Knex.Transaction): Promise<Set<string> | undefined>;
  /**
   * A member left or was removed: in every event of the household, the participants linked to
   * `memberId` keep their name and lose the link (`memberId` null, `formerMemberId` kept);
   * `updatedAt` moves to `now` and the sequence grows (calendar apps fetch the event again). One
   * statement; answers the events changed.
   */
  unlinkMember(householdId: string, memberId: string, now: Date, trx?: Knex.Transaction): Promise<number>;
  /**
   * An account is being deleted: every participant linked to one of `members` (as `memberId` or
   * `formerMemberId`) becomes `{ memberId: null, name }`, a place at the table without the
   * person's name; `updatedAt` and the sequence move as in `unlinkMember`. One statement.
   */
  eraseMembers(members: { householdId: string; memberId: string }[], name: string, now: Date, trx?: Knex.Transaction): Promise<number>;
  /** Hard delete; undefined when the household has no such event, else its series and original date (null for a single event). */
  remove(householdId: string, id: string, trx?: Knex.Transaction): Promise<RemovedEvent | undefined>;
  /**
   * `remove` of an event that belongs to no series, in ONE statement outside any transaction (the
   * DELETE of a single event): `removed`; `absent` when the household has no such event;
   * `occurrence` (nothing deleted) when it is an occurrence of a series, which the service removes
   * in a transaction that locks the series first.
   */
  removeSingle(householdId: string, id: string): Promise<'removed' | 'absent' | 'occurrence'>;
  /**
   * Every event dated `from` to `to` (inclusive, YYYY-MM-DD), in list order, with its sequence: the
   * calendar feed's window. With `page`, only up to `limit` of them after the position `after`
   * (the feed reads a large window a page at a time, so no one turn of the event loop makes
   * thousands of objects).
   */
  calendarWindow(householdId: string, from: string, to: string, page?: { after: EventPosition | null; limit: number }): Promise<CalendarEvent[]>;
  /** The household's events list version (moved by PostgreSQL with every change of its events; "0" for none): the calendar feed's ETag. */
  listVersion(householdId: string): Promise<string>;
  /**
   * A digest of the same window's ids, sequences and last changes, in list order: it changes
   * whenever an event of the window is added, replaced, moved or deleted. Cheaper than the window.
   */
  calendarFingerprint(householdId: string, from: string, to: string): Promise<string>;
}

/**
 * The participants of a replacement (binding 1: the new array as JSON; binding 2: the column),
 * each without a member (`memberId` null) and without a `formerMemberId` of its own given the
 * `formerMemberId` of the first stored participant of the same name that has one. In an UPDATE's
 * SET, the column names the row's old value.
 */
export const CARRY_FORMER_MEMBERS = `(select coalesce(jsonb_agg(case when jsonb_typeof(n.p->'memberId') = 'null' and n.p->>'formerMemberId' is null and o.f is not null
                                                    then n.p || jsonb_build_object('formerMemberId', o.f) else n.p end order by n.i), '[]'::jsonb)
    from jsonb_array_elements(?::jsonb) with ordinality n(p, i)
    left join lateral (select x.p->'formerMemberId' as f from jsonb_array_elements(??) x(p)
                        where x.p->>'formerMemberId' is not null and x.p->'name' = n.p->'name' limit 1) o on true)`;

/** Bytes of pages an ObjectionMealEventStore keeps unless told otherwise (a page is counted twice: its text and its rendered answer; docs/benchmarks.md, "What the bench settled"). */
export const DEFAULT_PAGE_CACHE_BYTES = 4 * 1024 * 1024;

export interface ObjectionMealEventStoreOptions {
  /**
   * Bytes kept for answering pages again while the list is unchanged (DEFAULT_PAGE_CACHE_BYTES); 0
   * keeps none. Each page counts twice its text: the page, and what a caller keeps made of it for
   * as long as the page object lives (the service's rendered answer).
   */
  pageCacheBytes?: number;
}

/** MealEventStore on Objection: MealEventModel bound to the knex the host hands in. */
export class ObjectionMealEventStore implements MealEventStore {
  private readonly Event: typeof MealEventModel;

  /** `pageStatement`'s SQL by shape, compiled once. */
  private readonly pageTexts = new Map<string, string>();
  /**
   * Pages by statement and values, each under the list version its statement read in the same
   * snapshot; least recently used out first past the budget.
   */
  private readonly pages: VersionedAnswers<EventPage>;

  constructor(knex: Knex, options: ObjectionMealEventStoreOptions = {}) {
    this.Event = MealEventModel.bindKnex(knex);
    this.pages = new VersionedAnswers(options.pageCacheBytes ?? DEFAULT_PAGE_CACHE_BYTES, (page) => 2 * page.items.length);
  }

  private mine(householdId: string, id: string, trx?: Knex.Transaction) {
    return this.Event.query(trx).where({ householdId, id });
  }

  transaction<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return this.Event.knex().transaction(work);
  }

  /**
   * The page query, on the hot read path: an equality on household_id, then a row comparison on the
   * rest of the index (household_id, date, serving_time, id), read in index order and cut at
   * limit + 1. PostgreSQL turns the row comparison into an index bound, so page 1,000 reads as few
   * rows as page 1. Objection has no row comparison: that one condition is raw SQL on the model's
   * query builder; every column is qualified, since `date` and `servingTime` also name the
   * to_char() outputs (an ORDER BY on those texts could not use the index).
   */
  private pageBuilder(householdId: string, request: PageRequest) {
    const q = this.Event.query().modify('apiColumns').where('householdId', householdId);
    if (request.from !== null) q.where('mealEvents.date', '>=', request.from);
    if (request.to !== null) q.where('mealEvents.date', '<=', request.to);
    if (request.after !== null) {
      const a = request.after;
      q.whereRaw('(??, ??, ??) > (?::date, ?::time, ?::uuid)', ['mealEvents.date', 'mealEvents.servingTime', 'mealEvents.id', a.date, a.servingTime, a.id]);
    }
    return q.orderBy([{ column: 'mealEvents.date' }, { column: 'mealEvents.servingTime' }, { column: 'mealEvents.id' }]).limit(request.limit + 1);
  }

  /** The rows `page` reads (the API fields, `apiColumns`), as a knex builder: the store test and the benchmark EXPLAIN exactly this. */
  pageQuery(householdId: string, request: PageRequest): Knex.QueryBuilder {
    return this.pageBuilder(householdId, request).toKnexQuery();
  }

  /**
   * The statement `page` runs: `pageQuery`'s rows (one index scan, cut at limit + 1; its SQL
   * compiled by knex once per shape — which of from / to / after it has — and named after it) made
   * into one row by PostgreSQL: the first `limit` rows, each `row_to_json` of the model's API
   * fields (so the JSON the API answers), joined in list order into an array; the count of rows
   * read (limit + 1: another page follows) and the position of the limit-th, the next cursor's;
   * and the household's list version in the same snapshot, which the page is kept under. Its
   * values: the request's in the order of knex's placeholders (the store test holds them to
   * knex's own bindings for every shape), then `limit`.
   */
  pageStatement(householdId: string, request: PageRequest): PreparedStatement {
    const shape = `${request.from !== null ? 'f' : ''}${request.to !== null ? 't' : ''}${request.after !== null ? 'a' : ''}` || 'all';
    const values: unknown[] = [householdId];
    if (request.from !== null) values.push(request.from);
    if (request.to !== null) values.push(request.to);
    if (request.after !== null) values.push(request.after.date, request.after.servingTime, request.after.id);
    values.push(request.limit + 1, request.limit);
    let text = this.pageTexts.get(shape);
    if (text === undefined) {
      const limit = `$${values.length}`;
      text = `select coalesce('[' || string_agg(x.j, ',' order by x.n) filter (where x.n <= ${limit}) || ']', '[]') as items, count(*)::int as found,
       (select v.version::text from ${MealEventListVersionModel.tableName} v where v.household_id = $1) as version,
       max(x.date) filter (where x.n = ${limit}) as last_date, max(x.serving_time) filter (where x.n = ${limit}) as last_serving_time,
       max(x.id::text) filter (where x.n = ${limit}) as last_id
  from (select row_to_json(q)::text as j, q.date, q."servingTime" as serving_time, q.id,
               row_number() over (order by q.date::date, q."servingTime"::time, q.id) as n
          from (${this.pageQuery(householdId, request).toSQL().toNative().sql}) q) x`;
      this.pageTexts.set(shape, text);
    }
    return { name: `meal_events_page_${shape}`, text, values };
  }

  /**
   * One page: one prepared statement (`pageStatement`) whose one row holds the page as the API
   * writes it, so the process neither parses a row per event nor builds and serializes an object
   * per event. With `version`, a page read before under that version is the answer (every change
   * of the list moves the version in the same transaction); each page read is kept under the
   * version its statement read in the same snapshot.
   */
  page(householdId: string, request: PageRequest, version?: string): Promise<EventPage> {
    return this.readPage(householdId, request, version, true);
  }

  walkPage(householdId: string, request: PageRequest): Promise<EventPage> {
    return this.readPage(householdId, request, undefined, false);
  }

  private async readPage(householdId: string, request: PageRequest, version: string | undefined, keep: boolean): Promise<EventPage> {
    const statement = this.pageStatement(householdId, request);
    const key = `${statement.name}\u0000${statement.values.join('\u0000')}`;
    if (version !== undefined) {
      const held = this.pages.get(key, version);
      if (held) return held;
    }
    const [row] = await preparedQuery<{
      items: string;
      found: number;
      version: string | null;
      last_date: string | null;
      last_serving_time: string | null;
      last_id: string | null;
    }>(this.Event.knex(), statement);
    const more = row !== undefined && row.found > request.limit && row.last_date !== null && row.last_serving_time !== null && row.last_id !== null;
    const page: EventPage = { items: row?.items ?? '[]', last: more ? { date: row.last_date!, servingTime: row.last_serving_time!, id: row.last_id! } : null };
    if (keep) this.pages.set(key, row?.version ?? '0', page);
    return page;
  }

  async get(householdId: string, id: string, loaded?: Pojo | false): Promise<MealEvent | undefined> {
    const row = loaded ?? (await loadStandalone<Pojo | false>(this.Event.knex(), EVENT, { household: householdId, arg: id }));
    return row ? this.Event.fromDatabaseJson(row).toApi() : undefined;
  }

  async create(
    householdId: string,
    id: string,
    values: MealEventValues,
    now: Date,
    trx?: Knex.Transaction,
    reminderAt: Date | null = null,
    bounds?: HouseholdBounds,
  ): Promise<MealEvent> {
    const at = now.toISOString();
    const event = this.Event.fromJson({ id, householdId, ...values, createdAt: at, updatedAt: at, reminderAt: reminderAt?.toISOString() ?? null });
    // One statement; the answer is what was written, not read back. The household id is written
    // through SET_BOUNDS, which hands the statement's triggers the service's bounds.
    const k = trx ?? this.Event.knex();
    await k('mealEvents').insert({
      ...event.$toDatabaseJson(),
      householdId: k.raw(`(select ?::uuid where ${SET_BOUNDS})`, [householdId, boundsSetting(bounds)]),
    });
    return event.toApi();
  }

  async replace(
    householdId: string,
    id: string,
    values: MealEventValues,
    now: Date,
    trx?: Knex.Transaction,
    reminderAt: Date | null = null,
    bounds?: HouseholdBounds,
  ): Promise<MealEvent | undefined> {
    const updatedAt = now.toISOString();
    // One statement: the update itself says whether the event was there, and hands back createdAt.
    const rows = await this.replacement(this.mine(householdId, id, trx), values, updatedAt, reminderAt, bounds).returning(['createdAt', 'seriesId']);
    const row = rows[0];
    if (!row) return undefined;
    return this.Event.fromJson({ id, householdId, ...values, createdAt: row.createdAt, updatedAt, seriesId: row.seriesId ?? null }).toApi();
  }

  async replaceSingle(
    householdId: string,
    id: string,
    values: MealEventValues,
    now: Date,
    reminderAt: Date | null,
    bounds?: HouseholdBounds,
  ): Promise<MealEvent | 'absent' | 'occurrence'> {
    const updatedAt = now.toISOString();
    // The update of a single event (under its row lock PostgreSQL checks again that it is one),
    // and in the same statement whether the household has the event at all.
    const update = this.replacement(this.mine(householdId, id).whereNull('seriesId'), values, updatedAt, reminderAt, bounds)
      .returning(['createdAt'])
      .toKnexQuery();
    const present = this.mine(householdId, id).select(objection.raw('1')).toKnexQuery();
    const { rows } = await this.Event.knex().raw('with replaced as (?) select (select created_at from replaced) as created, exists (?) as present', [
      update,
      present,
    ]);
    const row = rows[0] as { created: Date | null; present: boolean };
    if (row.created === null) return row.present ? 'occurrence' : 'absent';
    return this.Event.fromJson({ id, householdId, ...values, createdAt: row.created.toISOString(), updatedAt, seriesId: null }).toApi();
  }

  /**
   * The replacement's UPDATE of the events `query` finds. The sequence grows in the same statement,
   * so parallel replacements each count; the participants keep the links of departed members that
   * the client cannot send back (see MealEventStore.replace); a moved date may grow the household:
   * its triggers hold the service's bounds.
   */
  private replacement(
    query: objection.QueryBuilder<MealEventModel>,
    values: MealEventValues,
    updatedAt: string,
    reminderAt: Date | null,
    bounds?: HouseholdBounds,
  ) {
    return query
      .patch({
        ...values,
        participants: objection.raw(CARRY_FORMER_MEMBERS, [JSON.stringify(values.participants), 'participants']) as unknown as StoredParticipant[],
        updatedAt,
        reminderAt: reminderAt?.toISOString() ?? null,
        sequence: objection.raw('?? + 1', ['sequence']) as unknown as number,
      })
      .whereRaw(SET_BOUNDS, [boundsSetting(bounds)]);
  }

  async participantLinks(householdId: string, id: string, trx?: Knex.Transaction): Promise<Set<string> | undefined> {
    const row = await this.mine(householdId, id, trx).select('participants').first();
    if (!row) return undefined;
    const links = new Set<string>();
    for (const p of row.participants as StoredParticipant[]) {
      if (p.memberId) links.add(p.memberId.toLowerCase());
      if (p.formerMemberId) links.add(p.formerMemberId.toLowerCase());
    }
    return links;
  }

  async unlinkMember(householdId: string, memberId: string, now: Date, trx?: Knex.Transaction): Promise<number> {
    const id = memberId.toLowerCase();
    // The templates of the household's series too, so occurrences written later do not link the member either.
    await (trx ?? this.Event.knex()).raw(
      `update meal_event_series set updated_at = ?::timestamptz, template = jsonb_set(template, '{participants}',
         (select jsonb_agg(case when a.p->>'memberId' = ? then jsonb_build_object('memberId', null, 'name', a.p->'name', 'formerMemberId', a.p->'memberId') else a.p end order by a.i)
            from jsonb_array_elements(template->'participants') with ordinality a(p, i)))
        where household_id = ?::uuid and template->'participants' @> ?::jsonb`,
      [now.toISOString(), id, householdId, JSON.stringify([{ memberId: id }])],
    );
    // Objection has no jsonb array rewrite: the new array is raw SQL on the model's own patch.
    return this.Event.query(trx)
      .patch({
        participants: objection.raw(
          `(select jsonb_agg(case when a.p->>'memberId' = ? then jsonb_build_object('memberId', null, 'name', a.p->'name', 'formerMemberId', a.p->'memberId') else a.p end order by a.i)
              from jsonb_array_elements(??) with ordinality a(p, i))`,
          [id, 'participants'],
        ) as unknown as StoredParticipant[],
        updatedAt: now.toISOString(),
        sequence: objection.raw('?? + 1', ['sequence']) as unknown as number,
      })
      .where('householdId', householdId)
      .whereRaw('?? @> ?::jsonb', ['participants', JSON.stringify([{ memberId: id }])]);
  }

  async eraseMembers(members: { householdId: string; memberId: string }[], name: string, now: Date, trx?: Knex.Transaction): Promise<number> {
    if (!members.length) return 0;
    const households = [...new Set(members.map((m) => m.householdId.toLowerCase()))];
    const ids = [...new Set(members.map((m) => m.memberId.toLowerCase()))];
    const linked = `(a.p->>'memberId' = any(?::text[]) or a.p->>'formerMemberId' = any(?::text[]))`;
    // The series' templates first (their later occurrences are made from them).
    await (trx ?? this.Event.knex()).raw(
      `update meal_event_series set updated_at = ?::timestamptz, template = jsonb_set(template, '{participants}',
         (select jsonb_agg(case when ${linked} then jsonb_build_object('memberId', null, 'name', ?::text) else a.p end order by a.i)
            from jsonb_array_elements(template->'participants') with ordinality a(p, i)))
        where household_id = any(?::uuid[]) and exists (select 1 from jsonb_array_elements(template->'participants') a(p) where ${linked})`,
      [now.toISOString(), ids, ids, name, households, ids, ids],
    );
    return this.Event.query(trx)
      .patch({
        participants: objection.raw(
          `(select jsonb_agg(case when ${linked} then jsonb_build_object('memberId', null, 'name', ?::text) else a.p end order by a.i)
              from jsonb_array_elements(??) with ordinality a(p, i))`,
          [ids, ids, name, 'participants'],
        ) as unknown as StoredParticipant[],
        updatedAt: now.toISOString(),
        sequence: objection.raw('?? + 1', ['sequence']) as unknown as number,
      })
      .whereRaw('?? = any(?::uuid[])', ['householdId', households])
      .whereRaw(`exists (select 1 from jsonb_array_elements(??) a(p) where ${linked})`, ['participants', ids, ids]);
  }

  async remove(householdId: string, id: string, trx?: Knex.Transaction): Promise<RemovedEvent | undefined> {
    // One statement; what it answers says whether the event was there and whether it was an occurrence.
    const rows = (await this.mine(householdId, id, trx)
      .delete()
      .returning(['seriesId', objection.raw(`to_char(original_date, 'YYYY-MM-DD') as "originalDate"`) as unknown as string])) as unknown as RemovedEvent[];
    const row = rows[0];
    return row && { seriesId: row.seriesId ?? null, originalDate: row.originalDate ?? null };
  }

  async removeSingle(householdId: string, id: string): Promise<'removed' | 'absent' | 'occurrence'> {
    // The deletion of a single event (under its row lock PostgreSQL checks again that it is one),
    // and in the same statement (its snapshot from before the deletion) whether the household has the event at all.
    const removal = this.mine(householdId, id).whereNull('seriesId').delete().returning('id').toKnexQuery();
    const present = this.mine(householdId, id).select(objection.raw('1')).toKnexQuery();
    const { rows } = await this.Event.knex().raw('with removed as (?) select exists (select 1 from removed) as removed, exists (?) as present', [
      removal,
      present,
    ]);
    const row = rows[0] as { removed: boolean; present: boolean };
    return row.removed ? 'removed' : row.present ? 'occurrence' : 'absent';
  }

  async calendarWindow(householdId: string, from: string, to: string, page?: { after: EventPosition | null; limit: number }): Promise<CalendarEvent[]> {
    // One range scan of the ordering index (household_id, date, …), already in list order.
    const q = this.Event.query()
      .modify('calendarColumns')
      .where('householdId', householdId)
      .where('mealEvents.date', '>=', from)
      .where('mealEvents.date', '<=', to)
      .orderBy([{ column: 'mealEvents.date' }, { column: 'mealEvents.servingTime' }, { column: 'mealEvents.id' }]);
    if (page) {
      // The keyset condition as on the list's pages (a row comparison: an index bound).
      const a = page.after;
      if (a)
        q.whereRaw('(??, ??, ??) > (?::date, ?::time, ?::uuid)', ['mealEvents.date', 'mealEvents.servingTime', 'mealEvents.id', a.date, a.servingTime, a.id]);
      q.limit(page.limit);
    }
    const rows = await q;
    return rows.map((row) => ({ ...row.toApi(), sequence: row.sequence }));
  }

  async listVersion(householdId: string): Promise<string> {
    const row = await MealEventListVersionModel.query(this.Event.knex()).findById(householdId);
    return row?.version ?? '0';
  }

  async calendarFingerprint(householdId: string, from: string, to: string): Promise<string> {
    // One aggregate over the same index range, so an unchanged feed is answered (304) without
    // reading or rendering its events. Objection has no ordered string_agg: raw select on the
    // model's query. Every PUT moves updated_at and sequence, so together with the ids they
    // cover every field the feed shows.
    const row = (await this.Event.query()
      .select(
        this.Event.knex().raw(
          "count(*)::text || ':' || coalesce(md5(string_agg(id::text || '/' || sequence || '/' || (extract(epoch from updated_at) * 1000)::bigint, ',' order by date, serving_time, id)), '') as fingerprint",
        ),
      )
      .where('householdId', householdId)
      .where('date', '>=', from)
      .where('date', '<=', to)
      .first()) as unknown as { fingerprint: string };
    return row.fingerprint;
  }
}
