import { type MigrationSet, runMigrations } from '@svc/db';
import type { Knex } from 'knex';
import * as createPushDevices from '../migrations/20261122130000_create_push_devices.js';
import * as pushDevicesUserFk from '../migrations/relations/20261125090000_push_devices_user_fk.js';

/** This package's own tables, in the order they run; the history lives in `knex_migrations_push`. */
export const migrations: MigrationSet = {
  name: 'push',
  migrations: [{ name: '20261122130000_create_push_devices', up: createPushDevices.up, down: createPushDevices.down }],
};

/**
 * Foreign keys from this package's tables to other packages' tables (push_devices.user_id →
 * accounts). The host runs every package's `relations` after every package's `migrations`, so the
 * referenced tables exist; a package's own tests run without them. History: `knex_migrations_push_relations`.
 */
export const relations: MigrationSet = {
  name: 'push_relations',
  migrations: [{ name: '20261125090000_push_devices_user_fk', up: pushDevicesUserFk.up, down: pushDevicesUserFk.down }],
};

/** Brings this package's own tables up to date. */
export async function migrate(knex: Knex): Promise<string[]> {
  return runMigrations(knex, [migrations]);
}
