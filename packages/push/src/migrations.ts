import { type MigrationSet, runMigrations } from '@svc/db';
import * as jobs from '@svc/jobs';
import { createQueueMigration } from '@svc/jobs';
import type { Knex } from 'knex';
import * as createPushDevices from '../migrations/20261122130000_create_push_devices.js';
import * as createPushNotifications from '../migrations/20261127180000_create_push_notifications.js';
import * as pushDevicesQuietHours from '../migrations/20261127180300_push_devices_quiet_hours.js';
import * as createPushDeliveries from '../migrations/20261128030000_create_push_deliveries.js';
import * as pushDevicesBound from '../migrations/20261202130000_push_devices_per_person_bound.js';
import * as pushDevicesUserFk from '../migrations/relations/20261125090000_push_devices_user_fk.js';
import * as pushInboxUserFk from '../migrations/relations/20261127180200_push_inbox_user_fk.js';

/**
 * The job queue of single deliveries (one job per notification and phone: householdNews, and a
 * phone held by its quiet hours), and how long a run may hold a job.
 */
export const DELIVERY_QUEUE = 'push-deliver';
/** Notifications on their way to their phones: one job per notification, which sends to every phone that wants it. */
export const FANOUT_QUEUE = 'push-fanout';
export const DELIVERY_EXPIRE_SECONDS = 120;
/** householdNews of a change, sent after the change commits (one job per change). */
export const NEWS_QUEUE = 'push-news';
/** The householdNews held for one phone (within a minute of the last, or in quiet hours), sent as one message. */
export const DIGEST_QUEUE = 'push-digest';

/** This package's own tables, in the order they run; the history lives in `knex_migrations_push`. */
export const migrations: MigrationSet = {
  name: 'push',
  migrations: [
    { name: '20261122130000_create_push_devices', up: createPushDevices.up, down: createPushDevices.down },
    { name: '20261127180000_create_push_notifications', up: createPushNotifications.up, down: createPushNotifications.down },
    // Needs @svc/jobs' migrations first (the host runs them before every package's).
    createQueueMigration('20261127180100_push_deliver_queue', DELIVERY_QUEUE, { expireInSeconds: DELIVERY_EXPIRE_SECONDS }),
    { name: '20261127180300_push_devices_quiet_hours', up: pushDevicesQuietHours.up, down: pushDevicesQuietHours.down },
    createQueueMigration('20261127180400_push_news_queue', NEWS_QUEUE, { expireInSeconds: DELIVERY_EXPIRE_SECONDS }),
    createQueueMigration('20261127180500_push_digest_queue', DIGEST_QUEUE, { expireInSeconds: DELIVERY_EXPIRE_SECONDS }),
    { name: '20261128030000_create_push_deliveries', up: createPushDeliveries.up, down: createPushDeliveries.down },
    createQueueMigration('20261128030100_push_fanout_queue', FANOUT_QUEUE, { expireInSeconds: DELIVERY_EXPIRE_SECONDS }),
    { name: '20261202130000_push_devices_per_person_bound', up: pushDevicesBound.up, down: pushDevicesBound.down },
  ],
};

/**
 * Foreign keys from this package's tables to other packages' tables (push_devices.user_id →
 * accounts). The host runs every package's `relations` after every package's `migrations`, so the
 * referenced tables exist; a package's own tests run without them. History: `knex_migrations_push_relations`.
 */
export const relations: MigrationSet = {
  name: 'push_relations',
  migrations: [
    { name: '20261125090000_push_devices_user_fk', up: pushDevicesUserFk.up, down: pushDevicesUserFk.down },
    { name: '20261127180200_push_inbox_user_fk', up: pushInboxUserFk.up, down: pushInboxUserFk.down },
  ],
};

/** Brings this package's own tables up to date (and the job queue's, which its queue lives in). */
export async function migrate(knex: Knex): Promise<string[]> {
  return runMigrations(knex, [jobs.migrations, migrations]);
}
