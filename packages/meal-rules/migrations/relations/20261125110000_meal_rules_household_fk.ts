import type { Knex } from 'knex';

/**
 * A rule belongs to a household of @svc/households: deleting the household deletes its rules
 * (ON DELETE CASCADE; deleting a household takes its rules with it). Rules of households that no
 * longer exist were already unreachable (every route asks the household first); they are removed
 * first so the constraint can be added to a database that ran without it. The cascade finds a
 * household's rules through `meal_rules_household_created_idx`, whose first column is household_id.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('delete from meal_rules r where not exists (select 1 from households h where h.id = r.household_id)');
  await knex.raw('alter table meal_rules add constraint meal_rules_household_fk foreign key (household_id) references households (id) on delete cascade');
  await knex.raw(`comment on column meal_rules.household_id is 'The household the rule belongs to (households.id; deleting the household deletes its rules)'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table meal_rules drop constraint if exists meal_rules_household_fk');
  await knex.raw(`comment on column meal_rules.household_id is 'The household the rule belongs to (opaque id from @svc/households; no foreign key)'`);
}
