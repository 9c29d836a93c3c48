import type { Knex } from 'knex';

/**
 * State that keeps single-use things single use and unasked mail bounded, shared by every
 * instance through PostgreSQL:
 * - `unasked_mail_counts`: how many unasked mails (account-exists, reset, confirmation, change of
 *   address) went to one recipient, or were asked for by one client IP, in the current window;
 * - `spent_identity_tokens`: native Apple identity tokens (by their nonce) already used to sign in;
 * - `app_signin_codes.session_id` / `replayed_at`: the session an exchange code created, so that a
 *   replay of the code can end it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('unasked_mail_counts', (t) => {
    t.text('key').primary().comment("what is counted: 'to:' + a recipient address (lower-cased), or 'ip:' + a client IP; never anything else");
    t.timestamp('window_started_at', { useTz: true })
      .notNullable()
      .comment('start of the current counting window; a request after the window restarts the count');
    t.integer('count').notNullable().comment('requests for unasked mail in this window (dropped ones included)');
  });

  await knex.schema.createTable('spent_identity_tokens', (t) => {
    t.text('key')
      .primary()
      .comment("'apple:nonce:' + the token's nonce, or 'apple:token:' + SHA-256 of a token without one; a second sign-in with it is refused");
    t.timestamp('expires_at', { useTz: true })
      .notNullable()
      .comment("the token's own exp; housekeeping deletes the row a day later, when the token no longer verifies anyway");
  });

  await knex.raw(
    "comment on column mail_outbox.kind is 'which mail: confirm_email, account_exists, change_email, change_email_notice, reset_password, or a security notice: password_reset_notice, password_changed_notice, email_changed_notice, identity_linked_notice'",
  );
  await knex.raw(
    "comment on column account_tokens.used_at is 'set once when spent, or when retired: by a newer token of the same purpose, or by a change of password or address; a token works at most once'",
  );

  await knex.schema.alterTable('app_signin_codes', (t) => {
    t.text('session_id').nullable().comment('the session the successful exchange created; a replay of the code deletes it (RFC 6749 §4.1.2)');
    t.timestamp('replayed_at', { useTz: true }).nullable().comment('when the code was presented again after its first exchange');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw("comment on column account_tokens.used_at is 'set once when spent; a token works at most once'");
  await knex.raw("comment on column mail_outbox.kind is 'which mail: confirm_email, account_exists, change_email, change_email_notice, reset_password'");
  await knex.schema.alterTable('app_signin_codes', (t) => {
    t.dropColumn('replayed_at');
    t.dropColumn('session_id');
  });
  await knex.schema.dropTableIfExists('spent_identity_tokens');
  await knex.schema.dropTableIfExists('unasked_mail_counts');
}
