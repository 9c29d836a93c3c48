/**
 * Issue 18, row 4: every mailed link is bound to the state it was issued for. A newer link of a
 * purpose retires the older ones; a change of password or address retires them all; spending is
 * one conditional UPDATE, so parallel redemptions let exactly one through.
 */
import { expect } from 'chai';
import request from 'supertest';
import { createWorld, linkIn, login, mailsTo, PASSWORD, signedUp, type World } from './helpers.js';

const ROUNDS = Number(process.env.RACE_ROUNDS ?? 20);

describe('mailed links bound to their state (issue 18 row 4)', function () {
  this.timeout(120_000);
  let w: World;
  before(async () => {
    w = await createWorld();
  });
  after(async () => w.close());
  beforeEach(async () => w.reset());

  const forgot = (email: string) => request(w.app).post('/api/v1/auth/forgot-password').send({ email }).expect(204);
  const reset = (params: Record<string, string>, newPassword = 'a new password!') =>
    request(w.app)
      .post('/api/v1/auth/reset-password')
      .send({ ...params, newPassword });
  const resetLinks = () => mailsTo(w, 'ada@example.test', /reset your password|about to change/i).map((m) => linkIn(m).params);

  it('a newer reset link retires the older one', async () => {
    await signedUp(w, 'ada@example.test');
    await forgot('ada@example.test');
    w.clock.advanceSeconds(301);
    await forgot('ada@example.test');
    await w.deliver();
    const [older, newer] = resetLinks();
    expect((await reset(older!)).body.code).to.equal('invalid_token');
    await reset(newer!).expect(204);
  });

  it('a password change retires every reset link', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    await forgot('ada@example.test');
    await w.deliver();
    await agent.post('/api/v1/me/password').send({ currentPassword: PASSWORD, newPassword: 'changed password' }).expect(204);
    expect((await reset(resetLinks()[0]!)).body.code).to.equal('invalid_token');
    expect((await login(request.agent(w.app), 'ada@example.test', 'changed password')).status).to.equal(200);
  });

  it('a password reset retires every other link: the other reset links, the confirmation, a pending change of address', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    await agent.post('/api/v1/me/email').send({ newEmail: 'new@example.test' }).expect(204);
    await w.deliver();
    const confirm = linkIn(mailsTo(w, 'ada@example.test', /confirm your e-mail/i)[0]!).params;
    const change = linkIn(mailsTo(w, 'new@example.test')[0]!).params;
    const [notice] = resetLinks();
    await reset(notice!).expect(204);
    expect((await request(w.app).post('/api/v1/auth/confirm-email-change').send(change)).body.code).to.equal('invalid_token');
    // The reset confirmed the address, so confirm-email answers 204 whatever the token: check the row.
    await request(w.app).post('/api/v1/auth/confirm-email').send(confirm).expect(204);
    const live = await w.db.knex('account_tokens').whereNull('usedAt').count({ n: '*' }).first();
    expect(live).to.deep.equal({ n: '0' });
  });

  it('a confirmed change of address retires every link issued for the old address (the heads-up reset link included)', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    await forgot('ada@example.test');
    await agent.post('/api/v1/me/email').send({ newEmail: 'new@example.test' }).expect(204);
    await w.deliver();
    const links = resetLinks();
    expect(links).to.have.length(2);
    await request(w.app)
      .post('/api/v1/auth/confirm-email-change')
      .send(linkIn(mailsTo(w, 'new@example.test')[0]!).params)
      .expect(204);
    for (const params of links) expect((await reset(params)).body.code).to.equal('invalid_token');
  });

  it('a new confirmation link (resend) retires the older one', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    w.clock.advanceSeconds(301);
    await agent.post('/api/v1/auth/resend-confirmation').expect(204);
    await w.deliver();
    const [older, newer] = mailsTo(w, 'ada@example.test', /confirm your e-mail/i).map((m) => linkIn(m).params);
    expect((await request(w.app).post('/api/v1/auth/confirm-email').send(older)).body.code).to.equal('invalid_token');
    await request(w.app).post('/api/v1/auth/confirm-email').send(newer).expect(204);
  });

  it(`twenty parallel redemptions of one reset link: exactly one succeeds, and only its password works — ${ROUNDS} rounds`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      // An hour on, so this client stays under its limit of unasked mail.
      w.clock.advanceSeconds(3600);
      const email = `ada${round}@example.test`;
      await signedUp(w, email);
      await forgot(email);
      await w.deliver();
      const { params } = linkIn(mailsTo(w, email, /reset your password/i)[0]!);
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => reset(params, `new password ${round}-${i}`)));
      const winners = answers.flatMap((r, i) => (r.status === 204 ? [i] : []));
      expect(winners, `round ${round}`).to.have.length(1);
      expect(
        answers.filter((r) => r.status === 400 && r.body.code === 'invalid_token'),
        `round ${round}`,
      ).to.have.length(19);
      expect((await login(request.agent(w.app), email, `new password ${round}-${winners[0]}`)).status).to.equal(200);
      const loser = winners[0] === 0 ? 1 : 0;
      expect((await login(request.agent(w.app), email, `new password ${round}-${loser}`)).status).to.equal(401);
    }
  });
});
