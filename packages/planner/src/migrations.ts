import type { ChangeSource } from '@svc/contracts';
import { type MigrationSet, runMigrations } from '@svc/db';
import * as jobs from '@svc/jobs';
import { createQueueMigration } from '@svc/jobs';
import type { Knex } from 'knex';
import * as createPlans from '../migrations/20261202100000_create_plans.js';
import * as plansHouseholdFk from '../migrations/relations/20261202100100_plans_household_fk.js';
import { PlanModel } from './models/index.js';

/** The job queue of plan runs (one job per run). */
export const PLAN_RUN_QUEUE = 'planner-run';
/**
 * How long a run may hold its job before another instance takes it over (its instance died).
 * Handlers are cut off at half of it, which must be above the solver's limit (PLANNER_TIMEOUT_MS).
 */
export const PLAN_RUN_EXPIRE_SECONDS = 180;

/** This package's own tables, in the order they run; the history lives in `knex_migrations_planner`. */
export const migrations: MigrationSet = {
  name: 'planner',
  migrations: [{ name: '20261202100000_create_plans', up: createPlans.up, down: createPlans.down }],
};

/** The queue of plan runs, in @svc/jobs' tables (the host runs it after the job queue's migrations). */
export const queues: MigrationSet = {
  name: 'planner_queues',
  migrations: [createQueueMigration('20261202100200_planner_run_queue', PLAN_RUN_QUEUE, { expireInSeconds: PLAN_RUN_EXPIRE_SECONDS })],
};

/**
 * Foreign keys from this package's tables to other packages' tables (plans.household_id →
 * households). The host runs every package's `relations` after every package's `migrations`.
 * History: `knex_migrations_planner_relations`.
 */
export const relations: MigrationSet = {
  name: 'planner_relations',
  migrations: [{ name: '20261202100100_plans_household_fk', up: plansHouseholdFk.up, down: plansHouseholdFk.down }],
};

/** Brings this package's own tables up to date (and the job queue's, which its queue lives in). */
export async function migrate(knex: Knex): Promise<string[]> {
  return runMigrations(knex, [jobs.migrations, migrations, queues]);
}

/** The plans as resources of the changes feed (@svc/changes records their writes). */
export const changeSources: readonly ChangeSource[] = [{ resource: 'plan', model: PlanModel, household: 'householdId' }];
