import type { Knex } from 'knex';

/**
 * The iCalendar revision of each event: a calendar app replaces its copy of an event only when the
 * feed's SEQUENCE for that UID has grown, so every replacement of an event adds one.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('meal_events', (t) => {
    t.integer('sequence').notNullable().defaultTo(0).comment('iCalendar SEQUENCE: 0 when created, one more on every replacement');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('meal_events', (t) => {
    t.dropColumn('sequence');
  });
}
