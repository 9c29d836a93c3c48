import type { Knex } from 'knex';

/**
 * Meals that repeat (decisions.md §8): a series keeps its repeat rule, the event body its
 * occurrences are made from (`template`, whose date is the first occurrence), the original dates
 * of the occurrences changed or deleted on their own (`exceptions`) and how far its occurrences
 * have been written (`written_through`). Each occurrence is an ordinary row of meal_events with
 * `series_id` and its `original_date`; the unique key (series_id, original_date) is what lets
 * parallel extenders (every instance runs the daily extension) write each occurrence once.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('meal_event_series', (t) => {
    t.uuid('id').primary().comment('Series id (uuid v4, made by the service)');
    t.uuid('household_id').notNullable().comment('Household the series belongs to (opaque id from @svc/households)');
    t.jsonb('repeat').notNullable().comment('{ frequency, interval, byDay (weekly) | null, until | null, count | null }');
    t.jsonb('template').notNullable().comment('The event body occurrences are made from; its date is the first occurrence');
    t.specificType('exceptions', 'date[]').notNullable().defaultTo('{}').comment('Original dates of occurrences changed or deleted on their own (scope=this)');
    t.date('written_through').notNullable().comment('Occurrences are written up to this date (inclusive); the daily extension moves it');
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable();
    t.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable();
  });
  // The daily extension looks for series whose window is behind.
  await knex.raw('create index meal_event_series_written_through_idx on meal_event_series (written_through)');
  await knex.raw('create index meal_event_series_household_idx on meal_event_series (household_id)');
  await knex.schema.alterTable('meal_events', (t) => {
    t.uuid('series_id')
      .nullable()
      .references('id')
      .inTable('meal_event_series')
      .onDelete('CASCADE')
      .comment('The series of an occurrence; null for a single event');
    t.date('original_date').nullable().comment('The date the series gave the occurrence (it stays when the occurrence is moved)');
  });
  await knex.raw('alter table meal_events add constraint meal_events_series_occurrence_key unique (series_id, original_date)');
  await knex.raw('alter table meal_events add constraint meal_events_series_original_date_check check ((series_id is null) = (original_date is null))');
  // One row per UTC day whose extension job was enqueued: every instance's timer tries, one wins.
  await knex.schema.createTable('meal_event_series_extension_days', (t) => {
    t.date('day').primary().comment('The day (UTC) whose window extension job was enqueued');
    t.timestamp('enqueued_at', { useTz: true, precision: 3 }).notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('meal_event_series_extension_days');
  await knex.raw('alter table meal_events drop constraint if exists meal_events_series_occurrence_key');
  await knex.raw('alter table meal_events drop constraint if exists meal_events_series_original_date_check');
  await knex.schema.alterTable('meal_events', (t) => {
    t.dropColumn('series_id');
    t.dropColumn('original_date');
  });
  await knex.schema.dropTableIfExists('meal_event_series');
}
