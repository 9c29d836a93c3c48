import { expect } from 'chai';
import request from 'supertest';
import { createWorld, linkIn, login, mailsTo, PASSWORD, signedUp, type World } from './helpers.js';

describe('confirm-email and resend-confirmation', () => {
  let w: World;
  before(async () => {
    w = await createWorld();
  });
  after(async () => w.close());
  beforeEach(async () => w.reset());

  async function confirmLink(email: string) {
    await w.deliver();
    return linkIn(mailsTo(w, email, /confirm/i).at(-1)!).params;
  }

  it('answers 400 invalid_token for a wrong token or an unknown user, and confirms with the right one', async () => {
    const { agent, userId } = await signedUp(w, 'ada@example.test');
    const params = await confirmLink('ada@example.test');
    for (const body of [
      { userId, token: 'A'.repeat(43) },
      { userId: '5b1f3c8e-8a47-4e0c-9a39-3c1f4f0f0000', token: params.token },
    ]) {
      const res = await request(w.app).post('/api/v1/auth/confirm-email').send(body);
      expect(res.status).to.equal(400);
      expect(res.body.code).to.equal('invalid_token');
    }
    const bad = await request(w.app).post('/api/v1/auth/confirm-email').send({ userId: 'not-a-uuid', token: params.token });
    expect(bad.body.code).to.equal('validation_failed');
    await request(w.app).post('/api/v1/auth/confirm-email').send(params).expect(204);
    expect((await agent.get('/api/v1/me')).body.emailConfirmed).to.equal(true);
  });

  it('answers 204 whatever the token once the address is confirmed', async () => {
    const { userId } = await signedUp(w, 'ada@example.test');
    const params = await confirmLink('ada@example.test');
    await request(w.app).post('/api/v1/auth/confirm-email').send(params).expect(204);
    await request(w.app).post('/api/v1/auth/confirm-email').send(params).expect(204);
    await request(w.app).post('/api/v1/auth/confirm-email').send({ userId, token: 'rubbish' }).expect(204);
  });

  it('answers 400 invalid_token for a link older than 48 hours', async () => {
    await signedUp(w, 'ada@example.test');
    const params = await confirmLink('ada@example.test');
    w.clock.advance(48 * 3600_000);
    const res = await request(w.app).post('/api/v1/auth/confirm-email').send(params);
    expect(res.status).to.equal(400);
    expect(res.body.code).to.equal('invalid_token');
  });

  it('does not confirm a new address with a link mailed for the old one', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    const params = await confirmLink('ada@example.test');
    await w.db.knex('accounts').update({ email: 'other@example.test', emailNormalized: 'other@example.test' });
    const res = await agent.post('/api/v1/auth/confirm-email').send(params);
    expect(res.body.code).to.equal('invalid_token');
  });

  it('resend answers 429 resend_cooldown with Retry-After in seconds within five minutes of the last mail, then mails a fresh working link', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    w.clock.advanceSeconds(60);
    const cooling = await agent.post('/api/v1/auth/resend-confirmation');
    expect(cooling.status).to.equal(429);
    expect(cooling.body.code).to.equal('resend_cooldown');
    expect(cooling.headers['retry-after']).to.equal('240');
    w.clock.advanceSeconds(240);
    await agent.post('/api/v1/auth/resend-confirmation').expect(204);
    await w.deliver();
    const mails = mailsTo(w, 'ada@example.test', /confirm/i);
    expect(mails).to.have.length(2);
    const params = linkIn(mails[1]!).params;
    await request(w.app).post('/api/v1/auth/confirm-email').send(params).expect(204);
    expect((await agent.get('/api/v1/me')).body.emailConfirmed).to.equal(true);
    expect((await agent.post('/api/v1/auth/resend-confirmation').send()).status).to.equal(204);
  });

  it('resend answers 204 and mails nothing once the address is confirmed, cooldown or not', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    const params = await confirmLink('ada@example.test');
    await request(w.app).post('/api/v1/auth/confirm-email').send(params).expect(204);
    w.smtp.clear();
    await agent.post('/api/v1/auth/resend-confirmation').expect(204);
    w.clock.advanceSeconds(600);
    await agent.post('/api/v1/auth/resend-confirmation').expect(204);
    await w.deliver();
    expect(w.smtp.mails).to.have.length(0);
  });

  it('resend needs a session (401)', async () => {
    const res = await request(w.app).post('/api/v1/auth/resend-confirmation');
    expect(res.status).to.equal(401);
    expect(res.body.code).to.equal('unauthenticated');
  });
});

