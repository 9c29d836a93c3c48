import { rollbackMigrations, runMigrations } from '@svc/db';
import { createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import { migrations } from '../src/index.js';

describe('sign-in-factors migrations', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(() => db.destroy());

  it('run up, down and up again', async () => {
    await runMigrations(db.knex, [migrations]);
    for (const t of ['mfa_totp', 'mfa_recovery_codes', 'mfa_sign_in_tokens', 'webauthn_challenges', 'passkeys'])
      expect(await db.knex.schema.hasTable(t), t).to.equal(true);
    await rollbackMigrations(db.knex, [migrations]);
    expect(await db.knex.schema.hasTable('passkeys')).to.equal(false);
    await runMigrations(db.knex, [migrations]);
    expect(await db.knex.schema.hasTable('mfa_totp')).to.equal(true);
  });
});
