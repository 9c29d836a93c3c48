import { type MigrationSet, runMigrations } from '@svc/db';
import type { Knex } from 'knex';
import * as createMealRules from '../migrations/20261122100000_create_meal_rules.js';

/** This package's migrations, in the order they run; the history lives in `knex_migrations_meal_rules`. */
export const migrations: MigrationSet = {
  name: 'meal_rules',
  migrations: [{ name: '20261122100000_create_meal_rules', up: createMealRules.up, down: createMealRules.down }],
};

/** Brings this package's tables up to date (dependencies' tables must already be there). */
export async function migrate(knex: Knex): Promise<string[]> {
  return runMigrations(knex, [migrations]);
}
