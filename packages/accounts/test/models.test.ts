import { type BaseModel, objection } from '@svc/db';
import { createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import * as pkg from '../src/index.js';

describe('models', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase([pkg.migrations]);
  });
  after(async () => db.destroy());

  const models: (typeof BaseModel)[] = [
    pkg.AccountModel,
    pkg.AccountSessionModel,
    pkg.AccountTokenModel,
    pkg.MailOutboxModel,
    pkg.LoginFailureModel,
    pkg.WaitlistModel,
    pkg.AccountIdentityModel,
    pkg.AppSigninCodeModel,
    pkg.AccountExportModel,
    pkg.UnaskedMailCountModel,
    pkg.SpentIdentityTokenModel,
    pkg.SpentExternalCookieModel,
    pkg.AccountUnlinkedIdentityModel,
    pkg.PersonalAccessTokenModel,
  ];

  it('has one exported model per table of the package, each naming a real table', async () => {
    const tables = (await db.knex('pg_tables').where({ schemaname: 'public' }).select('tablename'))
      .map((r) => r.tablename as string)
      .filter((t) => !t.startsWith('knex_migrations'))
      .sort();
    expect(models.map((m) => m.tableName).sort()).to.deep.equal(tables);
    for (const Model of models) expect(await Model.bindKnex(db.knex).query().resultSize(), Model.tableName).to.equal(0);
  });

  it('reads the single-use and counting rows by their keys, timestamps as ISO strings', async () => {
    const at = new Date('2026-11-25T10:00:00.000Z');
    await db.knex('unasked_mail_counts').insert({ key: 'to:ann@example.test', windowStartedAt: at, count: 2 });
    await db.knex('spent_identity_tokens').insert({ key: 'apple:nonce:n-1', expiresAt: at });
    await db.knex('spent_external_cookies').insert({ jti: 'jti-1', expiresAt: at });

    const count = await pkg.UnaskedMailCountModel.bindKnex(db.knex).query().findById('to:ann@example.test');
    expect(count?.toJSON()).to.deep.equal({ key: 'to:ann@example.test', windowStartedAt: at.toISOString(), count: 2, recipients: null });
    const token = await pkg.SpentIdentityTokenModel.bindKnex(db.knex).query().findById('apple:nonce:n-1');
    expect(token?.toJSON()).to.deep.equal({ key: 'apple:nonce:n-1', expiresAt: at.toISOString() });
    const cookie = await pkg.SpentExternalCookieModel.bindKnex(db.knex).query().findById('jti-1');
    expect(cookie?.toJSON()).to.deep.equal({ jti: 'jti-1', expiresAt: at.toISOString() });
  });

  it('validates a row before writing it (a negative count is refused)', async () => {
    const Counts = pkg.UnaskedMailCountModel.bindKnex(db.knex);
    let refused: unknown;
    await Counts.query()
      .insert({ key: 'ip:192.0.2.1', windowStartedAt: new Date().toISOString(), count: -1 })
      .catch((err: unknown) => {
        refused = err;
      });
    expect(refused).to.be.instanceOf(objection.ValidationError);
    expect(await Counts.query().findById('ip:192.0.2.1')).to.equal(undefined);
  });
});
