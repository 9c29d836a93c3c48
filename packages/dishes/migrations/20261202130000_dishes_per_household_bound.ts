import type { Knex } from 'knex';

/**
 * The bound of 2,000 dishes a household (DISH_LIMITS.perHousehold, the contract's number) held by
 * the inserting statement itself: a statement-level trigger takes a transaction-scoped lock of
 * the household's dishes, then counts them (at most 2,001 index entries). Each statement of a
 * trigger function reads with a fresh snapshot, so the count made under the lock sees every
 * creation committed before it, and parallel creations count one after another; one over the
 * bound raises `DIBND` and its statement writes nothing. The service maps it to 409
 * `limit_reached`. So a creation is one statement (it was BEGIN, lock, insert-under-count, COMMIT).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create function dishes_within_bound() returns trigger language plpgsql as $$
    declare
      h uuid;
    begin
      for h in select distinct household_id from new_rows order by household_id loop
        perform pg_advisory_xact_lock(hashtextextended('dishes ' || h::text, 0));
        if (select count(*) from (select 1 from dishes where household_id = h limit 2001) c) > 2000 then
          raise exception 'A household keeps at most 2000 dishes' using errcode = 'DIBND', constraint = 'dishes_per_household';
        end if;
      end loop;
      return null;
    end $$`);
  await knex.raw(`create trigger dishes_within_bound after insert on dishes referencing new table as new_rows
                  for each statement execute function dishes_within_bound()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists dishes_within_bound on dishes');
  await knex.raw('drop function if exists dishes_within_bound()');
}
