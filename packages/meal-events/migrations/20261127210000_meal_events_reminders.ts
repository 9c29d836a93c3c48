import type { Knex } from 'knex';

/**
 * Reminders (decisions.md §8 "Push delivery"): an event's `reminder_minutes` before its serving
 * time, and the instant that gives in the household's zone (`reminder_at`), written with the event.
 * A reminder job carries the instant it was enqueued for; when it runs it sends only while the
 * event still has that instant, so a change that moved or removed the reminder makes the old job
 * do nothing (the change enqueues the new one in its own transaction).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('meal_events', (t) => {
    t.integer('reminder_minutes').nullable().comment('Minutes before the serving time the participants are reminded (0–10080); null: no reminder');
    t.timestamp('reminder_at', { useTz: true, precision: 3 })
      .nullable()
      .comment('When the reminder is due (serving time minus reminder_minutes in the household zone, as written); null: none');
  });
  await knex.raw('alter table meal_events add constraint meal_events_reminder_minutes_check check (reminder_minutes between 0 and 10080)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table meal_events drop constraint if exists meal_events_reminder_minutes_check');
  await knex.schema.alterTable('meal_events', (t) => {
    t.dropColumn('reminder_at');
    t.dropColumn('reminder_minutes');
  });
}
