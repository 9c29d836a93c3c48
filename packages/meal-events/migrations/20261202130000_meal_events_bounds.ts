import type { Knex } from 'knex';

/**
 * A household's bounds (HOUSEHOLD_BOUNDS: events dated from 31 days before today on, events in
 * all, active series) held by the writing statement itself, so a write costs no statement more
 * than it did before the bounds (issue 44: statements per request do not grow).
 *
 * - Events: a statement-level trigger after an INSERT (and after an UPDATE that moves a date into
 *   the counted window) counts the household's events, at most bound + 1 index entries. It is
 *   named to fire after `meal_event_list_insert`/`_update` (triggers of one event fire in name
 *   order), whose upsert of the household's list-version row holds that row's lock to commit:
 *   parallel writers of a household count one after another, and each statement of a trigger
 *   function reads with a fresh snapshot, so the count sees every write committed before the lock.
 *   "Today" is the service's: the written rows' `updated_at` (its clock), never the database's.
 * - Series: a trigger after an INSERT into meal_event_series takes a transaction-scoped lock of
 *   the household's series and counts the active ones (no end, an `until` not past, an occurrence
 *   from today on; a series made by this statement counts unless its `until` is past, as its
 *   occurrences may follow later in the transaction).
 *
 * Past a bound the trigger raises `MEBND` naming the bound as its constraint; the statement (or
 * its transaction) writes nothing and the service answers 409 `limit_reached`. The numbers are the
 * writing statement's transaction-local setting `meal_events.bounds` (JSON, as the service's
 * `bounds`) when it sets one, else the real ones: a writer that sets nothing is bounded too.
 */
const BOUNDS = `bounds jsonb := coalesce(nullif(current_setting('meal_events.bounds', true), ''), '{}')::jsonb;`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create function meal_events_within_bounds() returns trigger language plpgsql as $$
    declare
      ${BOUNDS}
      live_max int := coalesce((bounds->>'liveEvents')::int, 5000);
      all_max int := coalesce((bounds->>'events')::int, 50000);
      live_from date;
      grown uuid[] := '{}';
      live uuid[];
      h uuid;
    begin
      -- (old_rows exists only in the update's trigger: each branch names only its own tables.)
      if tg_op = 'INSERT' then
        live_from := (select (max(updated_at) at time zone 'UTC')::date - 31 from new_rows);
        grown := array(select distinct household_id from new_rows order by 1);
        live := array(select distinct household_id from new_rows where date >= live_from order by 1);
      else
        live_from := (select (max(n.updated_at) at time zone 'UTC')::date - 31 from new_rows n join old_rows o on o.id = n.id where n.date <> o.date);
        if live_from is null then
          return null;
        end if;
        live := array(select distinct n.household_id from new_rows n join old_rows o on o.id = n.id
                       where n.date >= live_from and o.date < live_from order by 1);
      end if;
      foreach h in array grown loop
        if (select count(*) from (select 1 from meal_events where household_id = h limit all_max + 1) c) > all_max then
          raise exception 'A household keeps at most % meal events in all', all_max
            using errcode = 'MEBND', constraint = 'meal_events_per_household';
        end if;
      end loop;
      foreach h in array live loop
        if (select count(*) from (select 1 from meal_events where household_id = h and date >= live_from limit live_max + 1) c) > live_max then
          raise exception 'A household keeps at most % meal events dated from 31 days ago on', live_max
            using errcode = 'MEBND', constraint = 'meal_events_live_per_household';
        end if;
      end loop;
      return null;
    end $$`);
  // Named to sort after meal_event_list_insert / meal_event_list_update (see above).
  await knex.raw(`create trigger meal_event_list_within_bounds_insert after insert on meal_events referencing new table as new_rows
                  for each statement execute function meal_events_within_bounds()`);
  // Transition tables rule out a column list (UPDATE OF date): the function looks for a moved date itself.
  await knex.raw(`create trigger meal_event_list_within_bounds_update after update on meal_events referencing old table as old_rows new table as new_rows
                  for each statement execute function meal_events_within_bounds()`);

  await knex.raw(`create function meal_event_series_within_bounds() returns trigger language plpgsql as $$
    declare
      ${BOUNDS}
      series_max int := coalesce((bounds->>'activeSeries')::int, 50);
      today date := (select (max(created_at) at time zone 'UTC')::date from new_series);
      h uuid;
    begin
      for h in select distinct household_id from new_series order by 1 loop
        perform pg_advisory_xact_lock(hashtextextended('meal_event_series ' || h::text, 0));
        if (select count(*) from (select 1 from meal_event_series s
              where s.household_id = h
                and ((s.repeat->>'until' is null and s.repeat->>'count' is null)
                     or (s.repeat->>'until')::date >= today
                     or exists (select 1 from meal_events e where e.series_id = s.id and e.date >= today)
                     or (s.repeat->>'until' is null and s.id in (select id from new_series)))
              limit series_max + 1) c) > series_max then
          raise exception 'A household keeps at most % active repeating series', series_max
            using errcode = 'MEBND', constraint = 'meal_event_series_active_per_household';
        end if;
      end loop;
      return null;
    end $$`);
  await knex.raw(`create trigger meal_event_series_within_bounds after insert on meal_event_series referencing new table as new_series
                  for each statement execute function meal_event_series_within_bounds()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists meal_event_series_within_bounds on meal_event_series');
  await knex.raw('drop function if exists meal_event_series_within_bounds()');
  await knex.raw('drop trigger if exists meal_event_list_within_bounds_insert on meal_events');
  await knex.raw('drop trigger if exists meal_event_list_within_bounds_update on meal_events');
  await knex.raw('drop function if exists meal_events_within_bounds()');
}
