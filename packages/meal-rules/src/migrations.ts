import type { ChangeSource } from '@svc/contracts';
import { type MigrationSet, runMigrations } from '@svc/db';
import type { Knex } from 'knex';
import * as createMealRules from '../migrations/20261122100000_create_meal_rules.js';
import * as mealRuleListVersions from '../migrations/20261126110000_meal_rule_list_versions.js';
import * as mealRulesHouseholdFk from '../migrations/relations/20261125110000_meal_rules_household_fk.js';
import { MealRuleModel } from './models/index.js';

/** This package's own tables, in the order they run; the history lives in `knex_migrations_meal_rules`. */
export const migrations: MigrationSet = {
  name: 'meal_rules',
  migrations: [
    { name: '20261122100000_create_meal_rules', up: createMealRules.up, down: createMealRules.down },
    { name: '20261126110000_meal_rule_list_versions', up: mealRuleListVersions.up, down: mealRuleListVersions.down },
  ],
};

/**
 * Foreign keys from this package's tables to other packages' tables (meal_rules.household_id →
 * households). The host runs every package's `relations` after every package's `migrations`, so
 * the referenced tables exist; a package's own tests run without them. History:
 * `knex_migrations_meal_rules_relations`.
 */
export const relations: MigrationSet = {
  name: 'meal_rules_relations',
  migrations: [{ name: '20261125110000_meal_rules_household_fk', up: mealRulesHouseholdFk.up, down: mealRulesHouseholdFk.down }],
};

/** Brings this package's own tables up to date. */
export async function migrate(knex: Knex): Promise<string[]> {
  return runMigrations(knex, [migrations]);
}

/** The rules as resources of the changes feed (@svc/changes records their writes). */
export const changeSources: readonly ChangeSource[] = [{ resource: 'rule', model: MealRuleModel, household: 'householdId' }];
