import type { ChangeSource } from '@svc/contracts';
import { type MigrationSet, runMigrations } from '@svc/db';
import type { Knex } from 'knex';
import * as createHouseholds from '../migrations/20261122100000_create_households.js';
import * as createInvitations from '../migrations/20261122100100_create_household_invitations.js';
import * as createConversations from '../migrations/20261122100200_create_household_conversations.js';
import * as createCredits from '../migrations/20261122100300_create_plans_and_credits.js';
import * as createIntakeCodes from '../migrations/20261122100400_create_intake_codes.js';
import * as oneOwner from '../migrations/20261125110000_one_owner_per_household.js';
import * as departures from '../migrations/20261127100000_member_departures.js';
import * as accountFks from '../migrations/relations/20261125110000_households_account_fks.js';
import * as departuresFk from '../migrations/relations/20261127100000_household_departures_account_fk.js';

/** This package's migrations, in the order they run; the history lives in `knex_migrations_households`. */
export const migrations: MigrationSet = {
  name: 'households',
  migrations: [
    { name: '20261122100000_create_households', ...createHouseholds },
    { name: '20261122100100_create_household_invitations', ...createInvitations },
    { name: '20261122100200_create_household_conversations', ...createConversations },
    { name: '20261122100300_create_plans_and_credits', ...createCredits },
    { name: '20261122100400_create_intake_codes', ...createIntakeCodes },
    { name: '20261125110000_one_owner_per_household', ...oneOwner },
    { name: '20261127100000_member_departures', ...departures },
  ],
};

/**
 * Foreign keys from this package's tables to other packages' tables (account ids → accounts). The
 * host runs every package's `relations` after every package's `migrations`, so the referenced
 * tables exist; the package's own tests run without them. History: `knex_migrations_households_relations`.
 */
export const relations: MigrationSet = {
  name: 'households_relations',
  migrations: [
    { name: '20261125110000_households_account_fks', ...accountFks },
    { name: '20261127100000_household_departures_account_fk', ...departuresFk },
  ],
};

/** Brings this package's own tables up to date. */
export async function migrate(knex: Knex): Promise<string[]> {
  return runMigrations(knex, [migrations]);
}

/** The households' rows as resources of the changes feed (@svc/changes records their writes). */
export const changeSources: readonly ChangeSource[] = [
  { resource: 'household', table: 'households', idColumn: 'id', householdColumn: 'id' },
  { resource: 'member', table: 'household_members', idColumn: 'id', householdColumn: 'household_id' },
];
