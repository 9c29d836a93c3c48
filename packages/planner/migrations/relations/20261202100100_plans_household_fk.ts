import type { Knex } from 'knex';

/**
 * A plan belongs to a household of @svc/households: deleting the household deletes its plans (ON
 * DELETE CASCADE); the cascade finds them through `plans_household_start_idx`, whose first column
 * is household_id. Plans of households that no longer exist were unreachable already; they go
 * first so the constraint can be added.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('delete from plans p where not exists (select 1 from households h where h.id = p.household_id)');
  await knex.raw('alter table plans add constraint plans_household_fk foreign key (household_id) references households (id) on delete cascade');
  await knex.raw(`comment on column plans.household_id is 'The household the plan is for (households.id; deleting the household deletes its plans)'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table plans drop constraint if exists plans_household_fk');
  await knex.raw(`comment on column plans.household_id is 'The household the plan is for (opaque id from @svc/households; no foreign key)'`);
}
