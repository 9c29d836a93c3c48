import { expect } from 'chai';
import request from 'supertest';
import { createWorld, linkIn, login, mailsTo, PASSWORD, sessionCookie, signedUp, type World } from './helpers.js';

describe('GET and PATCH /api/v1/me', () => {
  let w: World;
  before(async () => {
    w = await createWorld();
  });
  after(async () => w.close());
  beforeEach(async () => w.reset());

  it('answers the account with its memberships, emailConfirmed, hasPassword, isPlatformAdmin and serverNow from the clock', async () => {
    const { agent, userId } = await signedUp(w, 'ada@example.test');
    w.memberships.set(userId, [
      { householdId: '0b9f0e35-5a3e-4c55-9f0b-2f3f1a1c0001', householdName: 'Home', role: 'Owner', memberId: '0b9f0e35-5a3e-4c55-9f0b-2f3f1a1c0002' },
    ]);
    w.clock.set('2026-12-01T10:11:12.345Z');
    const res = await agent.get('/api/v1/me');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({
      user: { id: userId, email: 'ada@example.test', displayName: 'Ada Lovelace' },
      memberships: [
        { householdId: '0b9f0e35-5a3e-4c55-9f0b-2f3f1a1c0001', householdName: 'Home', role: 'Owner', memberId: '0b9f0e35-5a3e-4c55-9f0b-2f3f1a1c0002' },
      ],
      isPlatformAdmin: false,
      emailConfirmed: false,
      hasPassword: true,
      serverNow: '2026-12-01T10:11:12.345Z',
    });
  });

  it('says isPlatformAdmin for a listed address only once it is confirmed', async () => {
    const { agent } = await signedUp(w, 'Admin@Example.test');
    expect((await agent.get('/api/v1/me')).body.isPlatformAdmin).to.equal(false);
    await w.deliver();
    const { params } = linkIn(mailsTo(w, 'Admin@Example.test')[0]!);
    await request(w.app).post('/api/v1/auth/confirm-email').send(params).expect(204);
    expect((await agent.get('/api/v1/me')).body.isPlatformAdmin).to.equal(true);
  });

  it('PATCH renames (trimmed) and answers the updated MeResponse', async () => {
    const { agent, userId } = await signedUp(w, 'ada@example.test');
    const res = await agent.patch('/api/v1/me').send({ displayName: '  Countess of Lovelace  ' });
    expect(res.status).to.equal(200);
    expect(res.body.user).to.deep.equal({ id: userId, email: 'ada@example.test', displayName: 'Countess of Lovelace' });
    expect(res.body).to.have.keys('user', 'memberships', 'isPlatformAdmin', 'emailConfirmed', 'hasPassword', 'serverNow');
    expect((await agent.get('/api/v1/me')).body.user.displayName).to.equal('Countess of Lovelace');
  });

  it('PATCH accepts 1 and 80 characters and answers 400 account_name_length outside 1–80, blank, null or missing', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    expect((await agent.patch('/api/v1/me').send({ displayName: 'A' })).status).to.equal(200);
    expect((await agent.patch('/api/v1/me').send({ displayName: 'é'.repeat(80) })).status).to.equal(200);
    for (const body of [{ displayName: '' }, { displayName: '    ' }, { displayName: 'x'.repeat(81) }, { displayName: null }, {}]) {
      const res = await agent.patch('/api/v1/me').send(body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.code, JSON.stringify(body)).to.equal('account_name_length');
    }
    expect((await agent.get('/api/v1/me')).body.user.displayName).to.equal('é'.repeat(80));
  });

  it('answers 401 to PATCH /me without a session', async () => {
    const res = await request(w.app).patch('/api/v1/me').send({ displayName: 'x' });
    expect(res.status).to.equal(401);
  });
});

