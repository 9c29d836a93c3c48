import type { Knex } from 'knex';

/**
 * - `account_unlinked_identities`: Google and Apple identities a person unlinked from their
 *   account. Such an identity is never linked to that account again by its address alone: a later
 *   sign-in with it is refused unless the person is signed in to the account and asks for the link.
 * - `unasked_mail_counts.recipients`: for a client IP's row, the recipients (hashed) it had unasked
 *   mail sent to in the current window, so its limit counts distinct addresses, not requests.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('account_unlinked_identities', (t) => {
    t.uuid('account_id')
      .notNullable()
      .references('id')
      .inTable('accounts')
      .onDelete('CASCADE')
      .comment('the account the identity was unlinked from (the row goes with the account)');
    t.text('provider').notNullable().comment('google or apple');
    t.text('subject').notNullable().comment("the provider's subject of the unlinked identity");
    t.timestamp('unlinked_at', { useTz: true }).notNullable().comment('when it was unlinked (DELETE /me/logins/{provider})');
    t.primary(['account_id', 'provider', 'subject']);
  });
  await knex.schema.alterTable('unasked_mail_counts', (t) => {
    t.specificType('recipients', 'text[]')
      .nullable()
      .comment(
        "'ip:' rows: the recipients (first 16 hex of SHA-256 of the canonical address, never the address) the IP had unasked mail sent to in this window, the first UNASKED_MAIL_PER_IP of them; null on 'to:' rows",
      );
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('unasked_mail_counts', (t) => {
    t.dropColumn('recipients');
  });
  await knex.schema.dropTableIfExists('account_unlinked_identities');
}
