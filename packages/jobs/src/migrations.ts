import type { Migration, MigrationSet } from '@svc/db';
import type { Knex } from 'knex';
import PgBoss from 'pg-boss';

/** The PostgreSQL schema pg-boss keeps its tables in. */
export const JOBS_SCHEMA = 'pgboss';

/**
 * pg-boss's own construction script, without the BEGIN/COMMIT it wraps itself in: the migrations
 * runner already runs each migration in a transaction (under the migration advisory lock), and a
 * COMMIT in the middle would end that transaction early.
 */
function constructionSql(): string {
  return PgBoss.getConstructionPlans(JOBS_SCHEMA)
    .replace(/^\s*BEGIN;\s*$/m, '')
    .replace(/^\s*COMMIT;\s*$/m, '');
}

/**
 * The queue's tables (schema `pgboss`, pg-boss schema version of the installed pg-boss). A later
 * pg-boss whose schema version moves gets a migration of its own here, made from
 * `PgBoss.getMigrationPlans`, so the service's migrations stay the only thing that changes the database.
 */
export const migrations: MigrationSet = {
  name: 'jobs',
  migrations: [
    {
      name: '20261127170000_install_pg_boss',
      up: async (knex: Knex) => {
        await knex.raw(constructionSql());
      },
      down: async (knex: Knex) => {
        await knex.raw(`drop schema if exists ${JOBS_SCHEMA} cascade`);
      },
    },
    {
      // The queue pg-boss's cron sends through (its timekeeper's `__pgboss__send-it`, which it would
      // otherwise create at start): made here, so pg-boss changes no schema at run time.
      name: '20261202150000_pg_boss_cron_queue',
      up: async (knex: Knex) => {
        await knex.raw(`select ${JOBS_SCHEMA}.create_queue(?, ?::json)`, [PG_BOSS_CRON_QUEUE, JSON.stringify({ policy: 'standard' })]);
      },
      down: async (knex: Knex) => {
        await knex.raw(`select ${JOBS_SCHEMA}.delete_queue(?)`, [PG_BOSS_CRON_QUEUE]);
      },
    },
  ],
};

/** pg-boss 10's timekeeper queue (`QUEUES.SEND_IT` in src/timekeeper.js). */
const PG_BOSS_CRON_QUEUE = '__pgboss__send-it';

/** What a queue is made with: how long a job may stay active before another instance takes it over. */
export interface QueueDefinition {
  /**
   * Seconds a fetched job may run before it counts as abandoned (its instance died): the next
   * maintenance pass puts it back for any instance. Handlers are cut off at half of it.
   */
  expireInSeconds: number;
}

/**
 * A migration that creates a queue (a partition of pg-boss's job table), for the package that owns
 * the queue to list among its own migrations: a queue exists before anything can be enqueued to
 * it. Its `down` drops the queue and its jobs.
 */
export function createQueueMigration(migrationName: string, queue: string, definition: QueueDefinition): Migration {
  return {
    name: migrationName,
    up: async (knex: Knex) => {
      // pg-boss retries only jobs whose instance vanished (expired while active): a handler's own
      // failures are rescheduled by JobQueue (backoff, Retry-After, giving up after a day). The
      // limit is high so that a job is never lost to a string of crashes; the day's limit still applies.
      const options = { policy: 'standard', retryLimit: 1000, retryDelay: 0, retryBackoff: false, expireInSeconds: definition.expireInSeconds };
      await knex.raw(`select ${JOBS_SCHEMA}.create_queue(?, ?::json)`, [queue, JSON.stringify(options)]);
    },
    down: async (knex: Knex) => {
      await knex.raw(`select ${JOBS_SCHEMA}.delete_queue(?)`, [queue]);
    },
  };
}
