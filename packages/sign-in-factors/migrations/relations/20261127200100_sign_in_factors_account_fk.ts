import type { Knex } from 'knex';

const TABLES = ['mfa_totp', 'mfa_recovery_codes', 'mfa_sign_in_tokens', 'webauthn_challenges', 'passkeys'];

/** Every row belongs to an account of @svc/accounts: deleting the account deletes them (ON DELETE CASCADE). */
export async function up(knex: Knex): Promise<void> {
  for (const table of TABLES) {
    await knex.raw(`delete from ${table} r where r.account_id is not null and not exists (select 1 from accounts a where a.id = r.account_id)`);
    await knex.raw(`alter table ${table} add constraint ${table}_account_fk foreign key (account_id) references accounts (id) on delete cascade`);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of TABLES) await knex.raw(`alter table ${table} drop constraint if exists ${table}_account_fk`);
}
