import { isPgError, PG } from '@svc/db';
import type { Knex } from 'knex';
import type { HouseholdBounds, MealEventSeries, RepeatRule } from '../schemas.js';
import { boundsSetting, SET_BOUNDS } from './bounds.js';
import type { MealEventValues } from './events.js';

/** A series as stored: its rule, the body its occurrences are made from (date: the first), exceptions, and how far it is written. */
export interface StoredSeries {
  id: string;
  householdId: string;
  repeat: RepeatRule;
  template: MealEventValues;
  /** Original dates of occurrences changed or deleted on their own, earliest first. */
  exceptions: string[];
  /** Occurrences are written up to this date, inclusive. */
  writtenThrough: string;
}

/** One occurrence to write: its event id and date (which is also its original date). */
export interface NewOccurrence {
  id: string;
  date: string;
  /** When it reminds (its series' reminderMinutes before its serving time in the household zone); null or absent: none. */
  remindAt?: Date | null;
}

/** Where an occurrence belongs: its series and the date the series gave it. */
export interface OccurrenceRef {
  seriesId: string;
  originalDate: string;
}

/** The series GET answers: the stored one with the template's participants as the API shows them. */
export function apiSeries(s: StoredSeries): MealEventSeries {
  const t = s.template;
  return {
    id: s.id,
    repeat: s.repeat,
    template: {
      date: t.date,
      eventType: t.eventType,
      servingTime: t.servingTime,
      availableCookingMinutes: t.availableCookingMinutes,
      notes: t.notes,
      participants: t.participants.map((p) => ({ memberId: p.memberId, name: p.name })),
      reminderMinutes: t.reminderMinutes ?? null,
    },
    exceptions: s.exceptions,
  };
}

const SERIES_COLUMNS = `s.id, s.household_id as "householdId", s.repeat, s.template,
  coalesce((select array_agg(to_char(x, 'YYYY-MM-DD') order by x) from unnest(s.exceptions) x), '{}') as exceptions,
  to_char(s.written_through, 'YYYY-MM-DD') as "writtenThrough"`;

/**
 * Occurrences (binding: a jsonb array of { seriesId, id, date }) made from their series'
 * templates, in one INSERT; an occurrence its series already has (the unique key (series_id,
 * original_date)) is skipped, so parallel extenders write each once.
 */
const INSERT_OCCURRENCES = `insert into meal_events (id, household_id, date, event_type, serving_time, available_cooking_minutes, notes, participants,
                         created_at, updated_at, series_id, original_date, reminder_minutes, reminder_at)
  select o.id, s.household_id, o.date, s.template->>'eventType', (s.template->>'servingTime')::time, (s.template->>'availableCookingMinutes')::int,
         s.template->>'notes', s.template->'participants', ?::timestamptz, ?::timestamptz, s.id, o.date,
         (s.template->>'reminderMinutes')::int, o."remindAt"
    from jsonb_to_recordset(?::jsonb) as o("seriesId" uuid, id uuid, date date, "remindAt" timestamptz)
    join meal_event_series s on s.id = o."seriesId"
   where ${SET_BOUNDS}
  on conflict (series_id, original_date) do nothing
  returning id, reminder_at as "remindAt"`;

/** Series storage: raw SQL on the knex the host hands in (the statements are the design: one per write, batch inserts). */
export class SeriesStore {
  constructor(private readonly knex: Knex) {}

