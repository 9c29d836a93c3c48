import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createKnex, type EmbeddedDatabase, type MigrationSet, runMigrations, startEmbeddedPostgres } from '@svc/db';
import { instrumentKnex } from '@svc/http-kit';
import type { Knex } from 'knex';

let embedded: Promise<EmbeddedDatabase> | undefined;

/**
 * The server tests run against: TEST_DATABASE_URL when set (CI uses the machine's PostgreSQL),
 * else one embedded PostgreSQL per test process, in a temporary directory removed at exit.
 */
export async function adminDatabaseUrl(): Promise<string> {
  if (process.env.TEST_DATABASE_URL) return process.env.TEST_DATABASE_URL;
  embedded ??= (async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-test-pg-'));
    fs.chmodSync(dir, 0o777);
    const db = await startEmbeddedPostgres({ dir: path.join(dir, 'data') });
    process.env.TEST_DATABASE_URL = db.url;
    const cleanup = () => fs.rmSync(dir, { recursive: true, force: true });
    process.once('beforeExit', () => void db.stop().then(cleanup, cleanup));
    process.once('exit', () => {
      try {
        cleanup();
      } catch {
        /* the server may still hold files; the OS temp cleaner takes the rest */
      }
    });
    return db;
  })();
  return (await embedded).url;
}

export interface TestDatabase {
  knex: Knex;
  url: string;
  name: string;
  /** Empties every table but the migration history (between tests of one file). */
  truncate(): Promise<void>;
  /** Closes the pool and drops the database. */
  destroy(): Promise<void>;
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * A database of its own for one test file: created empty, migrated with `sets` (dependencies
 * first), dropped by destroy(). Files never share tables, so they may run in any order.
 */
export async function createTestDatabase(sets: MigrationSet[] = []): Promise<TestDatabase> {
  const admin = await adminDatabaseUrl();
  const name = `svc_test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const adminKnex = createKnex(admin, { poolMax: 1 });
  try {
    await adminKnex.raw(`create database "${name}"`);
  } finally {
    await adminKnex.destroy();
  }
  const url = withDatabase(admin, name);
  const knex = instrumentKnex(createKnex(url, { poolMax: 20 }));
  await runMigrations(knex, sets);
  return {
    knex,
    url,
    name,
    async truncate() {
      const rows = await knex('pg_tables').select('tablename').where('schemaname', 'public');
      const tables = rows.map((r: { tablename: string }) => r.tablename).filter((t: string) => !t.startsWith('knex_migrations'));
      if (tables.length) await knex.raw(`truncate ${tables.map((t: string) => `"${t}"`).join(', ')} restart identity cascade`);
    },
    async destroy() {
      await knex.destroy();
      const k = createKnex(admin, { poolMax: 1 });
      try {
        await k.raw(`drop database if exists "${name}" with (force)`);
      } finally {
        await k.destroy();
      }
    },
  };
}
