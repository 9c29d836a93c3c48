import type { Knex } from 'knex';

/**
 * Accounts, their sessions, mailed tokens, the mail outbox, login failures and the waitlist.
 * Every column carries a COMMENT so the schema explains itself in psql (`\d+ accounts`).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('accounts', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()')).comment('account id; the userId of the API');
    t.text('email').nullable().comment('sign-in address as the person typed it (trimmed); null for a social account without one');
    t.text('email_normalized')
      .nullable()
      .unique()
      .comment('the address lower-cased (NFC, trimmed): addresses compare case-insensitively, so this is the unique key');
    t.text('display_name').notNullable().comment('name shown to other members, 1 to 80 characters');
    t.text('password_hash')
      .nullable()
      .comment(
        "bcrypt (cost 12) of base64(SHA-256(password)), so no byte of a long password is lost to bcrypt's 72-byte limit; null: no password (social-only)",
      );
    t.boolean('email_confirmed').notNullable().defaultTo(false).comment('the address has been proven by a mailed token (confirm, reset or change of address)');
    t.text('security_stamp')
      .notNullable()
      .comment(
        'random; copied into each session at sign-in and compared on every request. Rotated by logout, password change, reset and change of address, which ends the other sessions',
      );
    t.timestamp('created_at', { useTz: true }).notNullable().comment('when the account was made');
    t.timestamp('updated_at', { useTz: true }).notNullable().comment('last change of any column');
  });

  // The table layout of connect-pg-simple (sid, sess, expire), made here rather than by the store
  // so that it is migrated like everything else. `expire` is timestamptz: the store writes and
  // compares it with the injected clock, independent of the connection's time zone.
  await knex.schema.createTable('account_sessions', (t) => {
    t.string('sid').primary().comment('session id (the signed value of the service_session cookie)');
    t.json('sess').notNullable().comment("express-session data: cookie, accountId, stamp (the account's security stamp at sign-in), renewedAt");
    t.timestamp('expire', { useTz: true, precision: 6 })
      .notNullable()
      .index('account_sessions_expire_idx')
      .comment('the session ends at this instant (30 days after its last renewal)');
  });

  await knex.schema.createTable('account_tokens', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()')).comment('row id');
    t.uuid('account_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE').comment('the account the token acts on');
    t.text('purpose').notNullable().comment('confirm_email, change_email or reset_password');
    t.binary('token_hash').notNullable().unique().comment('SHA-256 of the mailed token; the token itself is never stored');
    t.text('email').notNullable().comment('the address the token was mailed to, as typed (for change_email: the new address)');
    t.text('email_normalized').notNullable().comment('that address lower-cased; the token only works while it still matches');
    t.text('origin').nullable().comment('reset_password only: forgot_password (counts for the 5-minute duplicate window) or email_change_notice');
    t.timestamp('created_at', { useTz: true }).notNullable().comment('when it was issued (resend cooldown and the forgot-password window read it)');
    t.timestamp('expires_at', { useTz: true }).notNullable().comment('no use after this: 48 h confirm and change, 1 h reset');
    t.timestamp('used_at', { useTz: true }).nullable().comment('set once when spent; a token works at most once');
    t.index(['account_id', 'purpose', 'created_at'], 'account_tokens_account_purpose_idx');
  });
  await knex.raw(
    "alter table account_tokens add constraint account_tokens_purpose_check check (purpose in ('confirm_email', 'change_email', 'reset_password'))",
  );

  await knex.schema.createTable('mail_outbox', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()')).comment('row id');
    t.text('kind').notNullable().comment('which mail: confirm_email, account_exists, change_email, change_email_notice, reset_password');
    t.text('recipient').notNullable().comment('the To address');
    t.text('subject').notNullable().comment('subject line');
    t.text('text_body').notNullable().comment('plain-text body; emptied once delivered (it holds a live token until then)');
    t.text('html_body').notNullable().comment('HTML body; emptied once delivered');
    t.timestamp('created_at', { useTz: true }).notNullable().comment('written in the same transaction as the change that caused the mail');
    t.integer('attempts').notNullable().defaultTo(0).comment('delivery attempts so far');
    t.timestamp('next_attempt_at', { useTz: true }).notNullable().comment('not tried before this instant (exponential backoff after a failure)');
    t.timestamp('sent_at', { useTz: true }).nullable().comment('when the SMTP server (or the .eml file) took it');
    t.timestamp('gave_up_at', { useTz: true }).nullable().comment('set after the last allowed attempt failed; logged as an error');
    t.text('last_error').nullable().comment('message of the last failed attempt');
  });
  await knex.raw('create index mail_outbox_due_idx on mail_outbox (next_attempt_at) where sent_at is null and gave_up_at is null');

  await knex.schema.createTable('login_failures', (t) => {
    t.text('email_normalized').primary().comment('the address tried, lower-cased; unknown addresses get a row too, so they walk the same 401 → 423 path');
    t.integer('failures').notNullable().comment('wrong passwords in a row since the last success or lock');
    t.timestamp('locked_until', { useTz: true }).nullable().comment('logins answer 423 until this instant');
    t.timestamp('updated_at', { useTz: true }).notNullable().comment('last failure');
  });

  await knex.schema.createTable('waitlist', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()')).comment('row id');
    t.text('email_normalized').nullable().comment('address of someone waiting without an account yet (lower-cased); linked at sign-up');
    t.uuid('account_id')
      .nullable()
      .references('id')
      .inTable('accounts')
      .onDelete('CASCADE')
      .comment('the account waiting (set at sign-up for an address already on the list)');
    t.text('reason').notNullable().comment('why: e.g. intake_paused');
    t.timestamp('created_at', { useTz: true }).notNullable().comment('when the entry was made');
  });
  await knex.raw('alter table waitlist add constraint waitlist_who_check check (email_normalized is not null or account_id is not null)');
  await knex.raw('create unique index waitlist_account_idx on waitlist (account_id) where account_id is not null');
  await knex.raw('create unique index waitlist_email_idx on waitlist (email_normalized) where email_normalized is not null and account_id is null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('waitlist');
  await knex.schema.dropTableIfExists('login_failures');
  await knex.schema.dropTableIfExists('mail_outbox');
  await knex.schema.dropTableIfExists('account_tokens');
  await knex.schema.dropTableIfExists('account_sessions');
  await knex.schema.dropTableIfExists('accounts');
}
