import { expect } from 'chai';
import request from 'supertest';
import { family, useHarness } from './helpers.js';

describe('invitations: listing, revoking, and what an older code gives someone the Owner removed or demoted', () => {
  const h = useHarness();

  const invite = async (householdId: string, who: string, role: 'Adult' | 'Junior') => {
    const res = await request(h.app).post(`/api/v1/households/${householdId}/invitations`).set('X-Test-User', who).send({ role });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body as { code: string; role: string; householdId: string; expiresAt: string };
  };
  const accept = (who: string, code: string) => request(h.app).post('/api/v1/invitations/accept').set('X-Test-User', who).send({ code });
  const list = (householdId: string, who: string) => request(h.app).get(`/api/v1/households/${householdId}/invitations`).set('X-Test-User', who);
  const revoke = (householdId: string, code: string, who: string) =>
    request(h.app)
      .delete(`/api/v1/households/${householdId}/invitations/${encodeURIComponent(code)}`)
      .set('X-Test-User', who);
  const memberOf = async (householdId: string, userId: string) => (await h.db.knex('householdMembers').where({ householdId, userId }).first()).id as string;
  const problem = (res: request.Response, status: number, code: string) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    expect(res.body.code).to.equal(code);
  };

  describe('GET /api/v1/households/{householdId}/invitations', () => {
    it('lists the outstanding codes, newest first, with who minted them; not used or expired ones', async () => {
      const { owner, adult, outsider, household } = await family(h);
      const first = await invite(household.id, owner, 'Adult');
      h.clock.advanceSeconds(60);
      const second = await invite(household.id, adult, 'Junior');
      h.clock.advanceSeconds(60);
      const used = await invite(household.id, owner, 'Junior');
      expect((await accept(outsider, used.code)).status).to.equal(200);
      const res = await list(household.id, adult);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({
        items: [
          {
            code: second.code,
            role: 'Junior',
            householdId: household.id,
            expiresAt: second.expiresAt,
            createdAt: new Date(Date.parse(second.expiresAt) - 7 * 86_400_000).toISOString(),
            createdBy: await memberOf(household.id, adult),
          },
          {
            code: first.code,
            role: 'Adult',
            householdId: household.id,
            expiresAt: first.expiresAt,
            createdAt: new Date(Date.parse(first.expiresAt) - 7 * 86_400_000).toISOString(),
            createdBy: await memberOf(household.id, owner),
          },
        ],
      });
      // Past the first one's seven days it is no longer outstanding.
      h.clock.advanceSeconds(7 * 86_400 - 90);
      expect((await list(household.id, owner)).body.items.map((i: { code: string }) => i.code)).to.deep.equal([second.code]);
      // The database holds no code in clear.
      const stored = JSON.stringify(await h.db.knex('householdInvitations').select('*'));
      expect(stored).to.not.include(second.code);
    });

    it('answers a Junior 403 forbidden and a non-member 404 not_found', async () => {
      const { junior, outsider, household } = await family(h);
      problem(await list(household.id, junior), 403, 'forbidden');
      problem(await list(household.id, outsider), 404, 'not_found');
    });
  });

  describe('DELETE /api/v1/households/{householdId}/invitations/{code}', () => {
    it('revokes a code at once (204): accepting it then answers 404; a second revocation 404 invitation_not_found', async () => {
      const { owner, adult, outsider, household } = await family(h);
      const { code } = await invite(household.id, owner, 'Adult');
      expect((await revoke(household.id, code, adult)).status).to.equal(204);
      problem(await accept(outsider, code), 404, 'invitation_not_found');
      problem(await revoke(household.id, code, owner), 404, 'invitation_not_found');
      expect((await list(household.id, owner)).body.items).to.deep.equal([]);
    });

    it('answers 404 invitation_not_found for an unknown, used, expired or other household’s code; 403 for a Junior; 404 not_found for a non-member', async () => {
      const { owner, junior, outsider, household } = await family(h);
      const { code } = await invite(household.id, owner, 'Adult');
      problem(await revoke(household.id, 'no-such-code', owner), 404, 'invitation_not_found');
      problem(await revoke(household.id, code, junior), 403, 'forbidden');
      problem(await revoke(household.id, code, outsider), 404, 'not_found');
      // Another household's owner cannot revoke it through their own household.
      const other = h.accounts.user('Otto');
      const otherHome = (
        await request(h.app).post('/api/v1/households').set('X-Test-User', other).send({ name: 'O', timeZoneId: 'UTC', defaultDinnerTime: '18:00' })
      ).body;
      problem(await revoke(otherHome.id, code, other), 404, 'invitation_not_found');
      expect((await accept(outsider, code)).status).to.equal(200);
      problem(await revoke(household.id, code, owner), 404, 'invitation_not_found');
      const { code: late } = await invite(household.id, owner, 'Junior');
      h.clock.advanceSeconds(7 * 86_400);
      problem(await revoke(household.id, late, owner), 404, 'invitation_not_found');
    });

    it('racing an acceptance, exactly one of the two wins (20 rounds)', async () => {
      const { owner, household } = await family(h);
      const outcomes = new Set<string>();
      for (let round = 0; round < 20; round++) {
        const { code } = await invite(household.id, owner, 'Adult');
        const guest = h.accounts.user(`Guest${round}`);
        const [revoked, accepted] = await Promise.all([revoke(household.id, code, owner), accept(guest, code)]);
        const wins = [revoked.status === 204, accepted.status === 200].filter(Boolean).length;
        expect(wins, `round ${round}: revoke ${revoked.status}, accept ${accepted.status}`).to.equal(1);
        if (revoked.status === 204) problem(accepted, 404, 'invitation_not_found');
        else problem(revoked, 404, 'invitation_not_found');
        const joined = await h.db.knex('householdMembers').where({ householdId: household.id, userId: guest }).first();
        expect(Boolean(joined)).to.equal(accepted.status === 200);
        outcomes.add(revoked.status === 204 ? 'revoked' : 'accepted');
      }
      expect(outcomes.size).to.be.greaterThan(0);
    });
  });

  describe('older codes after a removal or a demotion', () => {
    it('refuses a removed account a code minted before the removal (404), which stays valid for someone else', async () => {
      const { owner, adult, outsider, household } = await family(h);
      const { code } = await invite(household.id, owner, 'Adult');
      h.clock.advanceSeconds(1);
      expect(
        (
          await request(h.app)
            .delete(`/api/v1/households/${household.id}/members/${await memberOf(household.id, adult)}`)
            .set('X-Test-User', owner)
        ).status,
      ).to.equal(204);
      problem(await accept(adult, code), 404, 'invitation_not_found');
      expect((await accept(outsider, code)).body.role).to.equal('Adult');
    });

    it('gives a member made a Junior who then left at most a Junior membership with an older Adult code', async () => {
      const { owner, adult, household } = await family(h);
      const { code } = await invite(household.id, owner, 'Adult');
      const memberId = await memberOf(household.id, adult);
      h.clock.advanceSeconds(1);
      await request(h.app).patch(`/api/v1/households/${household.id}/members/${memberId}`).set('X-Test-User', owner).send({ role: 'Junior' }).expect(200);
      h.clock.advanceSeconds(1);
      await request(h.app).delete(`/api/v1/households/${household.id}/members/${memberId}`).set('X-Test-User', adult).expect(204);
      const back = await accept(adult, code);
      expect(back.status).to.equal(200);
      expect(back.body.role).to.equal('Junior');
      expect(await h.households.access.roleOf({ userId: adult }, household.id)).to.equal('Junior');
    });

    it('lets an Adult who left on their own come back as an Adult with an older code (nothing was taken away)', async () => {
      const { owner, adult, household } = await family(h);
      const { code } = await invite(household.id, owner, 'Adult');
      h.clock.advanceSeconds(1);
      await request(h.app)
        .delete(`/api/v1/households/${household.id}/members/${await memberOf(household.id, adult)}`)
        .set('X-Test-User', adult)
        .expect(204);
      expect((await accept(adult, code)).body.role).to.equal('Adult');
    });

    it('revokes the codes a member minted when they are removed, leave or are made a Junior', async () => {
      for (const how of ['removed', 'left', 'demoted'] as const) {
        await h.db.truncate();
        const { owner, adult, outsider, household } = await family(h);
        const { code } = await invite(household.id, adult, 'Adult');
        const mine = await invite(household.id, owner, 'Junior');
        const memberId = await memberOf(household.id, adult);
        if (how === 'demoted')
          await request(h.app).patch(`/api/v1/households/${household.id}/members/${memberId}`).set('X-Test-User', owner).send({ role: 'Junior' }).expect(200);
        else
          await request(h.app)
            .delete(`/api/v1/households/${household.id}/members/${memberId}`)
            .set('X-Test-User', how === 'left' ? adult : owner)
            .expect(204);
        problem(await accept(outsider, code), 404, 'invitation_not_found');
        expect(
          (await list(household.id, owner)).body.items.map((i: { code: string }) => i.code),
          how,
        ).to.deep.equal([mine.code]);
      }
    });
  });
});

