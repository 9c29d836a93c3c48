import type { Knex } from 'knex';

/** A series belongs to a household of @svc/households: deleting the household deletes its series (and, through them and directly, its occurrences). */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('delete from meal_event_series s where not exists (select 1 from households h where h.id = s.household_id)');
  await knex.raw(
    'alter table meal_event_series add constraint meal_event_series_household_fk foreign key (household_id) references households (id) on delete cascade',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table meal_event_series drop constraint if exists meal_event_series_household_fk');
}
