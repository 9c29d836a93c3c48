import type { Knex } from 'knex';

/**
 * What a person sees of their own sessions (GET /me/sessions), and the export's rate limit.
 *
 * Sessions get columns of their own instead of more keys in the `sess` JSON: the list is read by
 * account (an index), a session is ended by its public handle, and the rows go with the account
 * through a foreign key, so a sign-in racing an account deletion cannot leave a session behind.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('account_sessions', (t) => {
    t.uuid('account_id').nullable().comment('the signed-in account (sess.accountId, as a column so sessions are listed and deleted with the account)');
    t.uuid('public_id')
      .notNullable()
      .defaultTo(knex.raw('gen_random_uuid()'))
      .comment('the handle GET /me/sessions shows and DELETE /me/sessions/{sessionId} takes; never the session id or cookie value');
    t.timestamp('created_at', { useTz: true })
      .nullable()
      .comment('when the person signed in (kept when the session id is re-issued, e.g. at a password change)');
    t.timestamp('last_seen_at', { useTz: true })
      .nullable()
      .comment('the last request on this session, written at most once a minute (outside the request) so reads stay read-only');
    t.text('user_agent').nullable().comment('User-Agent at sign-in, trimmed, at most 256 characters; null when none was sent');
    t.text('method').nullable().comment('how the person signed in: password, google or apple');
  });
  // Rows written before these columns existed: their account from the JSON; their sign-in time is
  // unknown, so the last renewal (expiry minus the 30-day lifetime) stands in for both times; the
  // method is a guess from what the account can sign in with. Sessions of accounts that are gone
  // could never be used again and are dropped.
  await knex.raw(`delete from account_sessions s where (s.sess->>'accountId') is not null
                    and not exists (select 1 from accounts a where a.id::text = s.sess->>'accountId')`);
  await knex.raw(`update account_sessions s set
      account_id = (s.sess->>'accountId')::uuid,
      created_at = s.expire - interval '30 days',
      last_seen_at = s.expire - interval '30 days',
      method = case when a.password_hash is not null then 'password'
                    else coalesce((select i.provider from account_identities i where i.account_id = a.id order by i.created_at limit 1), 'password') end
    from accounts a where a.id::text = s.sess->>'accountId'`);
  await knex.raw('alter table account_sessions add constraint account_sessions_account_fk foreign key (account_id) references accounts (id) on delete cascade');
  await knex.raw("alter table account_sessions add constraint account_sessions_method_check check (method in ('password', 'google', 'apple'))");
  await knex.raw('create unique index account_sessions_public_id_key on account_sessions (public_id)');
  await knex.raw('create index account_sessions_account_idx on account_sessions (account_id)');

  await knex.schema.alterTable('app_signin_codes', (t) => {
    t.text('method').nullable().comment('the provider the identity came from (google or apple): the session the exchange opens records it');
  });

  await knex.schema.createTable('account_exports', (t) => {
    t.uuid('account_id')
      .primary()
      .references('id')
      .inTable('accounts')
      .onDelete('CASCADE')
      .comment('the account that downloaded its data (gone with the account)');
    t.timestamp('last_started_at', { useTz: true })
      .notNullable()
      .comment('when its latest export started; another may start a minute later (one statement claims the slot, on every instance)');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('account_exports');
  await knex.schema.alterTable('app_signin_codes', (t) => t.dropColumn('method'));
  await knex.raw('drop index if exists account_sessions_account_idx');
  await knex.raw('drop index if exists account_sessions_public_id_key');
  await knex.raw('alter table account_sessions drop constraint if exists account_sessions_method_check');
  await knex.raw('alter table account_sessions drop constraint if exists account_sessions_account_fk');
  await knex.schema.alterTable('account_sessions', (t) => {
    for (const c of ['account_id', 'public_id', 'created_at', 'last_seen_at', 'user_agent', 'method']) t.dropColumn(c);
  });
}
