import knexFactory, { type Knex } from 'knex';
import objection from 'objection';

const { knexSnakeCaseMappers } = objection;

export interface KnexOptions {
  poolMax?: number;
  /** How long a request may wait for a connection before it fails (503 while the database is down). */
  acquireTimeoutMs?: number;
  applicationName?: string;
}

/**
 * The one way to open the database: pg, snake_case columns mapped to camelCase fields (for knex
 * and for the Objection models bound to it), a short connection timeout so an outage answers 503
 * quickly. The host wraps it with http-kit's `instrumentKnex` so every query is counted into
 * Server-Timing.
 */
export function createKnex(connectionString: string, options: KnexOptions = {}): Knex {
  const knex = knexFactory({
    client: 'pg',
    connection: {
      connectionString,
      connectionTimeoutMillis: options.acquireTimeoutMs ?? 3000,
      application_name: options.applicationName ?? 'meal-planner',
    },
    pool: { min: 0, max: options.poolMax ?? 10, idleTimeoutMillis: 30_000 },
    acquireConnectionTimeout: options.acquireTimeoutMs ?? 3000,
    ...knexSnakeCaseMappers(),
  });
  return knex;
}

/** One migration of one package. Names sort in the order they run (a timestamp prefix). */
export interface Migration {
  name: string;
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

/** A package's migrations; each package keeps its own history table `knex_migrations_<name>`. */
export interface MigrationSet {
  name: string;
  migrations: Migration[];
}

// Any constant works; it only has to be the same for every instance of this service.
const MIGRATION_LOCK_KEY = 7_320_191_226;

function config(set: MigrationSet): Knex.MigratorConfig {
  return {
    tableName: `knex_migrations_${set.name.replace(/[^a-z0-9_]/gi, '_')}`,
    migrationSource: {
      getMigrations: async () => [...set.migrations].sort((a, b) => a.name.localeCompare(b.name)),
      getMigrationName: (m: Migration) => m.name,
      getMigration: async (m: Migration) => ({ up: m.up, down: m.down }),
    },
  };
}

/**
 * Runs the sets' pending migrations in the order given (dependencies first). A session-level
 * advisory lock, held on one connection of its own, makes instances that start together take
 * turns, so none sees a half-made schema or races creating the history tables.
 */
export async function runMigrations(knex: Knex, sets: MigrationSet[]): Promise<string[]> {
  const applied: string[] = [];
  await withAdvisoryLock(knex, MIGRATION_LOCK_KEY, async () => {
    for (const set of sets) {
      const [, names] = (await knex.migrate.latest(config(set))) as [number, string[]];
      applied.push(...names.map((n) => `${set.name}/${n}`));
    }
  });
  return applied;
}

/** Rolls every migration of the sets back, last set first (tests and the migration test use it). */
export async function rollbackMigrations(knex: Knex, sets: MigrationSet[]): Promise<void> {
  await withAdvisoryLock(knex, MIGRATION_LOCK_KEY, async () => {
    for (const set of [...sets].reverse()) await knex.migrate.rollback(config(set), true);
  });
}

async function withAdvisoryLock<T>(knex: Knex, key: number, fn: () => Promise<T>): Promise<T> {
  const conn = await knex.client.acquireConnection();
  try {
    await knex.raw('select pg_advisory_lock(?)', [key]).connection(conn);
    try {
      return await fn();
    } finally {
      await knex.raw('select pg_advisory_unlock(?)', [key]).connection(conn);
    }
  } finally {
    await knex.client.releaseConnection(conn);
  }
}

/** True when a trivial query answers within the pool's timeout. */
export async function databaseAnswers(knex: Knex): Promise<boolean> {
  try {
    await knex.raw('select 1');
    return true;
  } catch {
    return false;
  }
}

/** PostgreSQL error codes a store maps to domain errors. */
export const PG = {
  uniqueViolation: '23505',
  foreignKeyViolation: '23503',
  serializationFailure: '40001',
  deadlockDetected: '40P01',
} as const;

export function isPgError(err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === code;
}
