import type { Knex } from 'knex';

/**
 * The rolling count of wrong TOTP codes since the last right one (the lockout's count starts over
 * after each lock; this one does not): at TOTP_FAILURE_CAP codes are refused until a recovery code
 * or a password reset.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('mfa_totp', (t) => {
    t.integer('failed_codes')
      .notNullable()
      .defaultTo(0)
      .comment(
        'Wrong codes since the last right code, recovery code or password reset; at 100 codes are refused (a recovery code or a password reset is needed)',
      );
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('mfa_totp', (t) => {
    t.dropColumn('failed_codes');
  });
}
