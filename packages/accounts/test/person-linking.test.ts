import { linksIn } from '@svc/test-support';
import { expect } from 'chai';
import request from 'supertest';
import { mailsTo, sessionCookie, signedUp } from './helpers.js';
import { appCode, createSocialWorld, pkce, type SocialWorld, signInWith } from './social-world.js';

describe('linking a sign-in method: notice mail, and the method sessions record', () => {
  let w: SocialWorld;
  before(async () => {
    w = await createSocialWorld();
  });
  after(async () => w.close());
  beforeEach(async () => w.reset());

  it('linking Apple to an existing account mails its holder (no secret); the session records apple', async () => {
    const { userId } = await signedUp(w, 'ada@example.test');
    await w.db.knex('accounts').where({ id: userId }).update({ emailConfirmed: true });
    await w.deliver();
    w.smtp.clear();
    const res = await request(w.app)
      .post('/api/v1/auth/idp/native')
      .set('User-Agent', 'MealsApp/3.1 iOS')
      .send({ identityToken: await w.idp.appleToken() });
    expect(res.status).to.equal(200);
    expect(res.body.user.id).to.equal(userId);
    await w.deliver();
    const [notice, ...more] = mailsTo(w, 'ada@example.test');
    expect(more).to.deep.equal([]);
    expect(notice!.subject).to.equal('Apple sign-in was added to your account');
    expect(linksIn(notice!.text).map((u) => u.pathname)).to.deep.equal(['/login']);
    const sessions = await request(w.app).get('/api/v1/me/sessions').set('Cookie', sessionCookie(res)!.split(';')[0]!);
    expect(sessions.body.items.find((s: { current: boolean }) => s.current)).to.include({ method: 'apple', userAgent: 'MealsApp/3.1 iOS' });
  });

  it('a new account made by a sign-in gets no linking notice; a returning sign-in neither', async () => {
    expect(
      (
        await request(w.app)
          .post('/api/v1/auth/idp/native')
          .send({ identityToken: await w.idp.appleToken() })
      ).status,
    ).to.equal(200);
    expect(
      (
        await request(w.app)
          .post('/api/v1/auth/idp/native')
          .send({ identityToken: await w.idp.appleToken() })
      ).status,
    ).to.equal(200);
    await w.deliver();
    expect(w.smtp.mails.filter((m) => /sign-in was added/.test(m.subject))).to.deep.equal([]);
  });

  it('the browser flow records google, and the app flow the provider of its code, as the session’s method', async () => {
    const browser = request.agent(w.app);
    expect((await signInWith('google', browser)).status).to.equal(302);
    const sessions = await browser.get('/api/v1/me/sessions');
    expect(sessions.status).to.equal(200);
    expect(sessions.body.items.map((s: { method: string }) => s.method)).to.deep.equal(['google']);

    const { verifier, challenge } = pkce();
    const code = await appCode(w, 'apple', challenge);
    const app = request.agent(w.app);
    expect((await app.post('/api/v1/auth/exchange').send({ code, codeVerifier: verifier })).status).to.equal(200);
    const mine = (await app.get('/api/v1/me/sessions')).body.items.find((s: { current: boolean }) => s.current);
    expect(mine.method).to.equal('apple');
  });
});
