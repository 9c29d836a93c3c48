import type { Knex } from 'knex';

/**
 * A phone belongs to an account of @svc/accounts: deleting the account forgets its phones
 * (ON DELETE CASCADE). Rows of accounts that no longer exist were already unreachable; they are
 * removed first so the constraint can be added to a database that ran without it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('delete from push_devices d where not exists (select 1 from accounts a where a.id = d.user_id)');
  await knex.raw('alter table push_devices add constraint push_devices_user_fk foreign key (user_id) references accounts (id) on delete cascade');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table push_devices drop constraint if exists push_devices_user_fk');
}