describe('forgot-password and reset-password', () => {
  let w: World;
  before(async () => {
    w = await createWorld();
  });
  after(async () => w.close());
  beforeEach(async () => w.reset());

  async function resetLink(email: string) {
    await w.deliver();
    return linkIn(mailsTo(w, email, /reset/i).at(-1)!).params;
  }

  it('mails a reset link with the address and token to an address with an account (any case)', async () => {
    await signedUp(w, 'Ada@Example.test');
    await w.deliver();
    w.smtp.clear();
    await request(w.app).post('/api/v1/auth/forgot-password').send({ email: 'ADA@example.test' }).expect(204);
    await w.deliver();
    const mails = mailsTo(w, 'Ada@Example.test');
    expect(mails).to.have.length(1);
    expect(mails[0]!.subject).to.match(/reset/i);
    const { url, params } = linkIn(mails[0]!);
    expect(url.origin + url.pathname).to.equal('https://meals.example.test/reset-password');
    expect(params.email).to.equal('Ada@Example.test');
    expect(url.search).to.contain('email=Ada%40Example.test');
  });

  it('answers 204 and mails nothing for an address without an account, or one that is not an address', async () => {
    await request(w.app).post('/api/v1/auth/forgot-password').send({ email: 'nobody@example.test' }).expect(204);
    await request(w.app).post('/api/v1/auth/forgot-password').send({ email: 'not an address' }).expect(204);
    await w.deliver();
    expect(w.smtp.mails).to.have.length(0);
    const bad = await request(w.app).post('/api/v1/auth/forgot-password').send({});
    expect(bad.status).to.equal(400);
    expect(bad.body.code).to.equal('validation_failed');
  });

  it('silently drops a second request within five minutes', async () => {
    await signedUp(w, 'ada@example.test');
    await request(w.app).post('/api/v1/auth/forgot-password').send({ email: 'ada@example.test' }).expect(204);
    w.clock.advanceSeconds(299);
    await request(w.app).post('/api/v1/auth/forgot-password').send({ email: 'ada@example.test' }).expect(204);
    await w.deliver();
    expect(mailsTo(w, 'ada@example.test', /reset/i)).to.have.length(1);
    w.clock.advanceSeconds(1);
    await request(w.app).post('/api/v1/auth/forgot-password').send({ email: 'ada@example.test' }).expect(204);
    await w.deliver();
    expect(mailsTo(w, 'ada@example.test', /reset/i)).to.have.length(2);
  });

  it('resets the password, confirms the address and signs every session out', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    await request(w.app).post('/api/v1/auth/forgot-password').send({ email: 'ada@example.test' }).expect(204);
    const params = await resetLink('ada@example.test');
    const res = await request(w.app)
      .post('/api/v1/auth/reset-password')
      .send({ ...params, newPassword: 'reset password 1' });
    expect(res.status).to.equal(204);
    expect((await agent.get('/api/v1/me')).status).to.equal(401);
    expect((await login(request.agent(w.app), 'ada@example.test', PASSWORD)).status).to.equal(401);
    const signedIn = await login(request.agent(w.app), 'ada@example.test', 'reset password 1');
    expect(signedIn.status).to.equal(200);
    expect(signedIn.body.emailConfirmed).to.equal(true);
  });

  it('answers 400 invalid_token for a used link, one past an hour, a wrong token, or another address', async () => {
    await signedUp(w, 'ada@example.test');
    await signedUp(w, 'bob@example.test');
    await request(w.app).post('/api/v1/auth/forgot-password').send({ email: 'ada@example.test' }).expect(204);
    const params = await resetLink('ada@example.test');
    for (const body of [
      { ...params, token: 'A'.repeat(43) },
      { ...params, email: 'bob@example.test' },
      { ...params, email: 'nobody@example.test' },
    ]) {
      const res = await request(w.app)
        .post('/api/v1/auth/reset-password')
        .send({ ...body, newPassword: 'reset password 1' });
      expect(res.status).to.equal(400);
      expect(res.body.code).to.equal('invalid_token');
    }
    w.clock.advance(3600_000);
    expect(
      (
        await request(w.app)
          .post('/api/v1/auth/reset-password')
          .send({ ...params, newPassword: 'reset password 1' })
      ).body.code,
    ).to.equal('invalid_token');
    w.clock.advance(-1000);
    await request(w.app)
      .post('/api/v1/auth/reset-password')
      .send({ ...params, newPassword: 'reset password 1' })
      .expect(204);
    const again = await request(w.app)
      .post('/api/v1/auth/reset-password')
      .send({ ...params, newPassword: 'reset password 2' });
    expect(again.status).to.equal(400);
    expect(again.body.code).to.equal('invalid_token');
  });

  it('answers 400 password_rejected for a short password without spending the link', async () => {
    await signedUp(w, 'ada@example.test');
    await request(w.app).post('/api/v1/auth/forgot-password').send({ email: 'ada@example.test' }).expect(204);
    const params = await resetLink('ada@example.test');
    const short = await request(w.app)
      .post('/api/v1/auth/reset-password')
      .send({ ...params, newPassword: 'short' });
    expect(short.status).to.equal(400);
    expect(short.body.code).to.equal('password_rejected');
    expect(short.body.detail).to.match(/8 to 256/);
    await request(w.app)
      .post('/api/v1/auth/reset-password')
      .send({ ...params, newPassword: 'long enough now' })
      .expect(204);
  });

  it('a reset link from the change-of-address notice works too, and spends the other reset links', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    await request(w.app).post('/api/v1/auth/forgot-password').send({ email: 'ada@example.test' }).expect(204);
    await agent.post('/api/v1/me/email').send({ newEmail: 'thief@example.test' }).expect(204);
    await w.deliver();
    const [forgot, notice] = mailsTo(w, 'ada@example.test', /reset|about to change/i);
    expect(notice!.subject).to.match(/about to change/i);
    await request(w.app)
      .post('/api/v1/auth/reset-password')
      .send({ ...linkIn(notice!).params, newPassword: 'mine again!' })
      .expect(204);
    const other = await request(w.app)
      .post('/api/v1/auth/reset-password')
      .send({ ...linkIn(forgot!).params, newPassword: 'mine again!' });
    expect(other.body.code).to.equal('invalid_token');
  });

  it('the change-of-address notice does not count as a forgot-password request', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    await agent.post('/api/v1/me/email').send({ newEmail: 'new@example.test' }).expect(204);
    await request(w.app).post('/api/v1/auth/forgot-password').send({ email: 'ada@example.test' }).expect(204);
    await w.deliver();
    expect(mailsTo(w, 'ada@example.test', /^Reset your password$/)).to.have.length(1);
  });
});
