import type { Knex } from 'knex';

/**
 * The external cookie is single use on the server: external-callback records its id here before it
 * signs anybody in, so a copied cookie value cannot be spent twice within its five minutes.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('spent_external_cookies', (t) => {
    t.text('jti')
      .primary()
      .comment('the unique id (jti) of a service_external cookie that external-callback has spent; a second insert of it finds the row and the sign-in fails');
    t.timestamp('expires_at', { useTz: true })
      .notNullable()
      .comment(
        "the cookie's own expiry (five minutes after it was minted); housekeeping deletes the row a day after it, when the cookie can no longer verify anyway",
      );
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('spent_external_cookies');
}
