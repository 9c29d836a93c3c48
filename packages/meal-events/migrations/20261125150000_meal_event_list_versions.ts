import type { Knex } from 'knex';

/**
 * A version per household's event list, moved by PostgreSQL itself in the statement that changes
 * the list (statement-level triggers on meal_events, whoever writes: the service, a script, a
 * cascade), so a page of the list cached by any instance is known to be current or not by one
 * number read with the session (see the store's page cache). Versions come from one sequence, so
 * a number is never given twice; a household without events has no row (version 0: an empty
 * list), so a deleted household leaves nothing behind. No foreign key: a household's deletion
 * cascades to its events, whose trigger then removes the row.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('meal_event_list_versions', (t) => {
    t.uuid('household_id').primary();
    t.bigInteger('version')
      .notNullable()
      .comment('A new number of meal_event_list_version_seq with every statement that inserts, changes or deletes events of the household');
  });
  await knex.raw('create sequence meal_event_list_version_seq');
  await knex.raw(`
    create function meal_event_list_bump() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        insert into meal_event_list_versions (household_id, version)
          select h, nextval('meal_event_list_version_seq') from (select distinct household_id as h from new_rows) c
          on conflict (household_id) do update set version = excluded.version;
      elsif tg_op = 'UPDATE' then
        insert into meal_event_list_versions (household_id, version)
          select h, nextval('meal_event_list_version_seq') from (select household_id as h from new_rows union select household_id from old_rows) c
          on conflict (household_id) do update set version = excluded.version;
      else
        -- A household left without events (its last one deleted, or the household itself) keeps no
        -- row: version 0 is then an empty list, and any other number was never given before.
        delete from meal_event_list_versions v
         where v.household_id in (select household_id from old_rows)
           and not exists (select 1 from meal_events e where e.household_id = v.household_id);
        insert into meal_event_list_versions (household_id, version)
          select h, nextval('meal_event_list_version_seq') from (select distinct household_id as h from old_rows) c
           where exists (select 1 from meal_events e where e.household_id = c.h)
          on conflict (household_id) do update set version = excluded.version;
      end if;
      return null;
    end $$`);
  await knex.raw(`create trigger meal_event_list_insert after insert on meal_events referencing new table as new_rows
                  for each statement execute function meal_event_list_bump()`);
  await knex.raw(`create trigger meal_event_list_update after update on meal_events referencing old table as old_rows new table as new_rows
                  for each statement execute function meal_event_list_bump()`);
  await knex.raw(`create trigger meal_event_list_delete after delete on meal_events referencing old table as old_rows
                  for each statement execute function meal_event_list_bump()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists meal_event_list_insert on meal_events');
  await knex.raw('drop trigger if exists meal_event_list_update on meal_events');
  await knex.raw('drop trigger if exists meal_event_list_delete on meal_events');
  await knex.raw('drop function if exists meal_event_list_bump()');
  await knex.raw('drop sequence if exists meal_event_list_version_seq');
  await knex.schema.dropTableIfExists('meal_event_list_versions');
}
