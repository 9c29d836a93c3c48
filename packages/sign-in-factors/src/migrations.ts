import { type MigrationSet, runMigrations } from '@svc/db';
import { createQueueMigration, type JobQueue } from '@svc/jobs';
import type { Knex } from 'knex';
import * as create from '../migrations/20261127200000_create_sign_in_factors.js';
import * as failedCodes from '../migrations/20261202110000_totp_failed_codes.js';
import * as accountFk from '../migrations/relations/20261127200100_sign_in_factors_account_fk.js';

/** This package's own tables; the history lives in `knex_migrations_sign_in_factors`. */
export const migrations: MigrationSet = {
  name: 'sign_in_factors',
  migrations: [
    { name: '20261127200000_create_sign_in_factors', up: create.up, down: create.down },
    { name: '20261202110000_totp_failed_codes', up: failedCodes.up, down: failedCodes.down },
  ],
};

/** The hourly prune's queue (spent and expired tokens and challenges). */
export const PRUNE_QUEUE = 'sign-in-factors-prune';

/** This package's queue in @svc/jobs: run after @svc/jobs' own migrations. */
export const queues: MigrationSet = {
  name: 'sign_in_factors_queues',
  migrations: [createQueueMigration('20261202150200_prune_queue', PRUNE_QUEUE, { expireInSeconds: 600 })],
};

/** Foreign keys to accounts (ON DELETE CASCADE), run by the host after every package's tables exist. */
export const relations: MigrationSet = {
  name: 'sign_in_factors_relations',
  migrations: [{ name: '20261127200100_sign_in_factors_account_fk', up: accountFk.up, down: accountFk.down }],
};

/**
 * Schedules the hourly prune of `prune` (the service's) on the job queue: pg-boss's cron, one job an
 * hour for the cluster, run wherever the queue runs.
 */
export async function schedulePrune(jobs: JobQueue, prune: () => Promise<unknown>): Promise<void> {
  jobs.define(PRUNE_QUEUE, async () => void (await prune()), { expireInSeconds: 600 });
  await jobs.schedule(PRUNE_QUEUE, '43 * * * *');
}

/** Brings this package's own tables up to date. */
export async function migrate(knex: Knex): Promise<string[]> {
  return runMigrations(knex, [migrations]);
}
