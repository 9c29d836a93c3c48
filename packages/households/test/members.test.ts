import { expect } from 'chai';
import request from 'supertest';
import { createHousehold, family, useHarness } from './helpers.js';

describe('members, invitations and the day thread', () => {
  const h = useHarness();

  const invite = (householdId: string, who: string, role: string) =>
    request(h.app).post(`/api/v1/households/${householdId}/invitations`).set('X-Test-User', who).send({ role });
  const accept = (who: string, code: unknown) => request(h.app).post('/api/v1/invitations/accept').set('X-Test-User', who).send({ code });

  describe('POST /api/v1/households/{householdId}/invitations', () => {
    it('lets the Owner invite an Adult: 201 with a random code valid for seven days', async () => {
      const owner = h.accounts.user('Olga');
      const household = await createHousehold(h.app, owner);
      const res = await invite(household.id, owner, 'Adult');
      expect(res.status).to.equal(201);
      expect(res.body).to.deep.equal({ code: res.body.code, role: 'Adult', householdId: household.id, expiresAt: '2026-11-29T09:00:00.000Z' });
      expect(res.body.code).to.match(/^[A-Za-z0-9_-]{22}$/);
      const other = await invite(household.id, owner, 'Adult');
      expect(other.body.code).to.not.equal(res.body.code);
      const stored = await h.db.knex('householdInvitations').select('codeHash');
      expect(stored.map((r) => r.codeHash)).to.not.include(res.body.code);
    });

    it('lets an Adult invite an Adult or a Junior; a Junior gets 403 forbidden, a non-member 404', async () => {
      const { adult, junior, outsider, household } = await family(h);
      expect((await invite(household.id, adult, 'Adult')).status).to.equal(201);
      expect((await invite(household.id, adult, 'Junior')).status).to.equal(201);
      const byJunior = await invite(household.id, junior, 'Junior');
      expect(byJunior.status).to.equal(403);
      expect(byJunior.body.code).to.equal('forbidden');
      const byOutsider = await invite(household.id, outsider, 'Adult');
      expect(byOutsider.status).to.equal(404);
      expect(byOutsider.body.code).to.equal('not_found');
    });

    it('answers 400 validation_failed for the Owner role or no role', async () => {
      const owner = h.accounts.user('Olga');
      const household = await createHousehold(h.app, owner);
      for (const role of ['Owner', 'Child', undefined]) {
        const res = await invite(household.id, owner, role as string);
        expect(res.status).to.equal(400);
        expect(res.body.code).to.equal('validation_failed');
      }
    });
  });

  describe('POST /api/v1/invitations/accept', () => {
    it('makes the caller a member with the invited role and answers the membership', async () => {
      const owner = h.accounts.user('Olga');
      const kid = h.accounts.user('Kari');
      const household = await createHousehold(h.app, owner);
      const { body: inv } = await invite(household.id, owner, 'Junior');
      const res = await accept(kid, inv.code);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ householdId: household.id, householdName: 'Nordmann', role: 'Junior', memberId: res.body.memberId });
      expect(await h.households.access.roleOf({ userId: kid }, household.id)).to.equal('Junior');
      expect(await h.households.memberships(kid)).to.deep.equal([res.body]);
    });

    it('answers 404 invitation_not_found for an unknown code', async () => {
      const res = await accept(h.accounts.user('Kari'), 'no-such-code');
      expect(res.status).to.equal(404);
      expect(res.body.code).to.equal('invitation_not_found');
    });

    it('is single use: a second account gets 404 invitation_not_found', async () => {
      const owner = h.accounts.user('Olga');
      const household = await createHousehold(h.app, owner);
      const { body: inv } = await invite(household.id, owner, 'Adult');
      expect((await accept(h.accounts.user('Arne'), inv.code)).status).to.equal(200);
      const second = await accept(h.accounts.user('Berit'), inv.code);
      expect(second.status).to.equal(404);
      expect(second.body.code).to.equal('invitation_not_found');
    });

    it('expires after seven days', async () => {
      const owner = h.accounts.user('Olga');
      const household = await createHousehold(h.app, owner);
      const { body: inv } = await invite(household.id, owner, 'Adult');
      h.clock.advanceSeconds(7 * 24 * 3600 - 1);
      const { body: fresh } = await invite(household.id, owner, 'Adult');
      h.clock.advanceSeconds(1);
      const late = await accept(h.accounts.user('Arne'), inv.code);
      expect(late.status).to.equal(404);
      expect(late.body.code).to.equal('invitation_not_found');
      expect((await accept(h.accounts.user('Arne'), fresh.code)).status).to.equal(200);
    });

    it('answers 409 already_member to a member, and leaves the code usable', async () => {
      const owner = h.accounts.user('Olga');
      const household = await createHousehold(h.app, owner);
      const { body: inv } = await invite(household.id, owner, 'Adult');
      const res = await accept(owner, inv.code);
      expect(res.status).to.equal(409);
      expect(res.body.code).to.equal('already_member');
      expect(await h.households.access.roleOf({ userId: owner }, household.id)).to.equal('Owner');
      expect((await accept(h.accounts.user('Arne'), inv.code)).status).to.equal(200);
    });

    it('lets exactly one of two racing accounts spend a code', async () => {
      const owner = h.accounts.user('Olga');
      const household = await createHousehold(h.app, owner);
      const { body: inv } = await invite(household.id, owner, 'Adult');
      const racers = [h.accounts.user('A'), h.accounts.user('B'), h.accounts.user('C'), h.accounts.user('D')];
      const answers = await Promise.all(racers.map((r) => accept(r, inv.code)));
      expect(answers.map((a) => a.status).sort()).to.deep.equal([200, 404, 404, 404]);
      expect(await h.db.knex('householdMembers').where({ householdId: household.id }).count({ n: '*' }).first()).to.deep.equal({ n: '2' });
    });

    it('answers 409 already_member when one account accepts two invitations of a household at once', async () => {
      const owner = h.accounts.user('Olga');
      const household = await createHousehold(h.app, owner);
      const codes = await Promise.all([invite(household.id, owner, 'Adult'), invite(household.id, owner, 'Junior')]);
      const arne = h.accounts.user('Arne');
      const answers = await Promise.all(codes.map((c) => accept(arne, c.body.code)));
      expect(answers.map((a) => a.status).sort()).to.deep.equal([200, 409]);
      expect(answers.find((a) => a.status === 409)!.body.code).to.equal('already_member');
      expect(await h.db.knex('householdMembers').where({ householdId: household.id }).count({ n: '*' }).first()).to.deep.equal({ n: '2' });
    });

    it('answers 400 for a missing code and 401 without a session', async () => {
      const bad = await request(h.app).post('/api/v1/invitations/accept').set('X-Test-User', h.accounts.user('Kari')).send({});
      expect(bad.status).to.equal(400);
      expect(bad.body.code).to.equal('validation_failed');
      const anon = await request(h.app).post('/api/v1/invitations/accept').send({ code: 'x' });
      expect(anon.status).to.equal(401);
    });
  });

  describe('GET /api/v1/households/{householdId}/members', () => {
    it('lists the members with display names and roles to every member, 404 to a non-member', async () => {
      const { owner, adult, junior, outsider, household } = await family(h);
      for (const who of [owner, adult, junior]) {
        const res = await request(h.app).get(`/api/v1/households/${household.id}/members`).set('X-Test-User', who);
        expect(res.status).to.equal(200);
        expect(res.body.map((m: Record<string, unknown>) => [m.displayName, m.role, m.userId])).to.deep.equal([
          ['Olga', 'Owner', owner],
          ['Arne', 'Adult', adult],
          ['Jo', 'Junior', junior],
        ]);
        expect(res.body.every((m: { memberId: string }) => /^[0-9a-f-]{36}$/.test(m.memberId))).to.equal(true);
      }
      const res = await request(h.app).get(`/api/v1/households/${household.id}/members`).set('X-Test-User', outsider);
      expect(res.status).to.equal(404);
      expect(res.body.code).to.equal('not_found');
    });

    it('asks the account directory once for all names, and names an account it no longer knows', async () => {
      const { owner, adult, household } = await family(h);
      h.accounts.names.delete(adult);
      const calls = h.accounts.profileCalls;
      const res = await request(h.app).get(`/api/v1/households/${household.id}/members`).set('X-Test-User', owner);
      expect(h.accounts.profileCalls).to.equal(calls + 1);
      expect(res.body[1]).to.include({ displayName: 'Former member', userId: adult });
    });
  });

  describe('GET /api/v1/households/{householdId}/conversations/{conversationId}', () => {
    it('answers the thread to any member, 404 to a non-member and for a thread of another household', async () => {
      const { owner, adult, junior, outsider, household } = await family(h);
      const done = await request(h.app).post(`/api/v1/households/${household.id}/onboarding/complete`).set('X-Test-User', owner).send({});
      const path = `/api/v1/households/${household.id}/conversations/${done.body.conversationId}`;
      for (const who of [owner, adult, junior]) {
        const res = await request(h.app).get(path).set('X-Test-User', who);
        expect(res.status).to.equal(200);
        expect(res.body).to.include({ id: done.body.conversationId, householdId: household.id, date: '2026-11-22' });
        expect(res.body.messages).to.have.length(1);
        expect(res.body.messages[0]).to.include({ kind: 'onboarding_recap', createdAt: '2026-11-22T09:00:02.000Z' });
      }
      expect((await request(h.app).get(path).set('X-Test-User', outsider)).status).to.equal(404);
      const elsewhere = await createHousehold(h.app, outsider);
      const cross = await request(h.app).get(`/api/v1/households/${elsewhere.id}/conversations/${done.body.conversationId}`).set('X-Test-User', outsider);
      expect(cross.status).to.equal(404);
      expect(cross.body.code).to.equal('not_found');
      const unknown = await request(h.app)
        .get(`/api/v1/households/${household.id}/conversations/6b1d1f4e-8a7c-4c33-9d1e-5c0a1b2c3d4e`)
        .set('X-Test-User', owner);
      expect(unknown.status).to.equal(404);
    });
  });
});