describe('POST /api/v1/me/password', () => {
  let w: World;
  before(async () => {
    w = await createWorld();
  });
  after(async () => w.close());
  beforeEach(async () => w.reset());

  it('changes the password: this session stays (under a new id), every other session must sign in again', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    const other = request.agent(w.app);
    await login(other, 'ada@example.test').expect(200);
    const res = await agent.post('/api/v1/me/password').send({ currentPassword: PASSWORD, newPassword: 'the new password' });
    expect(res.status).to.equal(204);
    expect(sessionCookie(res)).to.be.a('string');
    expect((await agent.get('/api/v1/me')).status).to.equal(200);
    expect((await other.get('/api/v1/me')).status).to.equal(401);
    expect((await login(request.agent(w.app), 'ada@example.test', PASSWORD)).status).to.equal(401);
    expect((await login(request.agent(w.app), 'ada@example.test', 'the new password')).status).to.equal(200);
  });

  it('answers 400 wrong_current_password for a wrong current password, and validation_failed when it is null on an account with a password', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    const wrong = await agent.post('/api/v1/me/password').send({ currentPassword: 'nope nope', newPassword: 'the new password' });
    expect(wrong.status).to.equal(400);
    expect(wrong.body.code).to.equal('wrong_current_password');
    const nul = await agent.post('/api/v1/me/password').send({ currentPassword: null, newPassword: 'the new password' });
    expect(nul.status).to.equal(400);
    expect(nul.body.code).to.equal('validation_failed');
    expect(nul.body.errors[0].field).to.equal('currentPassword');
    const missingKey = await agent.post('/api/v1/me/password').send({ newPassword: 'the new password' });
    expect(missingKey.body.code).to.equal('validation_failed');
    expect((await login(request.agent(w.app), 'ada@example.test', PASSWORD)).status).to.equal(200);
  });

  it('answers 400 password_rejected, stating the rules, for a new password under 8 characters, and value_too_long over 256', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    const short = await agent.post('/api/v1/me/password').send({ currentPassword: PASSWORD, newPassword: 'short' });
    expect(short.status).to.equal(400);
    expect(short.body.code).to.equal('password_rejected');
    expect(short.body.detail).to.match(/8 to 256 characters/);
    const long = await agent.post('/api/v1/me/password').send({ currentPassword: PASSWORD, newPassword: 'x'.repeat(257) });
    expect(long.body.code).to.equal('value_too_long');
    expect((await agent.get('/api/v1/me')).status).to.equal(200);
  });

  it('lets a social-only account set a first password, whatever currentPassword says', async () => {
    const account = await w.accounts.service.createPasswordlessAccount({ email: 'social@example.test', emailVerified: true, displayName: 'Social' });
    const agent = request.agent(w.app);
    const signedIn = await agent.post('/api/v1/test/sign-in').send({ accountId: account!.id });
    expect(signedIn.body).to.include({ hasPassword: false, emailConfirmed: true });
    const res = await agent.post('/api/v1/me/password').send({ currentPassword: null, newPassword: 'first password' });
    expect(res.status).to.equal(204);
    expect((await agent.get('/api/v1/me')).body.hasPassword).to.equal(true);
    expect((await login(request.agent(w.app), 'social@example.test', 'first password')).status).to.equal(200);
  });

  it('answers 401 without a session', async () => {
    expect((await request(w.app).post('/api/v1/me/password').send({ currentPassword: null, newPassword: 'whatever1' })).status).to.equal(401);
  });
});

