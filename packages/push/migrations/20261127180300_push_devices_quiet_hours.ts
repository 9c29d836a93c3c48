import type { Knex } from 'knex';

/** Quiet hours of a phone, and the state of its householdNews batching (one message per phone per minute). */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('push_devices', (t) => {
    t.jsonb('quiet_hours').nullable().comment('{ "start": "HH:mm", "end": "HH:mm" } in the zone of the household a notification is about; null: none');
    t.timestamp('news_sent_at', { useTz: true, precision: 3 }).nullable().comment('When the last householdNews message went to this phone');
    t.timestamp('news_held_from', { useTz: true, precision: 3 })
      .nullable()
      .comment('The oldest householdNews held for this phone (batched or quiet hours); null: none held');
    t.timestamp('news_held_until', { useTz: true, precision: 3 }).nullable().comment('When the held householdNews go out as one message; null: none held');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('push_devices', (t) => {
    t.dropColumns('quiet_hours', 'news_sent_at', 'news_held_from', 'news_held_until');
  });
}
