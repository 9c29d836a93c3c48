import type { Knex } from 'knex';

/** An inbox row belongs to an account of @svc/accounts: deleting the account forgets its inbox (ON DELETE CASCADE). */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('delete from push_inbox i where not exists (select 1 from accounts a where a.id = i.user_id)');
  await knex.raw('alter table push_inbox add constraint push_inbox_user_fk foreign key (user_id) references accounts (id) on delete cascade');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table push_inbox drop constraint if exists push_inbox_user_fk');
}