describe('POST /api/v1/me/email and confirm-email-change', () => {
  let w: World;
  before(async () => {
    w = await createWorld();
  });
  after(async () => w.close());
  beforeEach(async () => w.reset());

  it('mails a confirmation link to the new address and a reset link to the old; nothing changes until the link is followed', async () => {
    const { agent, userId } = await signedUp(w, 'ada@example.test');
    await w.deliver();
    w.smtp.clear();
    const res = await agent.post('/api/v1/me/email').send({ newEmail: 'Countess@Example.test' });
    expect(res.status).to.equal(204);
    await w.deliver();

    const toNew = mailsTo(w, 'Countess@Example.test');
    expect(toNew).to.have.length(1);
    const link = linkIn(toNew[0]!);
    expect(link.url.pathname).to.equal('/confirm-email-change');
    expect(Object.keys(link.params)).to.deep.equal(['userId', 'newEmail', 'token']);
    expect(link.params).to.include({ userId, newEmail: 'Countess@Example.test' });
    expect(link.url.search).to.contain('newEmail=Countess%40Example.test');

    const toOld = mailsTo(w, 'ada@example.test');
    expect(toOld).to.have.length(1);
    expect(toOld[0]!.text).to.contain('Countess@Example.test');
    const reset = linkIn(toOld[0]!);
    expect(reset.url.pathname).to.equal('/reset-password');
    expect(Object.keys(reset.params)).to.deep.equal(['email', 'token']);
    expect(reset.params.email).to.equal('ada@example.test');

    expect((await agent.get('/api/v1/me')).body.user.email).to.equal('ada@example.test');
    expect((await login(request.agent(w.app), 'countess@example.test')).status).to.equal(401);
  });

  it('confirming moves the login, marks it confirmed, revokes every other session and keeps the confirming one', async () => {
    const { agent, userId } = await signedUp(w, 'ada@example.test');
    const other = request.agent(w.app);
    await login(other, 'ada@example.test').expect(200);
    await agent.post('/api/v1/me/email').send({ newEmail: 'new@example.test' }).expect(204);
    await w.deliver();
    const { params } = linkIn(mailsTo(w, 'new@example.test')[0]!);

    const res = await agent.post('/api/v1/auth/confirm-email-change').send(params);
    expect(res.status).to.equal(204);
    const me = await agent.get('/api/v1/me');
    expect(me.status).to.equal(200);
    expect(me.body.user).to.deep.equal({ id: userId, email: 'new@example.test', displayName: 'Ada Lovelace' });
    expect(me.body.emailConfirmed).to.equal(true);
    expect((await other.get('/api/v1/me')).status).to.equal(401);
    expect((await login(request.agent(w.app), 'ada@example.test')).status).to.equal(401);
    expect((await login(request.agent(w.app), 'NEW@example.test')).status).to.equal(200);
  });

  it('confirming from a mail client without a session revokes every session', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    await agent.post('/api/v1/me/email').send({ newEmail: 'new@example.test' }).expect(204);
    await w.deliver();
    const { params } = linkIn(mailsTo(w, 'new@example.test')[0]!);
    await request(w.app).post('/api/v1/auth/confirm-email-change').send(params).expect(204);
    expect((await agent.get('/api/v1/me')).status).to.equal(401);
  });

  it('a session of another account that confirms does not keep or gain anything', async () => {
    const ada = await signedUp(w, 'ada@example.test');
    const bob = await signedUp(w, 'bob@example.test');
    await ada.agent.post('/api/v1/me/email').send({ newEmail: 'new@example.test' }).expect(204);
    await w.deliver();
    const { params } = linkIn(mailsTo(w, 'new@example.test')[0]!);
    await bob.agent.post('/api/v1/auth/confirm-email-change').send(params).expect(204);
    expect((await bob.agent.get('/api/v1/me')).body.user.email).to.equal('bob@example.test');
    expect((await ada.agent.get('/api/v1/me')).status).to.equal(401);
  });

  it('answers 400 invalid_token for a used link, a link past 48 hours, another address, a wrong token, or one a newer request retired', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    await agent.post('/api/v1/me/email').send({ newEmail: 'one@example.test' }).expect(204);
    await agent.post('/api/v1/me/email').send({ newEmail: 'two@example.test' }).expect(204);
    await w.deliver();
    const one = linkIn(mailsTo(w, 'one@example.test')[0]!).params;
    const two = linkIn(mailsTo(w, 'two@example.test')[0]!).params;

    for (const body of [
      // The older link: the newer request retired it.
      one,
      { ...two, newEmail: 'one@example.test' },
      { ...two, token: one.token },
      { ...two, token: 'x'.repeat(43) },
    ]) {
      const res = await request(w.app).post('/api/v1/auth/confirm-email-change').send(body);
      expect(res.status).to.equal(400);
      expect(res.body.code).to.equal('invalid_token');
    }
    w.clock.advance(48 * 3600_000);
    const expired = await request(w.app).post('/api/v1/auth/confirm-email-change').send(two);
    expect(expired.body.code).to.equal('invalid_token');
    w.clock.advance(-1000);
    await request(w.app).post('/api/v1/auth/confirm-email-change').send(two).expect(204);
    const again = await request(w.app).post('/api/v1/auth/confirm-email-change').send(two);
    expect(again.status).to.equal(400);
    expect(again.body.code).to.equal('invalid_token');
  });

  it('answers 204 for a taken address without revealing it, mails no link there, and the change cannot happen', async () => {
    await signedUp(w, 'taken@example.test');
    const { agent, userId } = await signedUp(w, 'ada@example.test');
    await w.deliver();
    w.smtp.clear();
    expect((await agent.post('/api/v1/me/email').send({ newEmail: 'TAKEN@example.test' })).status).to.equal(204);
    await w.deliver();
    expect(mailsTo(w, 'taken@example.test')).to.have.length(0);
    expect(mailsTo(w, 'ada@example.test')).to.have.length(1);
    expect(await w.db.knex('account_tokens').where({ accountId: userId, purpose: 'change_email' }).count({ n: '*' }).first()).to.deep.equal({ n: '0' });
  });

  it('answers invalid_token when the new address was taken after the link went out', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    await agent.post('/api/v1/me/email').send({ newEmail: 'new@example.test' }).expect(204);
    await w.deliver();
    const { params } = linkIn(mailsTo(w, 'new@example.test')[0]!);
    await signedUp(w, 'New@example.test');
    const res = await request(w.app).post('/api/v1/auth/confirm-email-change').send(params);
    expect(res.status).to.equal(400);
    expect(res.body.code).to.equal('invalid_token');
    expect((await agent.get('/api/v1/me')).body.user.email).to.equal('ada@example.test');
  });

  it('a password reset through the heads-up link spends the pending change: its link answers 400 invalid_token', async () => {
    const { userId } = await signedUp(w, 'ada@example.test');
    // Someone else holding a session of Ada's asks for the login to move to their address.
    const intruder = request.agent(w.app);
    await login(intruder, 'ada@example.test').expect(200);
    await intruder.post('/api/v1/me/email').send({ newEmail: 'thief@example.test' }).expect(204);
    await w.deliver();
    const change = linkIn(mailsTo(w, 'thief@example.test')[0]!).params;
    const [notice] = mailsTo(w, 'ada@example.test', /about to change/i);

    await request(w.app)
      .post('/api/v1/auth/reset-password')
      .send({ ...linkIn(notice!).params, newPassword: 'mine again!' })
      .expect(204);
    const res = await request(w.app).post('/api/v1/auth/confirm-email-change').send(change);
    expect(res.status).to.equal(400);
    expect(res.body.code).to.equal('invalid_token');
    expect((await intruder.get('/api/v1/me')).status).to.equal(401);
    const owner = request.agent(w.app);
    const me = await login(owner, 'ada@example.test', 'mine again!');
    expect(me.status).to.equal(200);
    expect(me.body.user).to.include({ id: userId, email: 'ada@example.test' });
    expect((await login(request.agent(w.app), 'thief@example.test', 'mine again!')).status).to.equal(401);

    // A change asked for after the reset works as usual.
    w.smtp.clear();
    await owner.post('/api/v1/me/email').send({ newEmail: 'countess@example.test' }).expect(204);
    await w.deliver();
    await request(w.app)
      .post('/api/v1/auth/confirm-email-change')
      .send(linkIn(mailsTo(w, 'countess@example.test')[0]!).params)
      .expect(204);
  });

  it('a password change retires the pending change and every other open link, the heads-up reset link included, and mails a notice', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    await agent.post('/api/v1/me/email').send({ newEmail: 'thief@example.test' }).expect(204);
    await w.deliver();
    const change = linkIn(mailsTo(w, 'thief@example.test')[0]!).params;
    const [notice] = mailsTo(w, 'ada@example.test', /about to change/i);
    const [confirm] = mailsTo(w, 'ada@example.test', /confirm your e-mail/i);

    await agent.post('/api/v1/me/password').send({ currentPassword: PASSWORD, newPassword: 'the new password' }).expect(204);
    const res = await request(w.app).post('/api/v1/auth/confirm-email-change').send(change);
    expect(res.status).to.equal(400);
    expect(res.body.code).to.equal('invalid_token');
    expect((await agent.get('/api/v1/me')).body.user.email).to.equal('ada@example.test');
    // Every link issued before the change is dead (the owner asks for a new one with forgot-password).
    const reset = await request(w.app)
      .post('/api/v1/auth/reset-password')
      .send({ ...linkIn(notice!).params, newPassword: 'mine again!' });
    expect(reset.body.code).to.equal('invalid_token');
    const confirmed = await request(w.app).post('/api/v1/auth/confirm-email').send(linkIn(confirm!).params);
    expect(confirmed.body.code).to.equal('invalid_token');
    await w.deliver();
    const [changed] = mailsTo(w, 'ada@example.test', /password was changed/i);
    expect(changed, 'password-changed notice').to.not.equal(undefined);
  });

  it('answers 400 email_not_an_address for something that is not one, and value_too_long past 254 characters', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    for (const newEmail of ['nope', 'a@b', '@example.test', 'a b@example.test']) {
      const res = await agent.post('/api/v1/me/email').send({ newEmail });
      expect(res.status, newEmail).to.equal(400);
      expect(res.body.code, newEmail).to.equal('email_not_an_address');
    }
    const long = await agent.post('/api/v1/me/email').send({ newEmail: `${'a'.repeat(64)}@${'b'.repeat(186)}.test` });
    expect(long.body.code).to.equal('value_too_long');
  });

  it('answers 401 without a session', async () => {
    expect((await request(w.app).post('/api/v1/me/email').send({ newEmail: 'x@example.test' })).status).to.equal(401);
  });
});
