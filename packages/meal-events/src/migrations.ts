import { type MigrationSet, runMigrations } from '@svc/db';
import type { Knex } from 'knex';
import * as createMealEvents from '../migrations/20261122120000_create_meal_events.js';

/** This package's own tables, in the order they run; the history lives in `knex_migrations_meal_events`. */
export const migrations: MigrationSet = {
  name: 'meal_events',
  migrations: [{ name: '20261122120000_create_meal_events', up: createMealEvents.up, down: createMealEvents.down }],
};

/** Brings this package's own tables up to date. */
export async function migrate(knex: Knex): Promise<string[]> {
  return runMigrations(knex, [migrations]);
}
