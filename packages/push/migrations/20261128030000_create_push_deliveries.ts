import type { Knex } from 'knex';

/**
 * What a notification's fan-out job has done for each phone: a row per notification and phone it
 * is done with (sent, gone, refused for good, or handed to a delivery job of its own for quiet
 * hours). A run of the job again (after a crash, or a retry of the phones a provider failed) skips
 * these phones, so no phone gets one notification twice. Goes with its notification (30 days).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('push_deliveries', (t) => {
    t.uuid('notification_id').notNullable().references('id').inTable('push_notifications').onDelete('CASCADE').comment('The notification');
    t.binary('token_hash').notNullable().comment('SHA-256 of the phone token (push_devices.token_hash)');
    t.text('outcome')
      .notNullable()
      .comment('sent, gone (the provider called the token dead), refused (for good), or held (a delivery job of its own sends it after quiet hours)');
    t.primary(['notification_id', 'token_hash']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('push_deliveries');
}
