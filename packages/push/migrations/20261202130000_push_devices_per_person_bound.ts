import type { Knex } from 'knex';

/**
 * The bound of devices a person (DEVICES_PER_PERSON, 100) held by the registering statement itself:
 * statement-level triggers after an insert, and after an update that hands a token to another
 * person, take a transaction-scoped lock of each person who got a device, then count that person's
 * devices (at most bound + 1 index entries). Each statement of a trigger function reads with a
 * fresh snapshot, so the count made under the lock sees every registration committed before it:
 * parallel registrations count one after another, and one over the bound raises `PUBND` (the
 * statement writes nothing; the service answers 409 `limit_reached`). So a registration is one
 * statement (it was BEGIN, lock, upsert, count, COMMIT). A known token re-registered by its own
 * person gives nobody a device and is not counted. The bound is the writing statement's
 * transaction-local setting `push.max_devices` when it sets one (a service made with a smaller
 * `maxDevices`, as tests are), else 100.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create function push_devices_within_bound() returns trigger language plpgsql as $$
    declare
      max_devices int := coalesce(nullif(current_setting('push.max_devices', true), '')::int, 100);
      people uuid[];
      u uuid;
    begin
      -- (old_rows exists only in the update's trigger: each branch names only its own tables.)
      if tg_op = 'INSERT' then
        people := array(select distinct user_id from new_rows order by user_id);
      else
        people := array(select distinct n.user_id from new_rows n
                         where not exists (select 1 from old_rows o where o.token_hash = n.token_hash and o.user_id = n.user_id) order by n.user_id);
      end if;
      foreach u in array people loop
        perform pg_advisory_xact_lock(hashtextextended('push_devices:' || u::text, 0));
        if (select count(*) from (select 1 from push_devices where user_id = u limit max_devices + 1) d) > max_devices then
          raise exception 'A person may register at most % devices', max_devices using errcode = 'PUBND', constraint = 'push_devices_per_person';
        end if;
      end loop;
      return null;
    end $$`);
  await knex.raw(`create trigger push_devices_within_bound_insert after insert on push_devices referencing new table as new_rows
                  for each statement execute function push_devices_within_bound()`);
  // Transition tables rule out a column list (UPDATE OF user_id): the function looks for a changed owner itself.
  await knex.raw(`create trigger push_devices_within_bound_update after update on push_devices referencing old table as old_rows new table as new_rows
                  for each statement execute function push_devices_within_bound()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists push_devices_within_bound_insert on push_devices');
  await knex.raw('drop trigger if exists push_devices_within_bound_update on push_devices');
  await knex.raw('drop function if exists push_devices_within_bound()');
}
