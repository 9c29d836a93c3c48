/**
 * Issue 18, row 9: the holder hears of every security-relevant change, by a mail through the
 * outbox that carries no token and no secret.
 */
import type { ReceivedMail } from '@svc/test-support';
import { linksIn } from '@svc/test-support';
import { expect } from 'chai';
import request from 'supertest';
import { createWorld, linkIn, mailsTo, PASSWORD, PUBLIC_BASE_URL, signedUp, type World } from './helpers.js';
import { createSocialWorld, type SocialWorld } from './social-world.js';

/** No link but the sign-in page, and nothing that looks like a token (22+ base64url characters). */
function expectNoSecret(mail: ReceivedMail): void {
  for (const body of [mail.text, mail.html ?? '']) {
    for (const url of linksIn(body)) expect(url.toString()).to.equal(`${PUBLIC_BASE_URL}/login`);
    expect(body).to.not.match(/[A-Za-z0-9_-]{22,}/);
  }
}

describe('security notices (issue 18 row 9)', () => {
  let w: World;
  before(async () => {
    w = await createWorld();
  });
  after(async () => w.close());
  beforeEach(async () => w.reset());

  it('a password reset: "Your password was reset" to the address, without a token', async () => {
    await signedUp(w, 'ada@example.test');
    await request(w.app).post('/api/v1/auth/forgot-password').send({ email: 'ada@example.test' }).expect(204);
    await w.deliver();
    const { params } = linkIn(mailsTo(w, 'ada@example.test', /reset your password/i)[0]!);
    w.smtp.clear();
    await request(w.app)
      .post('/api/v1/auth/reset-password')
      .send({ ...params, newPassword: 'a new password!' })
      .expect(204);
    const mails = await w.deliver();
    expect(mails.map((m) => [m.to, m.subject])).to.deep.equal([[['ada@example.test'], 'Your password was reset']]);
    expectNoSecret(mails[0]!);
  });

  it('a password change: "Your password was changed", without a token', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    await w.deliver();
    w.smtp.clear();
    await agent.post('/api/v1/me/password').send({ currentPassword: PASSWORD, newPassword: 'a new password!' }).expect(204);
    const mails = await w.deliver();
    expect(mails.map((m) => [m.to, m.subject])).to.deep.equal([[['ada@example.test'], 'Your password was changed']]);
    expectNoSecret(mails[0]!);
  });

  it('a change of address: the notice goes to the OLD address, naming the new one, without a token', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    await agent.post('/api/v1/me/email').send({ newEmail: 'countess@example.test' }).expect(204);
    await w.deliver();
    const { params } = linkIn(mailsTo(w, 'countess@example.test')[0]!);
    w.smtp.clear();
    await request(w.app).post('/api/v1/auth/confirm-email-change').send(params).expect(204);
    const mails = await w.deliver();
    expect(mails.map((m) => [m.to, m.subject])).to.deep.equal([[['ada@example.test'], 'Your sign-in address was changed']]);
    expect(mails[0]!.text).to.include('countess@example.test');
    expectNoSecret(mails[0]!);
  });
});

describe('security notices: an identity linked (issue 18 row 9)', () => {
  let w: SocialWorld;
  before(async () => {
    w = await createSocialWorld();
  });
  after(async () => w.close());
  beforeEach(async () => w.reset());

  it('linking Apple to an existing account by its verified address mails the holder, without a token; a new account gets no such mail', async () => {
    const { userId } = await signedUp(w, 'ada@example.test');
    await w.db.knex('accounts').where({ id: userId }).update({ emailConfirmed: true });
    await w.deliver();
    w.smtp.clear();
    const res = await request(w.app)
      .post('/api/v1/auth/idp/native')
      .send({ identityToken: await w.idp.appleToken() });
    expect(res.body.user.id).to.equal(userId);
    const mails = await w.deliver();
    expect(mails.map((m) => [m.to, m.subject])).to.deep.equal([[['ada@example.test'], 'Apple sign-in was added to your account']]);
    expectNoSecret(mails[0]!);

    w.smtp.clear();
    w.idp.user = { sub: 'someone-new', email: 'new@example.test', email_verified: true };
    await request(w.app)
      .post('/api/v1/auth/idp/native')
      .send({ identityToken: await w.idp.appleToken() })
      .expect(200);
    expect(await w.deliver()).to.have.length(0);
  });
});
