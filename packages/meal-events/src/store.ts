import type { Knex } from 'knex';
import { MealEventModel } from './models/index.js';
import type { MealEvent, MealEventType, Participant } from './schemas.js';

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
  /** Full replacement (keeps `id` and `createdAt`); undefined when the household has no such event. */
  replace(householdId: string, id: string, values: MealEventValues, now: Date): Promise<MealEvent | undefined>;
  /** Hard delete; false when the household has no such event. */
  remove(householdId: string, id: string): Promise<boolean>;
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

  /**
   * The hot list read. `apiColumns` already selects the API shape (camelCase by the knex mappers,
   * every value formatted by PostgreSQL), so the rows are answered as they come, without a model
   * instance per row. The statement is named per shape (which of from / to / after it has: the text
   * is the same for every call of one shape), so each pooled connection parses and plans it once.
   */
  async page(householdId: string, request: PageRequest): Promise<EventPage> {
    const shape = `${request.from !== null ? 'f' : ''}${request.to !== null ? 't' : ''}${request.after !== null ? 'a' : ''}`;
    const rows = (await this.pageQuery(householdId, request).options({ name: `meal_events_page_${shape || 'all'}` })) as MealEvent[];
    const hasMore = rows.length > request.limit;
    return { items: rows.slice(0, request.limit), hasMore };
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
    const rows = await this.mine(householdId, id)
      .patch({ ...values, updatedAt })
      .returning('createdAt');
    const row = rows[0];
    if (!row) return undefined;
    return this.Event.fromJson({ id, householdId, ...values, createdAt: row.createdAt, updatedAt }).toApi();
  }

  async remove(householdId: string, id: string): Promise<boolean> {
    return (await this.mine(householdId, id).delete()) > 0;
  }
}
