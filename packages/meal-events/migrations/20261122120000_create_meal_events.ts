import type { Knex } from 'knex';

/**
 * Meal events of a household. The household id is a uuid owned by @svc/households; the foreign key
 * to households is added by this package's `relations` migrations.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('meal_events', (t) => {
    t.uuid('id').primary().comment('Event id (uuid v4, made by the service)');
    t.uuid('household_id').notNullable().comment('Household the event belongs to (opaque id from @svc/households)');
    t.date('date').notNullable().comment("Day of the event, in the household's own calendar");
    t.text('event_type').notNullable().comment('Guests, EatingOut, Away or Activity');
    t.time('serving_time').notNullable().comment('When dinner is served that day; whole minutes (seconds are dropped on input)');
    t.integer('available_cooking_minutes').notNullable().comment('Minutes available for cooking that day, 0 to 1440');
    t.text('notes').notNullable().comment('Free text, up to 2000 characters; empty string when none');
    t.jsonb('participants').notNullable().comment('Array of { memberId: uuid | null, name: string }, at most 50');
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().comment('When the event was created');
    t.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable().comment('When the event was last created or replaced');
  });
  await knex.raw(`alter table meal_events add constraint meal_events_event_type_check check (event_type in ('Guests', 'EatingOut', 'Away', 'Activity'))`);
  await knex.raw('alter table meal_events add constraint meal_events_cooking_minutes_check check (available_cooking_minutes between 0 and 1440)');
  await knex.raw('alter table meal_events add constraint meal_events_notes_length_check check (char_length(notes) <= 2000)');
  await knex.raw(`alter table meal_events add constraint meal_events_participants_check check (jsonb_typeof(participants) = 'array')`);
  // The list's order and its keyset: a page is one index range scan, however deep it is.
  await knex.raw('create index meal_events_household_order_idx on meal_events (household_id, date, serving_time, id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('meal_events');
}
