import type { Knex } from 'knex';

/**
 * An event belongs to a household of @svc/households: deleting the household deletes its events
 * (ON DELETE CASCADE; the contract deletes a household "with its … events"). Events of households
 * that no longer exist were already unreachable (every route asks the household first); they are
 * removed first so the constraint can be added to a database that ran without it. The cascade
 * finds a household's events through the ordering index, whose first column is household_id.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('delete from meal_events e where not exists (select 1 from households h where h.id = e.household_id)');
  await knex.raw('alter table meal_events add constraint meal_events_household_fk foreign key (household_id) references households (id) on delete cascade');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table meal_events drop constraint if exists meal_events_household_fk');
}
