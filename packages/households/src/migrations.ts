import type { ChangeSource } from '@svc/contracts';
import { type MigrationSet, runMigrations } from '@svc/db';
import { createQueueMigration, type JobSource } from '@svc/jobs';
import type { Knex } from 'knex';
import * as createHouseholds from '../migrations/20261122100000_create_households.js';
import * as createInvitations from '../migrations/20261122100100_create_household_invitations.js';
import * as createConversations from '../migrations/20261122100200_create_household_conversations.js';
import * as createCredits from '../migrations/20261122100300_create_plans_and_credits.js';
import * as createIntakeCodes from '../migrations/20261122100400_create_intake_codes.js';
import * as oneOwner from '../migrations/20261125110000_one_owner_per_household.js';
import * as departures from '../migrations/20261127100000_member_departures.js';
import * as renamedBy from '../migrations/20261128100000_household_renamed_by.js';
import * as accountFks from '../migrations/relations/20261125110000_households_account_fks.js';
import * as departuresFk from '../migrations/relations/20261127100000_household_departures_account_fk.js';
import * as renamedByFk from '../migrations/relations/20261128100000_households_renamed_by_fk.js';
import { HouseholdMemberModel, HouseholdModel } from './models/index.js';

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
    { name: '20261128100000_household_renamed_by', ...renamedBy },
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
    { name: '20261128100000_households_renamed_by_fk', ...renamedByFk },
  ],
};

/** Brings this package's own tables up to date. */
export async function migrate(knex: Knex): Promise<string[]> {
  return runMigrations(knex, [migrations]);
}

/** The households' rows as resources of the changes feed (@svc/changes records their writes). */
export const changeSources: readonly ChangeSource[] = [
  { resource: 'household', model: HouseholdModel, household: 'id' },
  { resource: 'member', model: HouseholdMemberModel, household: 'householdId' },
];

/** The queue of a rename's news (@svc/jobs): one job per renamed household, made by the renaming statement itself (`jobSources`). */
export const RENAME_QUEUE = 'households-renamed';
/** How long a rename's job may run before another instance takes it over. */
export const RENAME_EXPIRE_SECONDS = 120;

/**
 * This package's queues in @svc/jobs (a rename's news): run after @svc/jobs' own migrations, which
 * the host runs first. History: `knex_migrations_households_queues`.
 */
export const queues: MigrationSet = {
  name: 'households_queues',
  migrations: [createQueueMigration('20261128100100_renamed_queue', RENAME_QUEUE, { expireInSeconds: RENAME_EXPIRE_SECONDS })],
};

/**
 * Writes of this package that enqueue work by themselves (@svc/jobs installs the triggers, after
 * every package's migrations and queues): an UPDATE that changes a household's name enqueues the
 * rename's news in the writing statement (a row trigger whose WHEN compares the old and new name:
 * an UPDATE that keeps the name runs nothing), naming the account the statement wrote as
 * `renamed_by` and counted from the service's time of the write (`updated_at`). Writing the name
 * it already had enqueues nothing, and a rename that rolls back leaves no job.
 */
export const jobSources: readonly JobSource[] = [
  {
    model: HouseholdModel,
    queue: RENAME_QUEUE,
    payload: { h: 'id', a: 'renamedBy' },
    countFrom: 'updatedAt',
    whenNotNull: 'renamedBy',
    onUpdateOf: ['name'],
    // A household is updated a row at a time and mostly not renamed: a PATCH of its settings does no trigger work.
    rowLevelUpdate: true,
    // A new household has no `renamed_by`: no INSERT can enqueue.
    onInsert: false,
  },
];
