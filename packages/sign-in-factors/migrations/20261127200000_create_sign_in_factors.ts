import type { Knex } from 'knex';

/**
 * Second factors and passkeys of an account (TOTP with its recovery codes, WebAuthn credentials),
 * the single-use tokens of a pending second step and the single-use WebAuthn challenges, shared by
 * every instance. Account ids are opaque uuids of @svc/accounts; the foreign keys (ON DELETE
 * CASCADE) are added by this package's `relations` migrations.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('mfa_totp', (t) => {
    t.uuid('account_id').primary().comment('The account (one TOTP secret each)');
    t.binary('secret_sealed')
      .notNullable()
      .comment('The base32 secret, AES-256-GCM sealed under a key derived from SESSION_SECRET (IV ‖ tag ‖ ciphertext), the account id as associated data');
    t.timestamp('confirmed_at', { useTz: true, precision: 3 }).nullable().comment('Null while enrolment is pending; set by the first right code: TOTP is on');
    t.bigInteger('last_used_step')
      .nullable()
      .comment('The 30-second step of the last accepted code: a code of this step or an earlier one is refused (replay)');
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().comment('When this secret was made');
  });
  await knex.schema.createTable('mfa_recovery_codes', (t) => {
    t.uuid('account_id').notNullable().comment('The account the code opens');
    t.binary('code_hash').notNullable().comment('HMAC-SHA-256 of the normalised code under a key derived from SESSION_SECRET');
    t.timestamp('used_at', { useTz: true, precision: 3 }).nullable().comment('When it was spent (single use); null while unused');
    t.primary(['account_id', 'code_hash']);
  });
  await knex.schema.createTable('mfa_sign_in_tokens', (t) => {
    t.binary('token_hash').primary().comment('SHA-256 of the mfaToken handed out after a right first factor');
    t.uuid('account_id').notNullable().comment('The account whose first factor was right');
    t.text('method').notNullable().comment('The first factor (password, google, apple): the session records it');
    t.text('return_url').nullable().comment('Browser social sign-in: where /sign-in/verify lands afterwards (site-relative)');
    t.timestamp('expires_at', { useTz: true, precision: 3 }).notNullable().comment('Five minutes after it was issued');
    t.timestamp('used_at', { useTz: true, precision: 3 }).nullable().comment('When the second step completed (single use)');
    t.index(['account_id'], 'mfa_sign_in_tokens_account_idx');
  });
  await knex.raw("alter table mfa_sign_in_tokens add constraint mfa_sign_in_tokens_method_check check (method in ('password', 'google', 'apple'))");
  await knex.schema.createTable('webauthn_challenges', (t) => {
    t.text('challenge').primary().comment('The base64url challenge handed out with WebAuthn options (random, 32 bytes)');
    t.text('purpose').notNullable().comment('registration or authentication');
    t.uuid('account_id').nullable().comment('Registration: the account adding a passkey; null for a sign-in (discoverable credentials)');
    t.timestamp('expires_at', { useTz: true, precision: 3 }).notNullable().comment('Five minutes after it was issued; deleted when used');
  });
  await knex.raw("alter table webauthn_challenges add constraint webauthn_challenges_purpose_check check (purpose in ('registration', 'authentication'))");
  await knex.schema.createTable('passkeys', (t) => {
    t.uuid('id').primary().comment('The passkey id of the API');
    t.uuid('account_id').notNullable().comment('Its account');
    t.text('credential_id').notNullable().unique().comment('The WebAuthn credential id, base64url');
    t.binary('public_key').notNullable().comment('COSE public key');
    t.bigInteger('counter').notNullable().comment('Last signature counter seen (0 for authenticators that keep none)');
    t.specificType('transports', 'text[]').nullable().comment('Transports the authenticator reported');
    t.text('name').notNullable().comment('Its name, given by the person');
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable();
    t.timestamp('last_used_at', { useTz: true, precision: 3 }).nullable().comment('Last sign-in or step-up with it');
    t.index(['account_id'], 'passkeys_account_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['passkeys', 'webauthn_challenges', 'mfa_sign_in_tokens', 'mfa_recovery_codes', 'mfa_totp']) await knex.schema.dropTableIfExists(table);
}
