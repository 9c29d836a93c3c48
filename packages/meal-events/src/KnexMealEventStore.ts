import { randomUUID } from 'node:crypto';
import type { Clock } from '@svc/contracts';
import type { Knex } from 'knex';
import type { EventPage, MealEvent, MealEventInput, MealEventStore, PageRequest, Participant } from './MealEventStore.js';

interface EventRow {
  id: string;
  householdId: string;
  date: string;
  eventType: MealEvent['eventType'];
  servingTime: string;
  availableCookingMinutes: number;
  notes: string;
  participants: Participant[];
  createdAt: Date;
  updatedAt: Date;
}

/** `HH:mm:ss` comes in too; the service keeps whole minutes so the order matches what clients see. */
export function toMinute(servingTime: string): string {
  return servingTime.slice(0, 5);
}

/** Only the documented members are kept; extra members a client sends are ignored, not stored. */
function cleanParticipants(participants: Participant[]): Participant[] {
  return participants.map((p) => ({ memberId: p.memberId === null ? null : p.memberId.toLowerCase(), name: p.name }));
}

function toEvent(row: EventRow): MealEvent {
  return {
    id: row.id,
    householdId: row.householdId,
    date: row.date,
    eventType: row.eventType,
    servingTime: row.servingTime,
    availableCookingMinutes: row.availableCookingMinutes,
    notes: row.notes,
    participants: row.participants,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/**
 * Meal events on knex. Dates and times are formatted by PostgreSQL (`to_char`), so the answer does
 * not depend on the pg driver's type parsers or the server's DateStyle.
 */
export class KnexMealEventStore implements MealEventStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
  ) {}

  private columns(): (string | Knex.Raw)[] {
    const k = this.knex;
    return [
      'id',
      'householdId',
      k.raw(`to_char(??, 'YYYY-MM-DD') as ??`, ['date', 'date']),
      'eventType',
      k.raw(`to_char(??, 'HH24:MI') as ??`, ['servingTime', 'servingTime']),
      'availableCookingMinutes',
      'notes',
      'participants',
      'createdAt',
      'updatedAt',
    ];
  }

  /**
   * The page query: an equality on household_id, then a row comparison on the rest of the index
   * (household_id, date, serving_time, id), read in index order and cut at limit + 1. PostgreSQL
   * turns the row comparison into an index bound, so page 1,000 reads as few rows as page 1.
   * Public so the benchmark can EXPLAIN exactly what `page` runs.
   */
  pageQuery(householdId: string, request: PageRequest): Knex.QueryBuilder {
    const q = this.knex('mealEvents').select(this.columns()).where('householdId', householdId);
    if (request.from !== null) q.where('mealEvents.date', '>=', request.from);
    if (request.to !== null) q.where('mealEvents.date', '<=', request.to);
    if (request.after !== null) {
      const a = request.after;
      q.whereRaw('(??, ??, ??) > (?::date, ?::time, ?::uuid)', ['mealEvents.date', 'mealEvents.servingTime', 'mealEvents.id', a.date, a.servingTime, a.id]);
    }
    // Qualified: a bare `date` in ORDER BY would name the to_char() output column, and a sort on
    // text cannot use the index (PostgreSQL would read and sort every event of the household).
    return q.orderBy([{ column: 'mealEvents.date' }, { column: 'mealEvents.servingTime' }, { column: 'mealEvents.id' }]).limit(request.limit + 1);
  }

  async page(householdId: string, request: PageRequest): Promise<EventPage> {
    const rows = (await this.pageQuery(householdId, request)) as EventRow[];
    const hasMore = rows.length > request.limit;
    return { items: rows.slice(0, request.limit).map(toEvent), hasMore };
  }

  async get(householdId: string, id: string): Promise<MealEvent | undefined> {
    const row = (await this.knex('mealEvents').select(this.columns()).where({ householdId, id }).first()) as EventRow | undefined;
    return row && toEvent(row);
  }

  async create(householdId: string, input: MealEventInput): Promise<MealEvent> {
    const now = this.clock.now();
    const event: MealEvent = {
      id: randomUUID(),
      householdId,
      date: input.date,
      eventType: input.eventType,
      servingTime: toMinute(input.servingTime),
      availableCookingMinutes: input.availableCookingMinutes,
      notes: input.notes,
      participants: cleanParticipants(input.participants),
      createdAt: now.toISOString(),
      updatedAt: now.toISOString(),
    };
    await this.knex('mealEvents').insert({ ...event, participants: JSON.stringify(event.participants), createdAt: now, updatedAt: now });
    return event;
  }

  async replace(householdId: string, id: string, input: MealEventInput): Promise<MealEvent | undefined> {
    const now = this.clock.now();
    const values = {
      date: input.date,
      eventType: input.eventType,
      servingTime: toMinute(input.servingTime),
      availableCookingMinutes: input.availableCookingMinutes,
      notes: input.notes,
      participants: cleanParticipants(input.participants),
    };
    const rows = (await this.knex('mealEvents')
      .where({ householdId, id })
      .update({ ...values, participants: JSON.stringify(values.participants), updatedAt: now })
      .returning(['createdAt'])) as { createdAt: Date }[];
    const row = rows[0];
    if (!row) return undefined;
    return { id, householdId, ...values, createdAt: row.createdAt.toISOString(), updatedAt: now.toISOString() };
  }

  async remove(householdId: string, id: string): Promise<boolean> {
    const count = await this.knex('mealEvents').where({ householdId, id }).delete();
    return count > 0;
  }
}
