import type { Knex } from 'knex';

/**
 * A feed belongs to a household of @svc/households: deleting the household deletes its feed
 * (ON DELETE CASCADE; the contract deletes a household "with … its calendar feed"), so the address
 * stops working in the same transaction. Feeds of households that are already gone are removed
 * first so the constraint can be added to a database that ran without it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('delete from calendar_feeds f where not exists (select 1 from households h where h.id = f.household_id)');
  await knex.raw(
    'alter table calendar_feeds add constraint calendar_feeds_household_fk foreign key (household_id) references households (id) on delete cascade',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table calendar_feeds drop constraint if exists calendar_feeds_household_fk');
}
