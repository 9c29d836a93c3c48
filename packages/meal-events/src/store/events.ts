import { objection, type Pojo, VersionedAnswers } from '@svc/db';
import { type PreparedStatement, preparedQuery } from '@svc/http-kit';
import type { Knex } from 'knex';
import { MealEventModel } from '../models/index.js';
import type { MealEvent, MealEventType, Participant } from '../schemas.js';

/** A row of the page statement: `apiColumns` under the table's own (snake_case) names. */
interface PageRow {
  id: string;
  household_id: string;
  date: string;
  event_type: MealEventType;
  serving_time: string;
  available_cooking_minutes: number;
  notes: string;
  participants: Participant[];
  created_at: string;
  updated_at: string;
  series_id: string | null;
  reminder_minutes: number | null;
}

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

export interface EventPage {
  items: MealEvent[];
  /** True when at least one more event follows the last item (the store reads limit + 1 rows). */
  hasMore: boolean;
}

/** A page as JSON text, written by PostgreSQL: what the list route answers, without a row or an object per event in between. */
export interface EventPageJson {
  /** The items, each exactly as JSON.stringify writes a MealEvent of `page`, joined by commas (no brackets); '' for none. */
  items: string;
  /** The position of the last item when another event follows it (the next page starts after it); null on the last page. */
  last: EventPosition | null;
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

/** A participant as the API answers it: its two members only (never `formerMemberId`). */
export function apiParticipant(p: StoredParticipant): Participant {
  return { memberId: p.memberId, name: p.name };
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
  /** One page in list order (keyset: its cost does not grow with depth). */
  page(householdId: string, request: PageRequest): Promise<EventPage>;
  /** The same page as `page`, as JSON text. */
  pageJson(householdId: string, request: PageRequest): Promise<EventPageJson>;
  /**
   * The hot list read: the page as `pageJson` reads it, handed to `render`, whose bytes (the
   * answer) this returns. A page this instance answered before, while the household's list is
   * unchanged (`version`: the one the read kernel loaded with the caller), is answered with the
   * bytes `render` made then, without a statement. `render` must
   * depend only on `householdId`, `request` and the page.
   */
  pageAnswer(householdId: string, request: PageRequest, version: string | undefined, render: (page: EventPageJson) => string): Promise<PageAnswer>;
  /**
   * One event of the household; undefined when it has none. `loaded`: the row of `eventRead` as the
   * read kernel loaded it, made into the answer by the model without a statement.
   */
  get(householdId: string, id: string, loaded?: unknown): Promise<MealEvent | undefined>;
  /** Runs `work` in one transaction: everything it writes is kept, or nothing. */
  transaction<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T>;
  /** Writes a new event with the id the service chose. */
  create(householdId: string, id: string, values: MealEventValues, now: Date, trx?: Knex.Transaction, reminderAt?: Date | null): Promise<MealEvent>;
  /**
   * Full replacement (keeps `id` and `createdAt`, adds one to the sequence); undefined when the
   * household has no such event. A participant written without a member (`memberId` null) keeps
   * the `formerMemberId` of the stored participant of the same name, so editing an event does not
   * lose the link an account deletion needs.
   */
  replace(
    householdId: string,
    id: string,
    values: MealEventValues,
    now: Date,
    trx?: Knex.Transaction,
    reminderAt?: Date | null,
  ): Promise<MealEvent | undefined>;
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
  /** Every event dated `from` to `to` (inclusive, YYYY-MM-DD), in list order, with its sequence: the calendar feed's window. */
  calendarWindow(householdId: string, from: string, to: string): Promise<CalendarEvent[]>;
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

/**
 * The participants (a jsonb array) as compact JSON in the schema's key order, memberId then name
 * (jsonb's own text puts spaces after every colon and comma and sorts keys by length): as the
 * events page writes them, the same bytes JSON.stringify would.
 */
function participantsJsonSql(column: string): string {
  return `(select coalesce('[' || string_agg(row_to_json(p)::text, ',' order by a.i) || ']', '[]')
               from jsonb_array_elements(${column}) with ordinality a(v, i)
               cross join lateral (select a.v->'memberId' as "memberId", a.v->'name' as name) p)::json`;
}

/**
 * A page's answer as `render` wrote it: its UTF-8 bytes, kept and sent as they are (http-kit's
 * `sendJsonText` takes a Buffer), their length (Content-Length), and the text read back from them
 * when asked (tests, a caller that wants the string; nothing on the hot path asks).
 */
export interface PageAnswer {
  /** The answer's UTF-8 bytes. */
  body: Buffer;
  /** `body.length`: the Content-Length. */
  bytes: number;
  /** The answer as text, decoded from `body` each time it is read. */
  readonly text: string;
}

function pageAnswerOf(text: string): PageAnswer {
  const body = Buffer.from(text, 'utf8');
  return {
    body,
    bytes: body.length,
    get text() {
      return body.toString('utf8');
    },
  };
}

/** Bytes of page answers an ObjectionMealEventStore keeps unless told otherwise (a page of 100 events is ≈ 35 kB). */
export const DEFAULT_PAGE_CACHE_BYTES = 4 * 1024 * 1024;

export interface ObjectionMealEventStoreOptions {
  /** Bytes of page answers kept for answering again while the list is unchanged (DEFAULT_PAGE_CACHE_BYTES); 0 keeps none. */
  pageCacheBytes?: number;
}

/** MealEventStore on Objection: MealEventModel bound to the knex the host hands in. */
export class ObjectionMealEventStore implements MealEventStore {
  private readonly Event: typeof MealEventModel;

  /** `pageQuery`'s SQL by shape, compiled once. */
  private readonly pageTexts = new Map<string, string>();
  /**
   * Page answers by statement and values, each under the list version its statement read in the
   * same snapshot; least recently used out first past the budget. Kept as strings, on the
   * JavaScript heap, which compacts: as Buffers (memory of their own, outside it) the pages that
   * came and went left the process ~11 MB larger under the bench's mixed load (RSS 201–202 vs
   * 189–191 MB, A/B on one VM, 2026-11-26).
   */
  private readonly answers: VersionedAnswers<PageAnswer>;

  constructor(knex: Knex, options: ObjectionMealEventStoreOptions = {}) {
    this.Event = MealEventModel.bindKnex(knex);
    this.answers = new VersionedAnswers(options.pageCacheBytes ?? DEFAULT_PAGE_CACHE_BYTES, (answer) => answer.bytes);
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

  /** The SQL `page` runs, as a knex builder: the store test and the benchmark EXPLAIN exactly this. */
  pageQuery(householdId: string, request: PageRequest): Knex.QueryBuilder {
    return this.pageBuilder(householdId, request).toKnexQuery();
  }

  /**
   * The statement `page` runs: `pageQuery`'s SQL, compiled by knex once per shape (which of from /
   * to / after it has: the text is the same for every request of one shape), named after the shape,
   * and the request's values in the order of its placeholders (the store test holds them to knex's
   * own bindings for every shape).
   */
  pageStatement(householdId: string, request: PageRequest): PreparedStatement {
    const shape = `${request.from !== null ? 'f' : ''}${request.to !== null ? 't' : ''}${request.after !== null ? 'a' : ''}` || 'all';
    let text = this.pageTexts.get(shape);
    if (text === undefined) {
      text = this.pageQuery(householdId, request).toSQL().toNative().sql;
      this.pageTexts.set(shape, text);
    }
    const values: unknown[] = [householdId];
    if (request.from !== null) values.push(request.from);
    if (request.to !== null) values.push(request.to);
    if (request.after !== null) values.push(request.after.date, request.after.servingTime, request.after.id);
    values.push(request.limit + 1);
    return { name: `meal_events_page_${shape}`, text, values };
  }

  /**
   * The statement `pageJson` runs: `pageStatement`'s rows (the same index scan, cut at limit + 1)
   * made into one row by PostgreSQL — each event as the JSON the API answers (row_to_json keeps the
   * columns' order, which is the schema's; participants rebuilt from the jsonb in the schema's key
   * order, memberId then name), joined in list order; the count of rows read (limit + 1: another
   * page follows) and the position of the limit-th, the next cursor's; and the household's list
   * version in the same snapshot, which the page is cached under. Its one more value is `limit`.
   */
  pageJsonStatement(householdId: string, request: PageRequest): PreparedStatement {
    const page = this.pageStatement(householdId, request);
    const limit = `$${page.values.length + 1}`;
    const participants = participantsJsonSql('q.participants');
    const text = `select coalesce(string_agg(x.j, ',' order by x.n) filter (where x.n <= ${limit}), '') as items, count(*)::int as found,
       (select v.version::text from meal_event_list_versions v where v.household_id = $1) as version,
       max(x.date) filter (where x.n = ${limit}) as last_date, max(x.serving_time) filter (where x.n = ${limit}) as last_serving_time,
       max(x.id::text) filter (where x.n = ${limit}) as last_id
  from (select row_to_json(r)::text as j, q.date, q.serving_time, q.id,
               row_number() over (order by q.date::date, q.serving_time::time, q.id) as n
          from (${page.text}) q
          cross join lateral (select q.id, q.household_id as "householdId", q.date, q.event_type as "eventType", q.serving_time as "servingTime",
                                     q.available_cooking_minutes as "availableCookingMinutes", q.notes, ${participants} as participants,
                                     q.created_at as "createdAt", q.updated_at as "updatedAt", q.series_id as "seriesId",
                                     q.reminder_minutes as "reminderMinutes") r) x`;
    return { name: `${page.name}_json`, text, values: [...page.values, request.limit] };
  }

  /** The page statement's one row as a page, and the list version it read. */
  private async readPageJson(statement: PreparedStatement, request: PageRequest): Promise<{ page: EventPageJson; version: string }> {
    const [row] = await preparedQuery<{
      items: string;
      found: number;
      version: string | null;
      last_date: string | null;
      last_serving_time: string | null;
      last_id: string | null;
    }>(this.Event.knex(), statement);
    const more = row !== undefined && row.found > request.limit && row.last_date !== null && row.last_serving_time !== null && row.last_id !== null;
    const page = { items: row?.items ?? '', last: more ? { date: row.last_date!, servingTime: row.last_serving_time!, id: row.last_id! } : null };
    return { page, version: row?.version ?? '0' };
  }

  /**
   * The list read as JSON text: one prepared statement (`pageJsonStatement`) whose one row holds
   * the page as the API writes it, so the process neither parses a row per event nor builds and
   * serializes an object per event (the store test holds it byte for byte to what the serializer
   * wrote of `page`).
   */
  async pageJson(householdId: string, request: PageRequest): Promise<EventPageJson> {
    return (await this.readPageJson(this.pageJsonStatement(householdId, request), request)).page;
  }

  /**
   * The hot list read: `pageJson`'s statement, its page handed to `render`, and the answer kept
   * under the list version the statement read in the same snapshot. A page asked for again is
   * answered with those bytes, without a statement, when the list version the request's session
   * read loaded (`eventsRead`: `version`) is the one they were made under (every change of the list moves
   * the version in the same transaction); the text is sent as it is (no cursor signed again, no
   * string rebuilt or measured per answer).
   */
  async pageAnswer(householdId: string, request: PageRequest, version: string | undefined, render: (page: EventPageJson) => string): Promise<PageAnswer> {
    const statement = this.pageJsonStatement(householdId, request);
    const key = `${statement.name}\u0000${statement.values.join('\u0000')}`;
    if (version !== undefined) {
      const held = this.answers.get(key, version);
      if (held) return held;
    }
    const read = await this.readPageJson(statement, request);
    // Encoded once here, so every send of it writes these bytes as they are (no string joined to the head and encoded again).
    const answer = pageAnswerOf(render(read.page));
    this.answers.set(key, read.version, answer);
    return answer;
  }

  /**
   * The list read as rows: one prepared statement (`pageStatement`). `apiColumns` already formats every
   * value in PostgreSQL, so each row only gets the API's names, without knex building and compiling
   * the query, a model instance, or a Date parsed and formatted back.
   */
  async page(householdId: string, request: PageRequest): Promise<EventPage> {
    const rows = await preparedQuery<PageRow>(this.Event.knex(), this.pageStatement(householdId, request));
    const hasMore = rows.length > request.limit;
    const items: MealEvent[] = [];
    for (let i = 0; i < rows.length && i < request.limit; i++) {
      const r = rows[i]!;
      items.push({
        id: r.id,
        householdId: r.household_id,
        date: r.date,
        eventType: r.event_type,
        servingTime: r.serving_time,
        availableCookingMinutes: r.available_cooking_minutes,
        notes: r.notes,
        participants: r.participants.map(apiParticipant),
        createdAt: r.created_at,
        updatedAt: r.updated_at,
        seriesId: r.series_id,
        reminderMinutes: r.reminder_minutes,
      });
    }
    return { items, hasMore };
  }

  async get(householdId: string, id: string, loaded?: unknown): Promise<MealEvent | undefined> {
    if (loaded) return this.Event.fromDatabaseJson(loaded as Pojo).toApi();
    return (await this.mine(householdId, id).modify('apiColumns').first())?.toApi();
  }

  async create(
    householdId: string,
    id: string,
    values: MealEventValues,
    now: Date,
    trx?: Knex.Transaction,
    reminderAt: Date | null = null,
  ): Promise<MealEvent> {
    const at = now.toISOString();
    const event = this.Event.fromJson({ id, householdId, ...values, createdAt: at, updatedAt: at, reminderAt: reminderAt?.toISOString() ?? null });
    // One statement (Objection adds `returning id` on PostgreSQL); the answer is what was written, not read back.
    await this.Event.query(trx).insert(event);
    return event.toApi();
  }

  async replace(
    householdId: string,
    id: string,
    values: MealEventValues,
    now: Date,
    trx?: Knex.Transaction,
    reminderAt: Date | null = null,
  ): Promise<MealEvent | undefined> {
    const updatedAt = now.toISOString();
    // One statement: the update itself says whether the event was there, and hands back createdAt.
    // The sequence grows in the same statement, so parallel replacements each count.
    // The participants keep the links of departed members that the client cannot send back (see MealEventStore.replace).
    const rows = await this.mine(householdId, id, trx)
      .patch({
        ...values,
        participants: objection.raw(CARRY_FORMER_MEMBERS, [JSON.stringify(values.participants), 'participants']) as unknown as StoredParticipant[],
        updatedAt,
        reminderAt: reminderAt?.toISOString() ?? null,
        sequence: objection.raw('?? + 1', ['sequence']) as unknown as number,
      })
      .returning(['createdAt', 'seriesId']);
    const row = rows[0];
    if (!row) return undefined;
    return this.Event.fromJson({ id, householdId, ...values, createdAt: row.createdAt, updatedAt, seriesId: row.seriesId ?? null }).toApi();
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

  async calendarWindow(householdId: string, from: string, to: string): Promise<CalendarEvent[]> {
    // One range scan of the ordering index (household_id, date, …), already in list order.
    const rows = await this.Event.query()
      .modify('calendarColumns')
      .where('householdId', householdId)
      .where('mealEvents.date', '>=', from)
      .where('mealEvents.date', '<=', to)
      .orderBy([{ column: 'mealEvents.date' }, { column: 'mealEvents.servingTime' }, { column: 'mealEvents.id' }]);
    return rows.map((row) => ({ ...row.toApi(), sequence: row.sequence }));
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
