import type { Knex } from 'knex';

/**
 * A household's calendar feed: at most one secret address at a time (a new one retires the old,
 * so the household id is the key). The token itself is never stored in the clear: its SHA-256
 * finds the feed, and a sealed copy (AES-256-GCM under a key derived from SESSION_SECRET) lets the
 * household's adults read the address again. The foreign key to households is added by this
 * package's `relations` migrations.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('calendar_feeds', (t) => {
    t.uuid('household_id').primary().comment('Household whose meals the feed shows (opaque id from @svc/households); one feed per household');
    t.binary('token_hash')
      .notNullable()
      .unique({ indexName: 'calendar_feeds_token_hash_key' })
      .comment('SHA-256 of the 256-bit token as it appears in the URL; the lookup key');
    t.binary('sealed_token').notNullable().comment('The token sealed with AES-256-GCM (12-byte IV, 16-byte tag, ciphertext), bound to the household id');
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().comment('When this address was made');
  });
  await knex.raw('alter table calendar_feeds add constraint calendar_feeds_token_hash_length_check check (octet_length(token_hash) = 32)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('calendar_feeds');
}
