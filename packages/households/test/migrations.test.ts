import { randomUUID } from 'node:crypto';
import { rollbackMigrations, runMigrations } from '@svc/db';
import { createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import { migrations, relations } from '../src/index.js';

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
      'household_departures',
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
    expect(await tables()).to.have.length(11);
  });

  it('keeps a household to one Owner in the database', async () => {
    const [{ id }] = await db.knex('households').insert(household()).returning('id');
    await db.knex('householdMembers').insert({ householdId: id, userId: randomUUID(), role: 'Owner', createdAt: new Date() });
    const second = await db
      .knex('householdMembers')
      .insert({ householdId: id, userId: randomUUID(), role: 'Owner', createdAt: new Date() })
      .catch((err: { code?: string }) => err);
    expect(second).to.have.property('code', '23505'); // unique_violation
  });

  it('relations: account ids get foreign keys that cascade memberships and null history, and clear ids of accounts that are gone', async () => {
    // Stands in for @svc/accounts' table: the relations need only its key.
    await db.knex.schema.createTable('accounts', (t) => t.uuid('id').primary());
    await db.knex('householdMembers').delete();
    await db.knex('households').delete();
    const [kept, gone] = [randomUUID(), randomUUID()];
    await db.knex('accounts').insert({ id: kept });
    const [{ id }] = await db.knex('households').insert(household(kept)).returning('id');
    await db.knex('householdMembers').insert([
      { householdId: id, userId: kept, role: 'Owner', createdAt: new Date() },
      { householdId: id, userId: gone, role: 'Adult', createdAt: new Date() },
    ]);
    const [{ id: other }] = await db.knex('households').insert(household(gone)).returning('id');
    await db.knex('welcomeBundles').insert({ userId: kept, householdId: id, credits: 2, grantedAt: new Date() });
    await db.knex('creditLedger').insert({ householdId: id, pool: 'welcome', reason: 'welcome_bundle', delta: 2, userId: kept, createdAt: new Date() });
    await db.knex('intakeCodeRedemptions').insert({ code: 'X', userId: kept, householdId: id, redeemedAt: new Date() });

    await runMigrations(db.knex, [relations]);
    expect((await db.knex('householdMembers').select('userId')).map((r) => r.userId)).to.deep.equal([kept]);
    expect(await db.knex('households').where({ id: other }).first()).to.include({ createdBy: null });
    const orphan = await db
      .knex('householdMembers')
      .insert({ householdId: id, userId: gone, role: 'Adult', createdAt: new Date() })
      .catch((err: { code?: string }) => err);
    expect(orphan).to.have.property('code', '23503'); // foreign_key_violation

    await db.knex('accounts').where({ id: kept }).delete();
    expect(await db.knex('householdMembers').count({ n: '*' }).first()).to.deep.equal({ n: '0' });
    expect(await db.knex('welcomeBundles').count({ n: '*' }).first()).to.deep.equal({ n: '0' });
    expect(await db.knex('households').where({ id }).first()).to.include({ createdBy: null });
    expect(await db.knex('creditLedger').first()).to.include({ userId: null, delta: 2 });
    expect(await db.knex('intakeCodeRedemptions').first()).to.include({ userId: null });

    await rollbackMigrations(db.knex, [relations]);
    await db.knex('householdMembers').insert({ householdId: id, userId: gone, role: 'Adult', createdAt: new Date() });
    await runMigrations(db.knex, [relations]);
    expect(await db.knex('householdMembers').count({ n: '*' }).first()).to.deep.equal({ n: '0' });
  });
});

function household(createdBy: string = randomUUID()) {
  const at = new Date();
  return {
    name: 'H',
    timeZoneId: 'Europe/Oslo',
    defaultDinnerTime: '17:30',
    country: 'NO',
    measurementSystem: 'Metric',
    dryGoodsMeasure: 'Weight',
    createdBy,
    createdAt: at,
    updatedAt: at,
  };
}
