import type { Knex } from 'knex';

/**
 * Notifications and the per-person inbox. A notification is stored once; `push_inbox` has one row
 * per person it was for (the inbox lists them, newest first, for 30 days). Account and household
 * ids are opaque uuids of @svc/accounts and @svc/households.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('push_notifications', (t) => {
    t.uuid('id').primary().comment('The notification id (answered by the internal route; the inbox item id)');
    t.uuid('household_id').notNullable().comment('The household it is about (opaque id from @svc/households)');
    t.text('kind').notNullable().comment('listChanges, householdNews, runDone or reminders');
    t.text('title').notNullable().comment('Visible title, at most 100 characters');
    t.text('body').notNullable().comment('Visible text, at most 500 characters');
    t.jsonb('data').notNullable().defaultTo('{}').comment("The sender's data object, at most 2,048 bytes as JSON; {} when none");
    t.text('time_zone_id').notNullable().comment("The household's zone when it was sent: quiet hours are read in it");
    t.text('language').notNullable().comment("The household's preferredLanguage when it was sent (merged news are written in it)");
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().comment('When it was sent');
    t.index(['household_id', 'created_at'], 'push_notifications_household_idx');
  });
  await knex.raw(
    `alter table push_notifications add constraint push_notifications_kind_check check (kind in ('listChanges', 'householdNews', 'runDone', 'reminders'))`,
  );
  await knex.schema.createTable('push_inbox', (t) => {
    t.uuid('user_id').notNullable().comment('The person it was for (opaque id from @svc/accounts)');
    t.uuid('notification_id').notNullable().references('id').inTable('push_notifications').onDelete('CASCADE').comment('The notification');
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().comment("The notification's time, kept here for the inbox's keyset order");
    t.timestamp('read_at', { useTz: true, precision: 3 }).nullable().comment('When the person marked it (or a newer one) read; null: unread');
    t.primary(['user_id', 'notification_id']);
    t.index(['user_id', 'created_at', 'notification_id'], 'push_inbox_page_idx');
  });
  await knex.raw('create index push_inbox_notification_idx on push_inbox (notification_id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('push_inbox');
  await knex.schema.dropTableIfExists('push_notifications');
}
