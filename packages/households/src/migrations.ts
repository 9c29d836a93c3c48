import { type MigrationSet, runMigrations } from '@svc/db';
import type { Knex } from 'knex';
import * as createHouseholds from '../migrations/20261122100000_create_households.js';
import * as createInvitations from '../migrations/20261122100100_create_household_invitations.js';
import * as createConversations from '../migrations/20261122100200_create_household_conversations.js';
import * as createCredits from '../migrations/20261122100300_create_plans_and_credits.js';
import * as createIntakeCodes from '../migrations/20261122100400_create_intake_codes.js';

/** This package's migrations, in the order they run; the history lives in `knex_migrations_households`. */
export const migrations: MigrationSet = {
  name: 'households',
  migrations: [
    { name: '20261122100000_create_households', ...createHouseholds },
    { name: '20261122100100_create_household_invitations', ...createInvitations },
    { name: '20261122100200_create_household_conversations', ...createConversations },
    { name: '20261122100300_create_plans_and_credits', ...createCredits },
    { name: '20261122100400_create_intake_codes', ...createIntakeCodes },
  ],
};

/** Brings this package's tables up to date (it has no tables of other packages to wait for). */
export async function migrate(knex: Knex): Promise<string[]> {
  return runMigrations(knex, [migrations]);
}
