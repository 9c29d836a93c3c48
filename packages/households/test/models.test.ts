import type { BaseModel } from '@svc/db';
import { expect } from 'chai';
import * as pkg from '../src/index.js';
import { createHousehold, useHarness } from './helpers.js';

describe('models', () => {
  const h = useHarness();
  const models: (typeof BaseModel)[] = [
    pkg.HouseholdModel,
    pkg.HouseholdMemberModel,
    pkg.HouseholdInvitationModel,
    pkg.HouseholdConversationModel,
    pkg.HouseholdMessageModel,
    pkg.HouseholdDepartureModel,
    pkg.HouseholdSubscriptionModel,
    pkg.WelcomeBundleModel,
    pkg.CreditLedgerEntryModel,
    pkg.IntakeInviteCodeModel,
    pkg.IntakeCodeRedemptionModel,
  ];

  it('has one exported model per table of the package, each naming a real table', async () => {
    const tables = (await h.db.knex('pg_tables').where({ schemaname: 'public' }).select('tablename'))
      .map((r) => r.tablename as string)
      .filter((t) => !t.startsWith('knex_migrations'))
      .sort();
    expect(models.map((m) => m.tableName).sort()).to.deep.equal(tables);
    for (const Model of models) expect(await Model.bindKnex(h.db.knex).query().resultSize(), Model.tableName).to.be.a('number');
  });

  it('reads a household row into the API shape (HH:mm, ISO timestamps, no bookkeeping columns)', async () => {
    const owner = h.accounts.user('Olga');
    const made = await createHousehold(h.app, owner);
    const row = await pkg.HouseholdModel.bindKnex(h.db.knex).query().findById(made.id);
    expect(row!.defaultDinnerTime).to.equal('17:30');
    expect(row!.createdAt).to.equal('2026-11-22T09:00:00.000Z');
    expect(JSON.parse(JSON.stringify(row))).to.deep.equal(made);
    const members = (await row!.$relatedQuery('members', h.db.knex)) as pkg.HouseholdMemberModel[];
    expect(members.map((m) => m.toRow())).to.deep.equal([{ memberId: members[0]!.id, userId: owner, role: 'Owner', displayName: null }]);
  });

  it('validates writes against the schema the HTTP layer uses', () => {
    expect(() => pkg.HouseholdModel.fromJson({ pantryWeight: 'Huge' }, { patch: true })).to.throw(/pantryWeight/);
    expect(() => pkg.HouseholdMemberModel.fromJson({ role: 'King' }, { patch: true })).to.throw(/role/);
  });
});
