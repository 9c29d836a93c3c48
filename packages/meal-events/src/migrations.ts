import type { ChangeSource } from '@svc/contracts';
import { type MigrationSet, runMigrations } from '@svc/db';
import { createQueueMigration, type JobSource } from '@svc/jobs';
import type { Knex } from 'knex';
import * as createMealEvents from '../migrations/20261122120000_create_meal_events.js';
import * as mealEventsSequence from '../migrations/20261125120000_meal_events_sequence.js';
import * as createCalendarFeeds from '../migrations/20261125120100_create_calendar_feeds.js';
import * as mealEventListVersions from '../migrations/20261125150000_meal_event_list_versions.js';
import * as mealEventListTruncate from '../migrations/20261126110100_meal_event_list_truncate.js';
import * as createMealEventSeries from '../migrations/20261127190000_create_meal_event_series.js';
import * as mealEventsReminders from '../migrations/20261127210000_meal_events_reminders.js';
import * as mealEventsBounds from '../migrations/20261202130000_meal_events_bounds.js';
import * as mealEventsHouseholdFk from '../migrations/relations/20261125100000_meal_events_household_fk.js';
import * as calendarFeedsHouseholdFk from '../migrations/relations/20261125120200_calendar_feeds_household_fk.js';
import * as mealEventSeriesHouseholdFk from '../migrations/relations/20261127190100_meal_event_series_household_fk.js';
import { MealEventModel } from './models/index.js';

/** This package's own tables, in the order they run; the history lives in `knex_migrations_meal_events`. */
export const migrations: MigrationSet = {
  name: 'meal_events',
  migrations: [
    { name: '20261122120000_create_meal_events', up: createMealEvents.up, down: createMealEvents.down },
    { name: '20261125120000_meal_events_sequence', up: mealEventsSequence.up, down: mealEventsSequence.down },
    { name: '20261125120100_create_calendar_feeds', up: createCalendarFeeds.up, down: createCalendarFeeds.down },
    { name: '20261125150000_meal_event_list_versions', up: mealEventListVersions.up, down: mealEventListVersions.down },
    { name: '20261126110100_meal_event_list_truncate', up: mealEventListTruncate.up, down: mealEventListTruncate.down },
    { name: '20261127190000_create_meal_event_series', up: createMealEventSeries.up, down: createMealEventSeries.down },
    { name: '20261127210000_meal_events_reminders', up: mealEventsReminders.up, down: mealEventsReminders.down },
    { name: '20261202130000_meal_events_bounds', up: mealEventsBounds.up, down: mealEventsBounds.down },
  ],
};

/**
 * Foreign keys from this package's tables to other packages' tables (meal_events.household_id and
 * calendar_feeds.household_id → households). The host runs every package's `relations` after every
 * package's `migrations`, so the referenced tables exist; a package's own tests run without them.
 * History: `knex_migrations_meal_events_relations`.
 */
export const relations: MigrationSet = {
  name: 'meal_events_relations',
  migrations: [
    { name: '20261125100000_meal_events_household_fk', up: mealEventsHouseholdFk.up, down: mealEventsHouseholdFk.down },
    { name: '20261125120200_calendar_feeds_household_fk', up: calendarFeedsHouseholdFk.up, down: calendarFeedsHouseholdFk.down },
    { name: '20261127190100_meal_event_series_household_fk', up: mealEventSeriesHouseholdFk.up, down: mealEventSeriesHouseholdFk.down },
  ],
};

/**
 * This package's queues in @svc/jobs (the daily window extension of series, reminders): run after @svc/jobs'
 * own migrations, which the host runs first. History: `knex_migrations_meal_events_queues`.
 */
export const queues: MigrationSet = {
  name: 'meal_events_queues',
  migrations: [
    createQueueMigration('20261127190200_series_extend_queue', 'meal-events-series-extend', { expireInSeconds: 900 }),
    createQueueMigration('20261127210100_reminders_queue', 'meal-events-reminders', { expireInSeconds: 120 }),
  ],
};

/** Brings this package's own tables up to date. */
export async function migrate(knex: Knex): Promise<string[]> {
  return runMigrations(knex, [migrations]);
}

/** The events as resources of the changes feed (@svc/changes records their writes). */
export const changeSources: readonly ChangeSource[] = [{ resource: 'event', model: MealEventModel, household: 'householdId' }];

/**
 * Writes of this package that enqueue work by themselves (@svc/jobs installs the triggers, after
 * every package's migrations and queues): an event written with a reminder instant still ahead of
 * the write (by the service's clock: `updated_at`) enqueues its reminder job in the writing
 * statement, due at that instant — a single event, a series' year of occurrences (one statement),
 * the daily extension, a replacement that moves the instant. A write that leaves the instant as it
 * was enqueues nothing (the job already waiting still matches it).
 */
export const jobSources: readonly JobSource[] = [
  {
    model: MealEventModel,
    queue: 'meal-events-reminders',
    payload: { h: 'householdId', e: 'id', at: 'reminderAt' },
    due: 'reminderAt',
    whenNotNull: 'reminderAt',
    onlyAfter: 'updatedAt',
    onUpdateOf: ['reminderAt'],
  },
];
