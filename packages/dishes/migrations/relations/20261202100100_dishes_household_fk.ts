import type { Knex } from 'knex';

/**
 * A dish belongs to a household of @svc/households: deleting the household deletes its dishes
 * (ON DELETE CASCADE; plans keep their own snapshots of the dishes they chose). Dishes of
 * households that no longer exist were already unreachable; they are removed first so the
 * constraint can be added to a database that ran without it. The cascade finds a household's
 * dishes through `dishes_household_name_idx`, whose first column is household_id.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('delete from dishes d where not exists (select 1 from households h where h.id = d.household_id)');
  await knex.raw('alter table dishes add constraint dishes_household_fk foreign key (household_id) references households (id) on delete cascade');
  await knex.raw(`comment on column dishes.household_id is 'The household the dish belongs to (households.id; deleting the household deletes its dishes)'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table dishes drop constraint if exists dishes_household_fk');
  await knex.raw(`comment on column dishes.household_id is 'The household the dish belongs to (opaque id from @svc/households)'`);
}
