/**
 * `node services/api/dist/src/migrate.js`: applies every package's pending migrations and exits
 * (0: done, 1: failed). For a deployment that migrates in a job of its own before rolling the
 * instances (the Kubernetes migration Job); instances also migrate at start-up, under the same
 * advisory lock, so running both is safe.
 */
import { createKnex, runMigrations } from '@svc/db';
import { createLogger } from '@svc/http-kit';
import { ConfigError, loadConfig } from './config.js';
import { openDatabase } from './database.js';
import { allMigrations, logMigrations } from './service.js';

const logger = createLogger({ name: 'migrate' });

try {
  const config = loadConfig();
  const database = await openDatabase(config);
  const knex = createKnex(database.url, { poolMax: 2, logger });
  try {
    const applied = await runMigrations(knex, allMigrations);
    if (applied.length) logMigrations(logger, applied);
    else logger.info('nothing to migrate');
  } finally {
    await knex.destroy();
    await database.embedded?.stop();
  }
  process.exit(0);
} catch (err) {
  if (err instanceof ConfigError) process.stderr.write(`Invalid configuration: ${err.message}\n`);
  else logger.fatal({ err: { message: (err as Error).message } }, 'migration failed');
  process.exit(err instanceof ConfigError ? 2 : 1);
}
