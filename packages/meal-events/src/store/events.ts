import { objection } from '@svc/db';
import type { Knex } from 'knex';
import { MealEventModel } from '../models/index.js';
import type { MealEvent, MealEventType, Participant } from '../schemas.js';

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

/** The fields of an event as the store writes them: the service has already cut `servingTime` to HH:mm and cleaned the participants. */
export interface MealEventValues {
  date: string;
  eventType: MealEventType;
  servingTime: string;
  availableCookingMinutes: number;
  notes: string;
  participants: Participant[];
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
  get(householdId: string, id: string): Promise<MealEvent | undefined>;
  /** Writes a new event with the id the service chose. */
  create(householdId: string, id: string, values: MealEventValues, now: Date): Promise<MealEvent>;
  /** Full replacement (keeps `id` and `createdAt`, adds one to the sequence); undefined when the household has no such event. */
  replace(householdId: string, id: string, values: MealEventValues, now: Date): Promise<MealEvent | undefined>;
  /** Hard delete; false when the household has no such event. */
  remove(householdId: string, id: string): Promise<boolean>;
  /** Every event dated `from` to `to` (inclusive, YYYY-MM-DD), in list order, with its sequence: the calendar feed's window. */
  calendarWindow(householdId: string, from: string, to: string): Promise<CalendarEvent[]>;
  /**
   * A digest of the same window's ids, sequences and last changes, in list order: it changes
   * whenever an event of the window is added, replaced, moved or deleted. Cheaper than the window.
   */
  calendarFingerprint(householdId: string, from: string, to: string): Promise<string>;
}

/** MealEventStore on Objection: MealEventModel bound to the knex the host hands in. */
export class ObjectionMealEventStore implements MealEventStore {
  private readonly Event: typeof MealEventModel;

  constructor(knex: Knex) {
    this.Event = MealEventModel.bindKnex(knex);
  }

  private mine(householdId: string, id: string) {
    return this.Event.query().where({ householdId, id });
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

  async page(householdId: string, request: PageRequest): Promise<EventPage> {
    const rows = await this.pageBuilder(householdId, request);
    const hasMore = rows.length > request.limit;
    return { items: rows.slice(0, request.limit).map((row) => row.toApi()), hasMore };
  }

  async get(householdId: string, id: string): Promise<MealEvent | undefined> {
    return (await this.mine(householdId, id).modify('apiColumns').first())?.toApi();
  }

  async create(householdId: string, id: string, values: MealEventValues, now: Date): Promise<MealEvent> {
    const at = now.toISOString();
    const event = this.Event.fromJson({ id, householdId, ...values, createdAt: at, updatedAt: at });
    // One statement (Objection adds `returning id` on PostgreSQL); the answer is what was written, not read back.
    await this.Event.query().insert(event);
    return event.toApi();
  }

  async replace(householdId: string, id: string, values: MealEventValues, now: Date): Promise<MealEvent | undefined> {
    const updatedAt = now.toISOString();
    // One statement: the update itself says whether the event was there, and hands back createdAt.
    // The sequence grows in the same statement, so parallel replacements each count.
    const rows = await this.mine(householdId, id)
      .patch({ ...values, updatedAt, sequence: objection.raw('?? + 1', ['sequence']) as unknown as number })
      .returning('createdAt');
    const row = rows[0];
    if (!row) return undefined;
    return this.Event.fromJson({ id, householdId, ...values, createdAt: row.createdAt, updatedAt }).toApi();
  }

  async remove(householdId: string, id: string): Promise<boolean> {
    return (await this.mine(householdId, id).delete()) > 0;
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
