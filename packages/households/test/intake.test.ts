import { expect } from 'chai';
import request from 'supertest';
import { OSLO, useHarness } from './helpers.js';

describe('intake: open, invite-only, paused', () => {
  const h = useHarness();

  const create = (who: string, inviteCode?: string | null) =>
    request(h.app)
      .post('/api/v1/households')
      .set('X-Test-User', who)
      .send(inviteCode === undefined ? OSLO : { ...OSLO, inviteCode });
  const households = async () => Number((await h.db.knex('households').count({ n: '*' }).first())?.n);

  it('open: anyone creates, and an invite code that comes along is ignored', async () => {
    expect((await create(h.accounts.user('A'))).status).to.equal(201);
    expect((await create(h.accounts.user('B'), 'whatever')).status).to.equal(201);
    expect(await h.db.knex('intakeCodeRedemptions').count({ n: '*' }).first()).to.deep.equal({ n: '0' });
  });

  describe('invite', () => {
    beforeEach(() => h.configure({ intakeMode: 'invite', inviteCodes: ['Beta-2026', 'FRIENDS'] }));

    it('answers 403 invite_required without a code (left out, null or blank) and writes nothing', async () => {
      for (const code of [undefined, null, '', '   ']) {
        const res = await create(h.accounts.user('A'), code);
        expect(res.status, String(code)).to.equal(403);
        expect(res.body.code).to.equal('invite_required');
      }
      expect(await households()).to.equal(0);
    });

    it('answers 403 invite_code_invalid for a code nobody made, and writes nothing', async () => {
      const res = await create(h.accounts.user('A'), 'NOPE-NOPE');
      expect(res.status).to.equal(403);
      expect(res.body.code).to.equal('invite_code_invalid');
      expect(await households()).to.equal(0);
    });

    it('accepts an INVITE_CODES code, case-insensitively and again and again', async () => {
      expect((await create(h.accounts.user('A'), 'beta-2026')).status).to.equal(201);
      expect((await create(h.accounts.user('B'), ' BETA-2026 ')).status).to.equal(201);
      expect((await create(h.accounts.user('C'), 'friends')).status).to.equal(201);
      expect(await h.db.knex('intakeCodeRedemptions').orderBy('id').pluck('code')).to.deep.equal(['BETA-2026', 'BETA-2026', 'FRIENDS']);
    });

    it('accepts an operator code once; a second use is invite_code_invalid and writes nothing', async () => {
      const made = await h.households.admin.createInviteCode({ note: 'for Olga' });
      expect(made.code).to.match(/^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){3}$/);
      expect(made).to.include({ maxUses: 1, uses: 0, note: 'for Olga', expiresAt: null, revokedAt: null, createdAt: '2026-11-22T09:00:00.000Z' });
      const olga = h.accounts.user('Olga');
      const first = await create(olga, made.code.toLowerCase());
      expect(first.status).to.equal(201);
      const second = await create(h.accounts.user('Per'), made.code);
      expect(second.status).to.equal(403);
      expect(second.body.code).to.equal('invite_code_invalid');
      expect(await households()).to.equal(1);
      const [listed] = await h.households.admin.listInviteCodes();
      expect(listed).to.include({ code: made.code, uses: 1, maxUses: 1 });
      expect(await h.db.knex('intakeCodeRedemptions').select('code', 'userId', 'householdId')).to.deep.equal([
        { code: made.code, userId: olga, householdId: first.body.id },
      ]);
    });

    it('lets exactly one of several racing creators spend a single-use code', async () => {
      const { code } = await h.households.admin.createInviteCode();
      const answers = await Promise.all([1, 2, 3, 4].map((i) => create(h.accounts.user(`R${i}`), code)));
      expect(answers.map((a) => a.status).sort()).to.deep.equal([201, 403, 403, 403]);
      expect(await households()).to.equal(1);
    });

    it('honours maxUses, expiry and revocation of operator codes', async () => {
      const twice = await h.households.admin.createInviteCode({ code: 'twice', maxUses: 2 });
      expect(twice.code).to.equal('TWICE');
      expect((await create(h.accounts.user('A'), 'twice')).status).to.equal(201);
      expect((await create(h.accounts.user('B'), 'twice')).status).to.equal(201);
      expect((await create(h.accounts.user('C'), 'twice')).body.code).to.equal('invite_code_invalid');

      await h.households.admin.createInviteCode({ code: 'LATE', expiresAt: new Date('2026-11-22T10:00:00.000Z') });
      h.clock.set('2026-11-22T10:00:00.000Z');
      expect((await create(h.accounts.user('D'), 'late')).body.code).to.equal('invite_code_invalid');

      await h.households.admin.createInviteCode({ code: 'GONE' });
      expect(await h.households.admin.revokeInviteCode('gone')).to.equal(true);
      expect(await h.households.admin.revokeInviteCode('gone')).to.equal(false);
      expect((await create(h.accounts.user('E'), 'GONE')).body.code).to.equal('invite_code_invalid');
      expect(await households()).to.equal(2);
    });

    it('checks the body first: a bad body is 400 even without a code', async () => {
      const res = await request(h.app)
        .post('/api/v1/households')
        .set('X-Test-User', h.accounts.user('A'))
        .send({ ...OSLO, timeZoneId: 'Nowhere' });
      expect(res.status).to.equal(400);
    });
  });

  describe('paused', () => {
    beforeEach(() => h.configure({ intakeMode: 'paused', inviteCodes: ['BETA'] }));

    it('answers 403 intake_paused, puts the caller on the waitlist once, and writes no household', async () => {
      const who = h.accounts.user('Wanda');
      for (const code of [undefined, 'BETA']) {
        const res = await create(who, code);
        expect(res.status).to.equal(403);
        expect(res.body.code).to.equal('intake_paused');
      }
      expect(h.accounts.waitlist).to.deep.equal([{ accountId: who, reason: 'intake_paused' }]);
      expect(await households()).to.equal(0);
    });

    it('does not waitlist a caller whose body is not valid', async () => {
      const res = await request(h.app).post('/api/v1/households').set('X-Test-User', h.accounts.user('A')).send({ name: 'x' });
      expect(res.status).to.equal(400);
      expect(h.accounts.waitlist).to.deep.equal([]);
    });
  });

  it('refuses an operator code that is blank or a maxUses below 1', async () => {
    for (const options of [{ code: '  ' }, { maxUses: 0 }, { maxUses: 1.5 }]) {
      try {
        await h.households.admin.createInviteCode(options);
        expect.fail('should refuse');
      } catch (err) {
        expect((err as { status: number }).status).to.equal(400);
      }
    }
  });
});
