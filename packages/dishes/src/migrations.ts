import type { ChangeSource } from '@svc/contracts';
import { type MigrationSet, runMigrations } from '@svc/db';
import type { Knex } from 'knex';
import * as createDishes from '../migrations/20261202100000_create_dishes.js';
import * as dishesBound from '../migrations/20261202130000_dishes_per_household_bound.js';
import * as dishesHouseholdFk from '../migrations/relations/20261202100100_dishes_household_fk.js';
import { DishModel } from './models/index.js';

/** This package's own tables, in the order they run; the history lives in `knex_migrations_dishes`. */
export const migrations: MigrationSet = {
  name: 'dishes',
  migrations: [
    { name: '20261202100000_create_dishes', up: createDishes.up, down: createDishes.down },
    { name: '20261202130000_dishes_per_household_bound', up: dishesBound.up, down: dishesBound.down },
  ],
};

/**
 * Foreign keys from this package's tables to other packages' tables (dishes.household_id →
 * households). The host runs every package's `relations` after every package's `migrations`, so
 * the referenced tables exist; a package's own tests run without them. History:
 * `knex_migrations_dishes_relations`.
 */
export const relations: MigrationSet = {
  name: 'dishes_relations',
  migrations: [{ name: '20261202100100_dishes_household_fk', up: dishesHouseholdFk.up, down: dishesHouseholdFk.down }],
};

/** Brings this package's own tables up to date. */
export async function migrate(knex: Knex): Promise<string[]> {
  return runMigrations(knex, [migrations]);
}

/** The dishes as resources of the changes feed (@svc/changes records their writes). */
export const changeSources: readonly ChangeSource[] = [{ resource: 'dish', model: DishModel, household: 'householdId' }];
