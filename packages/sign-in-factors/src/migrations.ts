import { type MigrationSet, runMigrations } from '@svc/db';
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

/** Foreign keys to accounts (ON DELETE CASCADE), run by the host after every package's tables exist. */
export const relations: MigrationSet = {
  name: 'sign_in_factors_relations',
  migrations: [{ name: '20261127200100_sign_in_factors_account_fk', up: accountFk.up, down: accountFk.down }],
};

/** Brings this package's own tables up to date. */
export async function migrate(knex: Knex): Promise<string[]> {
  return runMigrations(knex, [migrations]);
}
