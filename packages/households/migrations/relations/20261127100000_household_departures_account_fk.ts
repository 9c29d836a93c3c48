import type { Knex } from 'knex';

/**
 * household_departures.user_id CASCADE: a departure is the person's (it refuses their older codes
 * and leads an account deletion to their names); when the account goes, so does the record. The
 * households step of the account deletion reads and deletes them first; the cascade is the
 * database's own guarantee. Records of accounts already gone are deleted before the constraint.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('delete from household_departures d where not exists (select 1 from accounts a where a.id = d.user_id)');
  await knex.raw(
    'alter table household_departures add constraint household_departures_user_fk foreign key (user_id) references accounts (id) on delete cascade',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table household_departures drop constraint if exists household_departures_user_fk');
}
