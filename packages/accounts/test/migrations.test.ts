import { rollbackMigrations, runMigrations } from '@svc/db';
import { createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import { migrations } from '../src/index.js';

const TABLES = [
  'accounts',
  'account_sessions',
  'account_tokens',
  'mail_outbox',
  'login_failures',
  'waitlist',
  'account_identities',
  'app_signin_codes',
  'spent_external_cookies',
  'account_exports',
  'unasked_mail_counts',
  'spent_identity_tokens',
  'account_unlinked_identities',
  'personal_access_tokens',
];

async function tables(db: TestDatabase): Promise<string[]> {
  const rows = await db.knex('pg_tables').select('tablename').where('schemaname', 'public').whereNot('tablename', 'like', 'knex_migrations%');
  return rows.map((r: { tablename: string }) => r.tablename).sort();
}

describe('migrations', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => db.destroy());

  it('run up, down and up again, and comment every column', async () => {
    await runMigrations(db.knex, [migrations]);
    expect(await tables(db)).to.deep.equal([...TABLES].sort());
    const uncommented = await db.knex.raw(
      `select c.table_name, c.column_name from information_schema.columns c
        where c.table_schema = 'public' and c.table_name = any(?)
          and col_description(format('%I.%I', c.table_schema, c.table_name)::regclass, c.ordinal_position) is null`,
      [TABLES],
    );
    expect(uncommented.rows).to.deep.equal([]);
    await rollbackMigrations(db.knex, [migrations]);
    expect(await tables(db)).to.deep.equal([]);
    await runMigrations(db.knex, [migrations]);
    expect(await tables(db)).to.deep.equal([...TABLES].sort());
  });
});
