import { type MigrationSet, runMigrations } from '@svc/db';
import type { Knex } from 'knex';
import * as createPushDevices from '../migrations/20261122130000_create_push_devices.js';

/** This package's migrations, in the order they run; the history lives in `knex_migrations_push`. */
export const migrations: MigrationSet = {
  name: 'push',
  migrations: [{ name: '20261122130000_create_push_devices', up: createPushDevices.up, down: createPushDevices.down }],
};

/** Brings this package's tables up to date (dependencies' tables must already be there). */
export async function migrate(knex: Knex): Promise<string[]> {
  return runMigrations(knex, [migrations]);
}
