import { expect } from 'chai';
import request from 'supertest';
import { createWorld, linkIn, login, mailsTo, PASSWORD, register, serverTimingSteps, sessionCookie, signedUp, type World } from './helpers.js';

describe('POST /api/v1/auth/login and the lockout', () => {
  let w: World;
  before(async () => {
    w = await createWorld();
  });
  after(async () => w.close());
  beforeEach(async () => w.reset());

  it('answers 200 with the MeResponse and sets the session cookie; the address is matched case-insensitively', async () => {
    await register(request(w.app), 'ada@example.test');
    const agent = request.agent(w.app);
    const res = await login(agent, '  ADA@EXAMPLE.test');
    expect(res.status).to.equal(200);
    expect(res.headers['cache-control']).to.equal('no-store');
    expect(res.body.user).to.include({ email: 'ada@example.test', displayName: 'Ada Lovelace' });
    expect(res.body).to.include({ emailConfirmed: false, hasPassword: true, isPlatformAdmin: false, serverNow: '2026-11-22T09:00:00.000Z' });
    expect(res.body.memberships).to.deep.equal([]);
    expect(sessionCookie(res)).to.be.a('string');
    expect((await agent.get('/api/v1/me')).body).to.deep.equal(res.body);
  });

  it('answers 401 invalid_credentials for a wrong password and for an unknown address alike, each costing one password hash', async () => {
    await register(request(w.app), 'ada@example.test');
    const wrong = await login(request.agent(w.app), 'ada@example.test', 'wrong password');
    const unknown = await login(request.agent(w.app), 'nobody@example.test', PASSWORD);
    for (const res of [wrong, unknown]) {
      expect(res.status).to.equal(401);
      expect(res.body.code).to.equal('invalid_credentials');
      expect(res.headers['content-type']).to.match(/^application\/problem\+json/);
      expect(sessionCookie(res)).to.equal(undefined);
      expect(serverTimingSteps(res).filter((s) => s === 'hash-password')).to.have.length(1);
    }
    expect(wrong.body.detail).to.equal(unknown.body.detail);
  });

  it('answers 401 for an empty password, and 400 for an unreadable body', async () => {
    await register(request(w.app), 'ada@example.test');
    expect((await login(request.agent(w.app), 'ada@example.test', '')).status).to.equal(401);
    const missing = await request(w.app).post('/api/v1/auth/login').send({ email: 'ada@example.test' });
    expect(missing.status).to.equal(400);
    expect(missing.body.code).to.equal('validation_failed');
    const long = await login(request.agent(w.app), 'ada@example.test', 'x'.repeat(257));
    expect(long.status).to.equal(400);
    expect(long.body.code).to.equal('value_too_long');
    const broken = await request(w.app).post('/api/v1/auth/login').set('Content-Type', 'application/json').send('{"email":');
    expect(broken.status).to.equal(400);
    expect(broken.body.code).to.equal('validation_failed');
  });

  it('issues a new session id at every sign-in, also over an existing session', async () => {
    await register(request(w.app), 'ada@example.test');
    const agent = request.agent(w.app);
    const first = sessionCookie(await login(agent, 'ada@example.test'));
    const second = sessionCookie(await login(agent, 'ada@example.test'));
    expect(first).to.be.a('string');
    expect(second).to.be.a('string');
    expect(second!.split(';')[0]).to.not.equal(first!.split(';')[0]);
    // The session the agent held before is gone from the store.
    expect(await w.db.knex('account_sessions').count({ n: '*' }).first()).to.deep.equal({ n: '2' }); // register's own + the latest login
  });

  it('answers 423 account_locked after five wrong passwords, even with the right one, until the lock period ends', async () => {
    await register(request(w.app), 'ada@example.test');
    for (let i = 1; i <= 5; i++) {
      const res = await login(request.agent(w.app), 'ada@example.test', `wrong ${i}`);
      expect(res.status, `attempt ${i}`).to.equal(401);
    }
    const locked = await login(request.agent(w.app), 'ADA@example.test', PASSWORD);
    expect(locked.status).to.equal(423);
    expect(locked.body.code).to.equal('account_locked');
    expect(sessionCookie(locked)).to.equal(undefined);
    expect(locked.headers['retry-after']).to.equal('300'); // the whole lock is left

    w.clock.advanceSeconds(299);
    const last = await login(request.agent(w.app), 'ada@example.test', PASSWORD);
    expect(last.status).to.equal(423);
    expect(last.headers['retry-after']).to.equal('1');
    w.clock.advanceSeconds(1);
    expect((await login(request.agent(w.app), 'ada@example.test', PASSWORD)).status).to.equal(200);
  });

  it('walks an unknown address through the same 401 → 423 path', async () => {
    for (let i = 1; i <= 5; i++) expect((await login(request.agent(w.app), 'ghost@example.test', 'guess')).status).to.equal(401);
    const res = await login(request.agent(w.app), 'ghost@example.test', 'guess');
    expect(res.status).to.equal(423);
    expect(res.body.code).to.equal('account_locked');
  });

  it('does not extend a lock with attempts made during it', async () => {
    await register(request(w.app), 'ada@example.test');
    for (let i = 0; i < 5; i++) await login(request.agent(w.app), 'ada@example.test', 'wrong');
    w.clock.advanceSeconds(200);
    for (let i = 0; i < 5; i++) expect((await login(request.agent(w.app), 'ada@example.test', 'wrong')).status).to.equal(423);
    w.clock.advanceSeconds(100);
    expect((await login(request.agent(w.app), 'ada@example.test', PASSWORD)).status).to.equal(200);
  });

  it('resets the count after a successful login', async () => {
    await register(request(w.app), 'ada@example.test');
    for (let i = 0; i < 4; i++) await login(request.agent(w.app), 'ada@example.test', 'wrong');
    expect((await login(request.agent(w.app), 'ada@example.test', PASSWORD)).status).to.equal(200);
    for (let i = 0; i < 4; i++) expect((await login(request.agent(w.app), 'ada@example.test', 'wrong')).status).to.equal(401);
    expect((await login(request.agent(w.app), 'ada@example.test', PASSWORD)).status).to.equal(200);
  });

  it('lifts the lock when the password is reset', async () => {
    await register(request(w.app), 'ada@example.test');
    for (let i = 0; i < 5; i++) await login(request.agent(w.app), 'ada@example.test', 'wrong');
    expect((await login(request.agent(w.app), 'ada@example.test', PASSWORD)).status).to.equal(423);
    await request(w.app).post('/api/v1/auth/forgot-password').send({ email: 'ada@example.test' }).expect(204);
    await w.deliver();
    const { params } = linkIn(mailsTo(w, 'ada@example.test', /reset/i)[0]!);
    await request(w.app)
      .post('/api/v1/auth/reset-password')
      .send({ email: params.email, token: params.token, newPassword: 'a brand new password' })
      .expect(204);
    expect((await login(request.agent(w.app), 'ada@example.test', 'a brand new password')).status).to.equal(200);
  });

  it('refuses a social-only account (no password) with 401 and one hash', async () => {
    const account = await w.accounts.service.createPasswordlessAccount({ email: 'social@example.test', emailVerified: true, displayName: 'Social' });
    expect(account).to.not.equal(undefined);
    const res = await login(request.agent(w.app), 'social@example.test', PASSWORD);
    expect(res.status).to.equal(401);
    expect(serverTimingSteps(res)).to.include('hash-password');
  });

  it('signs in through the seam social sign-in will use (sessions.signIn)', async () => {
    const { userId } = await signedUp(w, 'ada@example.test');
    const agent = request.agent(w.app);
    const res = await agent.post('/api/v1/test/sign-in').send({ accountId: userId });
    expect(res.status).to.equal(200);
    expect(sessionCookie(res)).to.be.a('string');
    expect((await agent.get('/api/v1/me')).body.user.id).to.equal(userId);
  });
});
