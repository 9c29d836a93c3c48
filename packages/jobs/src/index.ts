/**
 * @svc/jobs: the service's one way to do work later. A PostgreSQL job queue (pg-boss) whose jobs
 * are enqueued inside the transaction of the change that causes them and run by every instance.
 */

export { createQueueMigration, migrations, type QueueDefinition } from './migrations.js';
export {
  GiveUp,
  type JobContext,
  type JobHandler,
  JobQueue,
  type JobQueueOptions,
  type JobsLogger,
  type QueueHandlerOptions,
  RetryLater,
  RunLater,
} from './queue.js';
export { type JobSource, sourceMigrations } from './sources.js';
