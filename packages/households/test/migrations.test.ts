import { rollbackMigrations, runMigrations } from '@svc/db';
import { createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import { migrations } from '../src/index.js';

describe('households migrations', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase([]);
  });
  after(async () => {
    await db.destroy();
  });

  const tables = async () =>
    (await db.knex('pg_tables').where({ schemaname: 'public' }).pluck('tablename')).filter((t: string) => !t.startsWith('knex_migrations')).sort();

  it('runs up, down and up again, and comments every column', async () => {
    await runMigrations(db.knex, [migrations]);
    const made = await tables();
    expect(made).to.deep.equal([
      'credit_ledger',
      'household_conversations',
      'household_invitations',
      'household_members',
      'household_messages',
      'household_subscriptions',
      'households',
      'intake_code_redemptions',
      'intake_invite_codes',
      'welcome_bundles',
    ]);
    const uncommented = await db.knex.raw(
      `
      select c.table_name, c.column_name from information_schema.columns c
      join pg_class t on t.relname = c.table_name join pg_namespace n on n.oid = t.relnamespace and n.nspname = 'public'
      where c.table_schema = 'public' and c.table_name = any(?) and col_description(t.oid, c.ordinal_position) is null`,
      [made],
    );
    expect(uncommented.rows).to.deep.equal([]);
    await rollbackMigrations(db.knex, [migrations]);
    expect(await tables()).to.deep.equal([]);
    await runMigrations(db.knex, [migrations]);
    expect(await tables()).to.have.length(10);
  });
});
