import { expect } from 'chai';
import request from 'supertest';
import { createHousehold, family, join, OSLO, useHarness } from './helpers.js';

describe("a household's life: roles, leaving, removing, handing over, deleting", () => {
  const h = useHarness();

  const members = async (householdId: string, who: string) =>
    (await request(h.app).get(`/api/v1/households/${householdId}/members`).set('X-Test-User', who)).body as {
      memberId: string;
      userId: string | null;
      role: string;
      displayName: string;
    }[];
  const memberOf = async (householdId: string, userId: string) => {
    const row = await h.db.knex('householdMembers').where({ householdId, userId }).first();
    return row.id as string;
  };
  const patchRole = (householdId: string, memberId: string, who: string, body: unknown) =>
    request(h.app)
      .patch(`/api/v1/households/${householdId}/members/${memberId}`)
      .set('X-Test-User', who)
      .send(body as object);
  const remove = (householdId: string, memberId: string, who: string) =>
    request(h.app).delete(`/api/v1/households/${householdId}/members/${memberId}`).set('X-Test-User', who);
  const transfer = (householdId: string, who: string, body: unknown) =>
    request(h.app)
      .post(`/api/v1/households/${householdId}/owner`)
      .set('X-Test-User', who)
      .send(body as object);
  const destroy = (householdId: string, who: string, body: unknown) =>
    request(h.app)
      .delete(`/api/v1/households/${householdId}`)
      .set('X-Test-User', who)
      .send(body as object);
  const owners = async (householdId: string) =>
    (await h.db.knex('householdMembers').where({ householdId, role: 'Owner' }).select('userId')).map((r) => r.userId as string);
  const problem = (res: request.Response, status: number, code: string) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    expect(res.body.code).to.equal(code);
    expect(res.headers['content-type']).to.match(/^application\/problem\+json/);
  };

  describe('PATCH /api/v1/households/{householdId}/members/{memberId}', () => {
    it('lets the Owner make an Adult a Junior and back; the new role holds on the next request', async () => {
      const { owner, adult, household } = await family(h);
      const memberId = await memberOf(household.id, adult);
      const res = await patchRole(household.id, memberId, owner, { role: 'Junior' });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ memberId, displayName: 'Arne', role: 'Junior', userId: adult });
      expect(await h.households.access.roleOf({ userId: adult }, household.id)).to.equal('Junior');
      // The next request of the demoted member is judged by the new role.
      const invite = await request(h.app).post(`/api/v1/households/${household.id}/invitations`).set('X-Test-User', adult).send({ role: 'Adult' });
      problem(invite, 403, 'forbidden');
      const back = await patchRole(household.id, memberId, owner, { role: 'Adult' });
      expect(back.body.role).to.equal('Adult');
      expect((await members(household.id, owner)).map((m) => m.role)).to.deep.equal(['Owner', 'Adult', 'Junior']);
    });

    it('answers 400 invalid_role for Owner and validation_failed for an unknown role, changing nothing', async () => {
      const { owner, junior, household } = await family(h);
      const memberId = await memberOf(household.id, junior);
      problem(await patchRole(household.id, memberId, owner, { role: 'Owner' }), 400, 'invalid_role');
      problem(await patchRole(household.id, memberId, owner, { role: 'Child' }), 400, 'validation_failed');
      problem(await patchRole(household.id, memberId, owner, {}), 400, 'validation_failed');
      problem(await patchRole(household.id, 'not-a-uuid', owner, { role: 'Adult' }), 400, 'validation_failed');
      expect(await h.households.access.roleOf({ userId: junior }, household.id)).to.equal('Junior');
      expect(await owners(household.id)).to.deep.equal([owner]);
    });

    it("refuses to change the Owner's own role: 409 owner_must_transfer", async () => {
      const { owner, household } = await family(h);
      problem(await patchRole(household.id, await memberOf(household.id, owner), owner, { role: 'Adult' }), 409, 'owner_must_transfer');
      expect(await owners(household.id)).to.deep.equal([owner]);
    });

    it('is for the Owner only: Adult and Junior get 403 forbidden, a non-member 404 not_found, an unknown member 404 member_not_found', async () => {
      const { owner, adult, junior, outsider, household } = await family(h);
      const juniorMember = await memberOf(household.id, junior);
      problem(await patchRole(household.id, juniorMember, adult, { role: 'Adult' }), 403, 'forbidden');
      problem(await patchRole(household.id, juniorMember, junior, { role: 'Adult' }), 403, 'forbidden');
      problem(await patchRole(household.id, juniorMember, outsider, { role: 'Adult' }), 404, 'not_found');
      problem(await patchRole(household.id, '6b1d1f4e-8a7c-4c33-9d1e-5c0a1b2c3d4e', owner, { role: 'Adult' }), 404, 'member_not_found');
      // A member of another household is not a member of this one.
      const elsewhere = await createHousehold(h.app, outsider);
      problem(await patchRole(household.id, await memberOf(elsewhere.id, outsider), owner, { role: 'Adult' }), 404, 'member_not_found');
      expect(await h.households.access.roleOf({ userId: junior }, household.id)).to.equal('Junior');
    });

    it('answers 401 without a session', async () => {
      const { household, owner } = await family(h);
      expect(
        (
          await request(h.app)
            .patch(`/api/v1/households/${household.id}/members/${await memberOf(household.id, owner)}`)
            .send({ role: 'Adult' })
        ).status,
      ).to.equal(401);
    });
  });

  describe('DELETE /api/v1/households/{householdId}/members/{memberId}', () => {
    it('lets the Owner remove a member: 204, the household and its data stay, the member loses access at once', async () => {
      const { owner, adult, household } = await family(h);
      const done = await request(h.app).post(`/api/v1/households/${household.id}/onboarding/complete`).set('X-Test-User', adult).send({});
      const res = await remove(household.id, await memberOf(household.id, adult), owner);
      expect(res.status).to.equal(204);
      expect(res.text).to.equal('');
      problem(await request(h.app).get(`/api/v1/households/${household.id}`).set('X-Test-User', adult), 404, 'not_found');
      expect(await h.households.memberships(adult)).to.deep.equal([]);
      expect((await members(household.id, owner)).map((m) => m.displayName)).to.deep.equal(['Olga', 'Jo']);
      const thread = await request(h.app).get(`/api/v1/households/${household.id}/conversations/${done.body.conversationId}`).set('X-Test-User', owner);
      expect(thread.status).to.equal(200);
      expect(thread.body.messages).to.have.length(1);
    });

    it('lets any other member leave (remove themself)', async () => {
      const { owner, adult, junior, household } = await family(h);
      expect((await remove(household.id, await memberOf(household.id, junior), junior)).status).to.equal(204);
      expect((await remove(household.id, await memberOf(household.id, adult), adult)).status).to.equal(204);
      expect((await members(household.id, owner)).map((m) => m.userId)).to.deep.equal([owner]);
    });

    it('answers 409 owner_must_transfer when the Owner tries to leave', async () => {
      const { owner, household } = await family(h);
      problem(await remove(household.id, await memberOf(household.id, owner), owner), 409, 'owner_must_transfer');
      expect(await owners(household.id)).to.deep.equal([owner]);
    });

    it('lets no one but the Owner remove someone else: 403 forbidden; 404 for a non-member and an unknown member', async () => {
      const { owner, adult, junior, outsider, household } = await family(h);
      const ownerMember = await memberOf(household.id, owner);
      const juniorMember = await memberOf(household.id, junior);
      problem(await remove(household.id, juniorMember, adult), 403, 'forbidden');
      problem(await remove(household.id, ownerMember, adult), 403, 'forbidden');
      problem(await remove(household.id, await memberOf(household.id, adult), junior), 403, 'forbidden');
      problem(await remove(household.id, juniorMember, outsider), 404, 'not_found');
      problem(await remove(household.id, '6b1d1f4e-8a7c-4c33-9d1e-5c0a1b2c3d4e', owner), 404, 'member_not_found');
      problem(await remove(household.id, 'not-a-uuid', owner), 400, 'validation_failed');
      expect((await remove(household.id, juniorMember, owner)).status).to.equal(204);
      problem(await remove(household.id, juniorMember, owner), 404, 'member_not_found');
      expect((await members(household.id, owner)).map((m) => m.userId)).to.deep.equal([owner, adult]);
    });
  });

  describe('POST /api/v1/households/{householdId}/owner', () => {
    it('hands the household over to an Adult: 200 HouseholdResponse, the old Owner becomes an Adult', async () => {
      const { owner, adult, household } = await family(h);
      const res = await transfer(household.id, owner, { memberId: await memberOf(household.id, adult) });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ ...household });
      expect(await h.households.access.roleOf({ userId: adult }, household.id)).to.equal('Owner');
      expect(await h.households.access.roleOf({ userId: owner }, household.id)).to.equal('Adult');
      // The new Owner acts as one on the next request; the old one no longer does.
      expect((await request(h.app).patch(`/api/v1/households/${household.id}`).set('X-Test-User', adult).send({ name: 'New' })).status).to.equal(200);
      problem(await request(h.app).patch(`/api/v1/households/${household.id}`).set('X-Test-User', owner).send({ name: 'Old' }), 403, 'forbidden');
      // And the former Owner may now leave.
      expect((await remove(household.id, await memberOf(household.id, owner), owner)).status).to.equal(204);
    });

    it('answers 409 invalid_role for a Junior, a member without an account, and the Owner', async () => {
      const { owner, junior, household } = await family(h);
      problem(await transfer(household.id, owner, { memberId: await memberOf(household.id, junior) }), 409, 'invalid_role');
      const [guest] = await h.db
        .knex('householdMembers')
        .insert({ householdId: household.id, userId: null, displayName: 'Gran', role: 'Adult', createdAt: new Date() })
        .returning('id');
      problem(await transfer(household.id, owner, { memberId: guest.id }), 409, 'invalid_role');
      problem(await transfer(household.id, owner, { memberId: await memberOf(household.id, owner) }), 409, 'invalid_role');
      expect(await owners(household.id)).to.deep.equal([owner]);
    });

    it('is for the Owner only: 403 forbidden, 404 not_found / member_not_found, 400 for a malformed body', async () => {
      const { owner, adult, junior, outsider, household } = await family(h);
      const adultMember = await memberOf(household.id, adult);
      problem(await transfer(household.id, adult, { memberId: adultMember }), 403, 'forbidden');
      problem(await transfer(household.id, junior, { memberId: adultMember }), 403, 'forbidden');
      problem(await transfer(household.id, outsider, { memberId: adultMember }), 404, 'not_found');
      problem(await transfer(household.id, owner, { memberId: '6b1d1f4e-8a7c-4c33-9d1e-5c0a1b2c3d4e' }), 404, 'member_not_found');
      problem(await transfer(household.id, owner, { memberId: 'nope' }), 400, 'validation_failed');
      problem(await transfer(household.id, owner, {}), 400, 'validation_failed');
      expect(await owners(household.id)).to.deep.equal([owner]);
    });

    it('leaves exactly one Owner when hand-overs to different Adults race', async () => {
      const owner = h.accounts.user('Olga');
      const household = await createHousehold(h.app, owner);
      const adults = ['A', 'B', 'C', 'D'].map((n) => h.accounts.user(n));
      for (const a of adults) await join(h.app, household.id, owner, a, 'Adult');
      const targets = await Promise.all(adults.map((a) => memberOf(household.id, a)));
      const answers = await Promise.all(targets.map((memberId) => transfer(household.id, owner, { memberId })));
      expect(answers.map((a) => a.status).sort()).to.deep.equal([200, 403, 403, 403]);
      const winner = adults[answers.findIndex((a) => a.status === 200)]!;
      expect(await owners(household.id)).to.deep.equal([winner]);
      const roles = (await h.db.knex('householdMembers').where({ householdId: household.id }).select('role')).map((r) => r.role);
      expect(roles.sort()).to.deep.equal(['Adult', 'Adult', 'Adult', 'Adult', 'Owner']);
    });

    it('leaves exactly one Owner when a hand-over races the new Owner leaving', async () => {
      for (let round = 0; round < 5; round++) {
        const owner = h.accounts.user('Olga');
        const adult = h.accounts.user('Arne');
        const household = await createHousehold(h.app, owner);
        await join(h.app, household.id, owner, adult, 'Adult');
        const adultMember = await memberOf(household.id, adult);
        const [handOver, leave] = await Promise.all([transfer(household.id, owner, { memberId: adultMember }), remove(household.id, adultMember, adult)]);
        const left = await owners(household.id);
        expect(left, `round ${round}: ${handOver.status} ${leave.status}`).to.have.length(1);
        // Either the Adult left first (the hand-over finds no such member) or became Owner first (and cannot leave).
        if (leave.status === 204) {
          expect(handOver.status).to.equal(404);
          expect(left).to.deep.equal([owner]);
        } else {
          expect([handOver.status, leave.status]).to.deep.equal([200, 409]);
          expect(left).to.deep.equal([adult]);
        }
      }
    });
  });

  describe('DELETE /api/v1/households/{householdId}', () => {
    it('deletes the household with its members, invitations, threads, plan and credits, in one go; other households stay', async () => {
      const { owner, adult, household } = await family(h);
      const other = await createHousehold(h.app, adult, { ...OSLO, name: 'Other' });
      await request(h.app).post(`/api/v1/households/${household.id}/invitations`).set('X-Test-User', owner).send({ role: 'Adult' });
      await request(h.app).post(`/api/v1/households/${household.id}/onboarding/complete`).set('X-Test-User', owner).send({});
      await h.households.spendTurn(household.id);
      const res = await destroy(household.id, owner, { confirmName: 'Nordmann' });
      expect(res.status).to.equal(204);
      problem(await request(h.app).get(`/api/v1/households/${household.id}`).set('X-Test-User', owner), 404, 'not_found');
      for (const table of [
        'householdMembers',
        'householdInvitations',
        'householdConversations',
        'householdSubscriptions',
        'creditLedger',
        'intakeCodeRedemptions',
      ]) {
        expect(await h.db.knex(table).where({ householdId: household.id }).count({ n: '*' }).first(), table).to.deep.equal({ n: '0' });
      }
      expect(await h.db.knex('householdMessages').count({ n: '*' }).first()).to.deep.equal({ n: '0' });
      // The welcome bundle stays the person's (once per user), no longer tied to the household.
      expect(await h.db.knex('welcomeBundles').where({ userId: owner }).first()).to.include({ householdId: null });
      expect((await request(h.app).get(`/api/v1/households/${other.id}`).set('X-Test-User', adult)).status).to.equal(200);
      expect(await h.households.memberships(adult)).to.have.length(1);
    });

    it('answers 400 confirmation_mismatch unless confirmName is exactly the name, and deletes nothing', async () => {
      const { owner, household } = await family(h);
      for (const confirmName of ['nordmann', 'Nordmann ', '', 'Other']) {
        problem(await destroy(household.id, owner, { confirmName }), 400, 'confirmation_mismatch');
      }
      problem(await destroy(household.id, owner, {}), 400, 'validation_failed');
      problem(await destroy(household.id, owner, { confirmName: 7 }), 400, 'validation_failed');
      expect((await request(h.app).get(`/api/v1/households/${household.id}`).set('X-Test-User', owner)).status).to.equal(200);
    });

    it('is for the Owner only: 403 forbidden for Adult and Junior, 404 for a non-member and an unknown household', async () => {
      const { adult, junior, outsider, household } = await family(h);
      problem(await destroy(household.id, adult, { confirmName: 'Nordmann' }), 403, 'forbidden');
      problem(await destroy(household.id, junior, { confirmName: 'Nordmann' }), 403, 'forbidden');
      problem(await destroy(household.id, outsider, { confirmName: 'Nordmann' }), 404, 'not_found');
      problem(await destroy('6b1d1f4e-8a7c-4c33-9d1e-5c0a1b2c3d4e', outsider, { confirmName: 'Nordmann' }), 404, 'not_found');
      expect(await h.db.knex('householdMembers').where({ householdId: household.id }).count({ n: '*' }).first()).to.deep.equal({ n: '3' });
    });
  });

  describe('account deletion step', () => {
    const deleteAccountData = (userId: string) => h.db.knex.transaction((trx) => h.households.deletionStep.deleteAccountData(userId, trx));

    it('refuses with 409 owner_must_transfer while the person owns a household that has other members, changing nothing', async () => {
      const { owner, household } = await family(h);
      const err = await deleteAccountData(owner).catch((e: unknown) => e);
      expect(err).to.include({ status: 409, code: 'owner_must_transfer' });
      expect(await h.db.knex('householdMembers').where({ householdId: household.id }).count({ n: '*' }).first()).to.deep.equal({ n: '3' });
    });

    it('deletes the households where the person is the only member and removes their memberships elsewhere', async () => {
      const { owner, adult, household } = await family(h);
      const alone = await createHousehold(h.app, adult, { ...OSLO, name: 'Alone' });
      await deleteAccountData(adult);
      expect(await h.db.knex('households').where({ id: alone.id }).first()).to.equal(undefined);
      expect(await h.households.memberships(adult)).to.deep.equal([]);
      expect((await members(household.id, owner)).map((m) => m.displayName)).to.deep.equal(['Olga', 'Jo']);
    });

    it('runs inside the caller’s transaction: a rollback keeps everything', async () => {
      const { adult, household } = await family(h);
      const alone = await createHousehold(h.app, adult, { ...OSLO, name: 'Alone' });
      const err = await h.db.knex
        .transaction(async (trx) => {
          await h.households.deletionStep.deleteAccountData(adult, trx);
          throw new Error('a later step failed');
        })
        .catch((e: Error) => e);
      expect(err).to.have.property('message', 'a later step failed');
      expect(await h.households.memberships(adult)).to.have.length(2);
      expect(await h.households.access.roleOf({ userId: adult }, household.id)).to.equal('Adult');
      expect(await h.households.access.roleOf({ userId: adult }, alone.id)).to.equal('Owner');
    });

    it('lets an Owner who handed over be deleted', async () => {
      const { owner, adult, household } = await family(h);
      await transfer(household.id, owner, { memberId: await memberOf(household.id, adult) });
      await deleteAccountData(owner);
      expect(await owners(household.id)).to.deep.equal([adult]);
      expect(await h.households.memberships(owner)).to.deep.equal([]);
    });
  });

  describe('data export source', () => {
    it('answers a household’s settings and its members as the GETs do', async () => {
      const { owner, household } = await family(h);
      const exported = await h.households.exportSource.household(household.id);
      expect(exported.household).to.deep.equal((await request(h.app).get(`/api/v1/households/${household.id}`).set('X-Test-User', owner)).body);
      expect(exported.members).to.deep.equal(await members(household.id, owner));
    });

    it('answers 404 for an unknown household', async () => {
      const err = await h.households.exportSource.household('6b1d1f4e-8a7c-4c33-9d1e-5c0a1b2c3d4e').catch((e: unknown) => e);
      expect(err).to.include({ status: 404 });
    });
  });
});
