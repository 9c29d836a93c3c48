import type { Knex } from 'knex';

/**
 * Phones registered for push, one row per token. The account id is an opaque uuid owned by
 * @svc/accounts; the foreign key to accounts is added by this package's `relations` migrations.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('push_devices', (t) => {
    // A btree entry holds at most ~2.7 kB, and a token may be 4096 characters: the key is its hash.
    t.binary('token_hash').primary().comment('SHA-256 of the token (UTF-8); the unique key, so a token is never stored twice');
    t.text('token').notNullable().comment('The push token the provider issued to the app, 1 to 4096 characters, as sent');
    t.uuid('user_id').notNullable().comment('Account the phone belongs to now (opaque id from @svc/accounts)');
    t.text('platform').notNullable().comment('ios or android');
    t.text('provider').notNullable().comment('Push provider that delivers to this token (PUSH_DEFAULT_PROVIDER when the app named none)');
    t.boolean('list_changes').notNullable().comment('Wants listChanges pushes');
    t.boolean('household_news').notNullable().comment('Wants householdNews pushes');
    t.boolean('run_done').notNullable().comment('Wants runDone pushes');
    t.boolean('reminders').notNullable().comment('Wants reminders pushes');
    t.timestamp('last_seen_at', { useTz: true, precision: 3 }).notNullable().comment('Time of the latest PUT of this token');
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().comment('When the current account first registered this token');
    t.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable().comment('Last change of any kind');
    t.index(['user_id'], 'push_devices_user_idx');
  });
  await knex.raw(`alter table push_devices add constraint push_devices_platform_check check (platform in ('ios', 'android'))`);
  await knex.raw('alter table push_devices add constraint push_devices_token_length_check check (char_length(token) between 1 and 4096)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('push_devices');
}