describe('memberIds inside a transaction (HouseholdMemberIds with trx)', () => {
  const h = useHarness();

  it('holds the members it answered until the transaction ends: a removal waits for it, then goes through', async () => {
    const { owner, adult, household } = await family(h);
    const memberId = (await h.db.knex('householdMembers').where({ householdId: household.id, userId: adult }).first()).id as string;
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let listed!: () => void;
    const wasListed = new Promise<void>((resolve) => {
      listed = resolve;
    });
    const writer = h.db.knex.transaction(async (trx) => {
      expect((await h.households.memberIds(household.id, trx)).has(memberId)).to.equal(true);
      listed();
      await released;
    });
    await wasListed;
    let finished = false;
    const removal = request(h.app)
      .delete(`/api/v1/households/${household.id}/members/${memberId}`)
      .set('X-Test-User', owner)
      .then((res) => {
        finished = true;
        return res;
      });
    // The removal's DELETE of the member row waits on the writer's lock (seen in pg_stat_activity).
    let waiting = false;
    for (let i = 0; i < 500 && !waiting; i++) {
      const { rows } = await h.db.knex.raw(
        "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query ilike 'delete from %household_members%'",
      );
      waiting = rows[0].n > 0;
      if (!waiting) await new Promise((resolve) => setImmediate(resolve));
    }
    expect(waiting, 'the removal waits for the transaction that listed the member').to.equal(true);
    expect(finished).to.equal(false);
    release();
    await writer;
    expect((await removal).status).to.equal(204);
  });
});
