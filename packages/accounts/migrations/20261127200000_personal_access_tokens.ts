import type { Knex } from 'knex';

/**
 * `personal_access_tokens`: a person's tokens for scripts and home automation (decisions.md §8).
 * Only a keyed hash of each token is kept (HMAC-SHA256 under a server secret), so a copy of the
 * table yields no usable token and cannot be checked against guesses without the secret.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('personal_access_tokens', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()')).comment('the handle of the token in the API (GET, DELETE /me/tokens)');
    t.uuid('account_id')
      .notNullable()
      .references('id')
      .inTable('accounts')
      .onDelete('CASCADE')
      .comment('whose token it is: it acts as this person (deleting the account ends it)');
    t.text('name').notNullable().comment('what the person called it (single line, 1–100 characters)');
    t.specificType('scopes', 'text[]')
      .notNullable()
      .comment('what it may do: households:read, events:read, events:write, rules:read, rules:write, plans:read, plans:write');
    t.text('token_hash')
      .notNullable()
      .unique()
      .comment('HMAC-SHA256 of the whole token (mp_pat_…) under the server key, base64url; the token itself is never stored');
    t.timestamp('created_at', { useTz: true }).notNullable().comment('when it was made');
    t.timestamp('expires_at', { useTz: true }).nullable().comment('when it stops working; null: never');
    t.timestamp('last_used_at', { useTz: true }).nullable().comment('the minute it was last used (truncated), written at most once a minute; null: never used');
    t.index(['account_id', 'created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('personal_access_tokens');
}
