import type { Knex } from 'knex';

/** A session may be signed in with a passkey (@svc/sign-in-factors): `method` gains `passkey`. */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table account_sessions drop constraint if exists account_sessions_method_check');
  await knex.raw("alter table account_sessions add constraint account_sessions_method_check check (method in ('password', 'google', 'apple', 'passkey'))");
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw("update account_sessions set method = 'password' where method = 'passkey'");
  await knex.raw('alter table account_sessions drop constraint if exists account_sessions_method_check');
  await knex.raw("alter table account_sessions add constraint account_sessions_method_check check (method in ('password', 'google', 'apple'))");
}