  /**
   * Runs `work` in one transaction, run again (up to 5 times) when PostgreSQL chose it as a
   * deadlock's victim: every statement on meal_events also moves the household's list version
   * (a row of meal_event_list_versions, by trigger), which a parallel writer may hold, and an
   * extender's INSERT moves several households' versions in an order of PostgreSQL's choosing.
   */
  async transaction<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.knex.transaction(work);
      } catch (err) {
        if (!isPgError(err, PG.deadlockDetected) || attempt >= 5) throw err;
      }
    }
  }

  /** Holds every occurrence of the series (FOR UPDATE) until `trx` ends: taken right after the series row, before any write moves the list version. */
  async lockOccurrences(seriesId: string, trx: Knex.Transaction): Promise<{ id: string; originalDate: string }[]> {
    const { rows } = await trx.raw(
      `select id, to_char(original_date, 'YYYY-MM-DD') as "originalDate" from meal_events where series_id = ?::uuid order by id for update`,
      [seriesId],
    );
    return rows;
  }

  /**
   * A new series and its first occurrences, in ONE statement (the series row in a CTE, the
   * occurrences from it), whose triggers hold the household's `bounds` (the real ones when left
   * out; past one: SQLSTATE `MEBND`, nothing written).
   */
  async create(
    series: Omit<StoredSeries, 'exceptions'>,
    occurrences: NewOccurrence[],
    now: Date,
    trx?: Knex.Transaction,
    bounds?: HouseholdBounds,
  ): Promise<void> {
    const at = now.toISOString();
    const rows = occurrences.map((o) => ({ id: o.id, date: o.date, remindAt: o.remindAt?.toISOString() ?? null }));
    await (trx ?? this.knex).raw(
      `with s as (insert into meal_event_series (id, household_id, repeat, template, exceptions, written_through, created_at, updated_at)
                  select ?::uuid, ?::uuid, ?::jsonb, ?::jsonb, '{}', ?::date, ?::timestamptz, ?::timestamptz where ${SET_BOUNDS} returning *)
       insert into meal_events (id, household_id, date, event_type, serving_time, available_cooking_minutes, notes, participants,
                                created_at, updated_at, series_id, original_date, reminder_minutes, reminder_at)
       select o.id, s.household_id, o.date, s.template->>'eventType', (s.template->>'servingTime')::time, (s.template->>'availableCookingMinutes')::int,
              s.template->>'notes', s.template->'participants', s.created_at, s.created_at, s.id, o.date, (s.template->>'reminderMinutes')::int, o."remindAt"
         from s, jsonb_to_recordset(?::jsonb) as o(id uuid, date date, "remindAt" timestamptz)`,
      [
        series.id,
        series.householdId,
        JSON.stringify(series.repeat),
        JSON.stringify(series.template),
        series.writtenThrough,
        at,
        at,
        boundsSetting(bounds),
        JSON.stringify(rows),
      ],
    );
  }

  /**
   * For the daily extension: the households' list versions locked (in household order, so
   * parallel extenders do not deadlock each other), then how many more events each may take
   * under the bounds (events dated `liveFrom` or later, and all events): the counts stay true
   * until `trx` ends, since every writer of those households waits on the same rows.
   */
  async room(householdIds: string[], liveFrom: string, bounds: { liveEvents: number; events: number }, trx: Knex.Transaction): Promise<Map<string, number>> {
    await trx.raw('select 1 from meal_event_list_versions where household_id = any(?::uuid[]) order by household_id for update', [householdIds]);
    const { rows } = await trx.raw(
      `select h.id as "householdId",
              least(? - (select count(*) from meal_events e where e.household_id = h.id and e.date >= ?::date),
                    ? - (select count(*) from meal_events e where e.household_id = h.id))::int as room
         from unnest(?::uuid[]) h(id)`,
      [bounds.liveEvents, liveFrom, bounds.events, householdIds],
    );
    return new Map((rows as { householdId: string; room: number }[]).map((r) => [r.householdId, Math.max(0, r.room)]));
  }

  /** The household's series; with `lock`, its row is held (FOR UPDATE) until `trx` ends. */
  async get(householdId: string, id: string, trx?: Knex.Transaction, lock = false): Promise<StoredSeries | undefined> {
    const { rows } = await (trx ?? this.knex).raw(
      `select ${SERIES_COLUMNS} from meal_event_series s where s.household_id = ?::uuid and s.id = ?::uuid${lock ? ' for update' : ''}`,
      [householdId, id],
    );
    return rows[0];
  }

  /** The series and original date of an event (with `lock`, its row held until `trx` ends); undefined when the household has no such event. */
  async occurrenceOf(householdId: string, eventId: string, trx: Knex.Transaction, lock = false): Promise<{ ref: OccurrenceRef | null } | undefined> {
    const { rows } = await trx.raw(
      `select series_id as "seriesId", to_char(original_date, 'YYYY-MM-DD') as "originalDate" from meal_events where household_id = ?::uuid and id = ?::uuid${lock ? ' for update' : ''}`,
      [householdId, eventId],
    );
    const row = rows[0] as { seriesId: string | null; originalDate: string | null } | undefined;
    if (!row) return undefined;
    return { ref: row.seriesId === null ? null : { seriesId: row.seriesId, originalDate: row.originalDate! } };
  }

  /**
   * Writes occurrences of existing series (each once: see INSERT_OCCURRENCES); answers how many
   * were new, and the reminders of those that were (their ids and instants).
   */
  async writeOccurrences(
    occurrences: (NewOccurrence & { seriesId: string })[],
    now: Date,
    trx?: Knex.Transaction,
    bounds?: HouseholdBounds,
  ): Promise<{ written: number; reminders: { id: string; at: Date | null }[] }> {
    if (!occurrences.length) return { written: 0, reminders: [] };
    const at = now.toISOString();
    const rows = occurrences.map((o) => ({ seriesId: o.seriesId, id: o.id, date: o.date, remindAt: o.remindAt?.toISOString() ?? null }));
    const result = await (trx ?? this.knex).raw(INSERT_OCCURRENCES, [at, at, JSON.stringify(rows), boundsSetting(bounds)]);
    const written = result.rows as { id: string; remindAt: Date | null }[];
    return { written: result.rowCount ?? 0, reminders: written.filter((r) => r.remindAt !== null).map((r) => ({ id: r.id, at: r.remindAt })) };
  }

  /** Adds an original date to the series' exceptions (once). */
  async addException(seriesId: string, date: string, now: Date, trx?: Knex.Transaction): Promise<void> {
    await (trx ?? this.knex).raw(
      `update meal_event_series set exceptions = array(select distinct d from unnest(exceptions || ?::date) d order by d), updated_at = ?::timestamptz
        where id = ?::uuid and not (?::date = any(exceptions))`,
      [date, now.toISOString(), seriesId, date],
    );
  }

  /** Rewrites a series' rule, template, exceptions or window. */
  async update(
    seriesId: string,
    patch: Partial<Pick<StoredSeries, 'repeat' | 'template' | 'exceptions' | 'writtenThrough'>>,
    now: Date,
    trx: Knex.Transaction,
  ): Promise<void> {
    const row: Record<string, unknown> = { updated_at: now.toISOString() };
    if (patch.repeat) row.repeat = JSON.stringify(patch.repeat);
    if (patch.template) row.template = JSON.stringify(patch.template);
    if (patch.exceptions) row.exceptions = trx.raw('?::date[]', [patch.exceptions]);
    if (patch.writtenThrough) row.written_through = patch.writtenThrough;
    await trx.raw(
      `update meal_event_series set ${Object.keys(row)
        .map((k) => `${k} = :${k}`)
        .join(', ')} where id = :id`,
      { ...row, id: seriesId },
    );
  }

  /** Deletes the series' occurrences whose original date is `from` or later (but `keep`); answers how many. */
  async deleteOccurrencesFrom(seriesId: string, from: string, trx: Knex.Transaction, keep?: string): Promise<number> {
    const result = await trx.raw(
      `delete from meal_events where series_id = ?::uuid and original_date >= ?::date${keep ? ' and id <> ?::uuid' : ''}`,
      keep ? [seriesId, from, keep] : [seriesId, from],
    );
    return result.rowCount ?? 0;
  }

  /** Deletes a series and (ON DELETE CASCADE) every occurrence of it; false when the household has no such series. */
  async remove(householdId: string, id: string, trx?: Knex.Transaction): Promise<boolean> {
    const result = await (trx ?? this.knex).raw('delete from meal_event_series where household_id = ?::uuid and id = ?::uuid', [householdId, id]);
    return (result.rowCount ?? 0) > 0;
  }

  /** Moves an event into another series as its occurrence of `originalDate`. */
  async moveOccurrence(eventId: string, seriesId: string, originalDate: string, trx: Knex.Transaction): Promise<void> {
    await trx.raw('update meal_events set series_id = ?::uuid, original_date = ?::date where id = ?::uuid', [seriesId, originalDate, eventId]);
  }

  /**
   * `scope=all`: every occurrence of the series gets the body (participants as `store.replace`
   * keeps them: departed members' links carried), each on its own original date, its sequence up
   * by one; answers how many.
   */
  async applyToAll(
    seriesId: string,
    values: MealEventValues,
    now: Date,
    carrySql: string,
    trx: Knex.Transaction,
    remindAt: { id: string; at: Date | null }[] = [],
    bounds?: HouseholdBounds,
  ): Promise<number> {
    const reminders = JSON.stringify(remindAt.map((r) => ({ id: r.id, at: r.at?.toISOString() ?? null })));
    const result = await trx.raw(
      `update meal_events set date = original_date, event_type = ?, serving_time = ?::time, available_cooking_minutes = ?, notes = ?,
              participants = ${carrySql}, updated_at = ?::timestamptz, sequence = sequence + 1, reminder_minutes = ?::int,
              reminder_at = (select r.at from jsonb_to_recordset(?::jsonb) as r(id uuid, at timestamptz) where r.id = meal_events.id)
        where series_id = ?::uuid and ${SET_BOUNDS}`,
      [
        values.eventType,
        values.servingTime,
        values.availableCookingMinutes,
        values.notes,
        JSON.stringify(values.participants),
        'participants',
        now.toISOString(),
        values.reminderMinutes ?? null,
        reminders,
        seriesId,
        boundsSetting(bounds),
      ],
    );
    return result.rowCount ?? 0;
  }

  /**
   * Up to `limit` series whose window is behind `horizonBound` (the latest horizon of any zone),
   * after `afterId` in id order, held FOR UPDATE SKIP LOCKED in `trx`: a series another extender
   * holds is skipped (it is being extended), never waited for.
   */
  async behind(horizonBound: string, afterId: string | null, limit: number, trx: Knex.Transaction): Promise<StoredSeries[]> {
    const { rows } = await trx.raw(
      `select ${SERIES_COLUMNS} from meal_event_series s
        where s.written_through < ?::date and (s.repeat->>'until' is null or (s.repeat->>'until')::date > s.written_through)
          ${afterId ? 'and s.id > ?::uuid' : ''}
        order by s.id limit ? for update skip locked`,
      afterId ? [horizonBound, afterId, limit] : [horizonBound, limit],
    );
    return rows;
  }

  /** Moves the windows of several series (one statement). */
  async setWrittenThrough(windows: { id: string; writtenThrough: string }[], trx: Knex.Transaction): Promise<void> {
    if (!windows.length) return;
    await trx.raw(
      `update meal_event_series s set written_through = greatest(s.written_through, w."writtenThrough")
         from jsonb_to_recordset(?::jsonb) as w(id uuid, "writtenThrough" date) where s.id = w.id`,
      [JSON.stringify(windows)],
    );
  }

  /**
   * The day's extension job: true for the first caller of `day` (UTC), false for every later one,
   * so that of all instances' timers one enqueues it. `work` runs in the same transaction.
   */
  async claimDay(day: string, now: Date, work: (trx: Knex.Transaction) => Promise<void>): Promise<boolean> {
    return this.knex.transaction(async (trx) => {
      const { rows } = await trx.raw(
        'insert into meal_event_series_extension_days (day, enqueued_at) values (?::date, ?::timestamptz) on conflict (day) do nothing returning day',
        [day, now.toISOString()],
      );
      if (!rows.length) return false;
      await work(trx);
      return true;
    });
  }
}
