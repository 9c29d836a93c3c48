import { expect } from 'chai';
import request from 'supertest';
import { UNASKED_MAIL_LIMITS } from '../src/service.js';
import { createWorld, linkIn, mailsTo, PASSWORD, register, sessionCookie, signedUp, type World } from './helpers.js';

describe('races', () => {
  let w: World;
  before(async () => {
    w = await createWorld();
  });
  after(async () => w.close());
  beforeEach(async () => w.reset());

  it('ten parallel confirmations of one e-mail-change token: exactly one succeeds', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    await agent.post('/api/v1/me/email').send({ newEmail: 'new@example.test' }).expect(204);
    await w.deliver();
    const { params } = linkIn(mailsTo(w, 'new@example.test')[0]!);
    const answers = await Promise.all(Array.from({ length: 10 }, () => request(w.app).post('/api/v1/auth/confirm-email-change').send(params)));
    expect(answers.filter((r) => r.status === 204)).to.have.length(1);
    expect(answers.filter((r) => r.status === 400 && r.body.code === 'invalid_token')).to.have.length(9);
  });

  it('ten parallel resets with one token: exactly one succeeds', async () => {
    await signedUp(w, 'ada@example.test');
    await request(w.app).post('/api/v1/auth/forgot-password').send({ email: 'ada@example.test' }).expect(204);
    await w.deliver();
    const { params } = linkIn(mailsTo(w, 'ada@example.test', /reset/i)[0]!);
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        request(w.app)
          .post('/api/v1/auth/reset-password')
          .send({ ...params, newPassword: `new password ${i}` }),
      ),
    );
    const winners = answers.map((r, i) => [r.status, i] as const).filter(([s]) => s === 204);
    expect(winners).to.have.length(1);
    expect(answers.filter((r) => r.body.code === 'invalid_token')).to.have.length(9);
    const winner = winners[0]![1];
    expect(
      (
        await request
          .agent(w.app)
          .post('/api/v1/auth/login')
          .send({ email: 'ada@example.test', password: `new password ${winner}` })
      ).status,
    ).to.equal(200);
  });

  it('ten parallel confirmations of one address token: the token is spent once, and every answer is 204 (confirmed addresses answer 204)', async () => {
    await signedUp(w, 'ada@example.test');
    await w.deliver();
    const { params } = linkIn(mailsTo(w, 'ada@example.test')[0]!);
    const answers = await Promise.all(Array.from({ length: 10 }, () => request(w.app).post('/api/v1/auth/confirm-email').send(params)));
    expect(answers.map((r) => r.status)).to.deep.equal(Array(10).fill(204));
    const tokens = await w.db.knex('account_tokens').where({ purpose: 'confirm_email' }).select('usedAt');
    expect(tokens).to.have.length(1);
    expect(tokens[0].usedAt).to.be.instanceOf(Date);
  });

  it('parallel sign-ups of one address make one account, one session and one confirmation mail; unasked mail to the address stops at the limit', async () => {
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => register(request(w.app), i % 2 ? 'RACE@example.test' : 'race@example.test', PASSWORD, `Racer ${i}`)),
    );
    expect(answers.map((r) => r.status)).to.deep.equal(Array(8).fill(200));
    expect(answers.filter((r) => sessionCookie(r) !== undefined)).to.have.length(1);
    expect(await w.db.knex('accounts').count({ n: '*' }).first()).to.deep.equal({ n: '1' });
    await w.deliver();
    expect(w.smtp.mails.filter((m) => /confirm/i.test(m.subject))).to.have.length(1);
    // Eight requests for mail to one address: the confirmation always goes out, the "already have
    // an account" mails only while the address is under its limit (5 an hour, the confirmation counted).
    const exists = w.smtp.mails.filter((m) => /already have an account/i.test(m.subject));
    expect(exists.length).to.be.within(4, 5);
    expect(exists.length + 1).to.be.at.most(UNASKED_MAIL_LIMITS.perRecipient + 1);
  });

  it('parallel resend-confirmation requests after the cooldown send one mail', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    await w.deliver();
    w.smtp.clear();
    w.clock.advanceSeconds(301);
    const answers = await Promise.all(Array.from({ length: 5 }, () => agent.post('/api/v1/auth/resend-confirmation')));
    expect(answers.filter((r) => r.status === 204)).to.have.length(1);
    expect(answers.filter((r) => r.status === 429)).to.have.length(4);
    await w.deliver();
    expect(w.smtp.mails).to.have.length(1);
  });
});
