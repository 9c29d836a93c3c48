import type { DeclaredReads } from '@svc/db';
import { RequestReads } from '@svc/http-kit';
import { expect } from 'chai';
import request from 'supertest';
import { createWorld, dbQueries, login, PASSWORD, sessionCookie, signedUp, type World } from './helpers.js';

const DAY = 24 * 3600_000;

describe('sessions: cookie, security stamp, renewal, CSRF', () => {
  let w: World;
  before(async () => {
    w = await createWorld();
  });
  after(async () => w.close());
  beforeEach(async () => w.reset());

  it('sets service_session HttpOnly, SameSite=Lax, Path=/, for 30 days, without Secure when COOKIE_SECURE is off', async () => {
    const res = await request(w.app).post('/api/v1/auth/register').send({ email: 'ada@example.test', password: PASSWORD, displayName: 'Ada' });
    const cookie = sessionCookie(res)!;
    const attrs = cookie.split(';').map((a) => a.trim());
    expect(attrs).to.include('HttpOnly');
    expect(attrs).to.include('SameSite=Lax');
    expect(attrs).to.include('Path=/');
    expect(attrs).to.not.include('Secure');
    // On the service's clock (a ManualClock days away from the wall clock), like the session row.
    const expires = Date.parse(attrs.find((a) => a.startsWith('Expires='))!.slice('Expires='.length));
    expect(new Date(expires).toISOString()).to.equal(new Date(Math.floor((w.clock.now().getTime() + 30 * DAY) / 1000) * 1000).toISOString());
  });

  it('marks the cookie Secure when COOKIE_SECURE is on (request arriving over HTTPS through a trusted proxy)', async () => {
    const { app } = w.another({ cookieSecure: true });
    app.set('trust proxy', true);
    const res = await request(app)
      .post('/api/v1/auth/register')
      .set('X-Forwarded-Proto', 'https')
      .send({ email: 'secure@example.test', password: PASSWORD, displayName: 'S' });
    expect(res.status).to.equal(200);
    expect(
      sessionCookie(res)!
        .split(';')
        .map((a) => a.trim()),
    ).to.include('Secure');
  });

  it('answers 401 unauthenticated without a session, with a forged cookie, and with a cookie of a deleted account', async () => {
    const none = await request(w.app).get('/api/v1/me');
    expect(none.status).to.equal(401);
    expect(none.body.code).to.equal('unauthenticated');
    const forged = await request(w.app).get('/api/v1/me').set('Cookie', 'service_session=s%3Aabc.def');
    expect(forged.status).to.equal(401);

    const { agent, userId } = await signedUp(w, 'ada@example.test');
    expect((await agent.get('/api/v1/me')).status).to.equal(200);
    await w.db.knex('accounts').where({ id: userId }).delete();
    const gone = await agent.get('/api/v1/me');
    expect(gone.status).to.equal(401);
    expect(gone.body.code).to.equal('unauthenticated');
  });

  it('answers GET /me in two queries and writes nothing on an ordinary request', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    const before = await w.db.knex('account_sessions').select('sid', 'expire', w.db.knex.raw('sess::text as sess'));
    w.clock.advance(3600_000);
    const res = await agent.get('/api/v1/me');
    expect(res.status).to.equal(200);
    expect(res.headers['cache-control']).to.equal('no-store');
    expect(res.headers['server-timing']).to.match(/db;dur=[\d.]+;desc="2 queries"/);
    expect(dbQueries(res)).to.equal(2);
    expect(sessionCookie(res)).to.equal(undefined);
    const after = await w.db.knex('account_sessions').select('sid', 'expire', w.db.knex.raw('sess::text as sess'));
    expect(after).to.deep.equal(before);
  });

  it('renews the session at most once a day: the expiry moves 30 days past the renewal and the cookie is re-sent', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    const [row0] = await w.db.knex('account_sessions').select('expire');
    w.clock.advance(DAY - 1000);
    const early = await agent.get('/api/v1/me');
    expect(sessionCookie(early)).to.equal(undefined);
    w.clock.advance(2000);
    const renewed = await agent.get('/api/v1/me');
    expect(renewed.status).to.equal(200);
    expect(sessionCookie(renewed)).to.be.a('string');
    const [row1] = await w.db.knex('account_sessions').select('expire');
    expect(row1.expire.getTime() - row0.expire.getTime()).to.equal(DAY + 1000);
    const next = await agent.get('/api/v1/me');
    expect(sessionCookie(next)).to.equal(undefined);
    expect(dbQueries(next)).to.equal(2);
  });

  it('ends a session 30 days after its last use', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    w.clock.advance(29 * DAY);
    expect((await agent.get('/api/v1/me')).status).to.equal(200); // renews
    w.clock.advance(30 * DAY - 1000);
    expect((await agent.get('/api/v1/me')).status).to.equal(200);
    w.clock.advance(30 * DAY + 1000);
    expect((await agent.get('/api/v1/me')).status).to.equal(401);
    expect(await w.accounts.service.pruneSessions()).to.equal(1);
  });

  it('logout answers 204, clears the cookie and rotates the stamp: every session of the account fails its next request', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    const other = request.agent(w.app);
    await login(other, 'ada@example.test').expect(200);
    const stolen = request(w.app);
    const cookie = (await login(request.agent(w.app), 'ada@example.test')).headers['set-cookie'] as unknown as string[];

    const res = await agent.post('/api/v1/auth/logout');
    expect(res.status).to.equal(204);
    const cleared = sessionCookie(res)!;
    expect(cleared).to.match(/Expires=Thu, 01 Jan 1970/);
    expect((await agent.get('/api/v1/me')).status).to.equal(401);
    expect((await other.get('/api/v1/me')).status).to.equal(401);
    expect((await stolen.get('/api/v1/me').set('Cookie', cookie[0]!.split(';')[0]!)).status).to.equal(401);
    // Signing in again works, with the new stamp.
    await login(other, 'ada@example.test').expect(200);
    expect((await other.get('/api/v1/me')).status).to.equal(200);
  });

  it('logout needs a session (401 otherwise)', async () => {
    const res = await request(w.app).post('/api/v1/auth/logout');
    expect(res.status).to.equal(401);
    expect(res.body.code).to.equal('unauthenticated');
  });

  it('keeps the other account signed in when one account logs out', async () => {
    const ada = await signedUp(w, 'ada@example.test');
    const bob = await signedUp(w, 'bob@example.test');
    await ada.agent.post('/api/v1/auth/logout').expect(204);
    expect((await bob.agent.get('/api/v1/me')).status).to.equal(200);
  });

  it('refuses a cookie-carrying state change from a foreign Origin (403 forbidden) and a non-JSON one (400)', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    const foreign = await agent.patch('/api/v1/me').set('Origin', 'https://evil.example').send({ displayName: 'Hacked' });
    expect(foreign.status).to.equal(403);
    expect(foreign.body.code).to.equal('forbidden');
    const same = await agent.patch('/api/v1/me').set('Origin', 'https://meals.example.test').send({ displayName: 'Fine' });
    expect(same.status).to.equal(200);
    const form = await agent.patch('/api/v1/me').type('form').send('displayName=Formed');
    expect(form.status).to.equal(400);
    expect(form.body.code).to.equal('validation_failed');
    expect((await agent.get('/api/v1/me')).body.user.displayName).to.equal('Fine');
  });

  it('keeps sessions in PostgreSQL, readable by another instance of the service', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    const cookie = (await login(agent, 'ada@example.test')).headers['set-cookie'] as unknown as string[];
    const { app } = w.another();
    expect((await request(app).get('/api/v1/me').set('Cookie', cookie[0]!.split(';')[0]!)).status).to.equal(200);
  });

  describe("with the memberships composed into the session statement by the host's read kernel", () => {
    // A stand-in for the kernel (DeclaredReads), over this package's own table only: one membership
    // named after the account, in the `memberships` column, so the answer shows it came from the
    // session statement.
    const reads: DeclaredReads = {
      size: 0,
      match: () => undefined,
      values: () => [],
      compose: (principal) =>
        `select kp.*, (select json_build_array(json_build_object('householdId', '00000000-0000-4000-8000-000000000001', 'householdName', 'Home of ' || x.display_name,
                 'role', 'Owner', 'memberId', null)) from accounts x where x.id = kp.${principal.accountColumn}) as memberships from (${principal.text}) kp`,
    };

    it('answers GET /me in ONE query, with the memberships the statement loaded, and writes nothing', async () => {
      const { app } = w.another({}, { requestReads: new RequestReads({ knex: w.db.knex, clock: w.clock, kernel: reads }) });
      const agent = request.agent(app);
      expect((await agent.post('/api/v1/auth/register').send({ email: 'one@example.test', password: PASSWORD, displayName: 'One' })).status).to.equal(200);
      const before = await w.db.knex('account_sessions').select('sid', 'expire', w.db.knex.raw('sess::text as sess'));
      w.clock.advance(3600_000);
      const res = await agent.get('/api/v1/me');
      expect(res.status).to.equal(200);
      expect(dbQueries(res)).to.equal(1);
      expect(res.body.memberships).to.deep.equal([
        { householdId: '00000000-0000-4000-8000-000000000001', householdName: 'Home of One', role: 'Owner', memberId: null },
      ]);
      expect(sessionCookie(res)).to.equal(undefined);
      await w.accounts.service.sessionsIdle();
      expect(await w.db.knex('account_sessions').select('sid', 'expire', w.db.knex.raw('sess::text as sess'))).to.deep.equal(before);
    });

    it('renews on the first read past a day (the row written, the cookie re-sent, the read still lent), then reads in one query again', async () => {
      const { app } = w.another({}, { requestReads: new RequestReads({ knex: w.db.knex, clock: w.clock, kernel: reads }) });
      const agent = request.agent(app);
      expect((await agent.post('/api/v1/auth/register').send({ email: 'renew@example.test', password: PASSWORD, displayName: 'R' })).status).to.equal(200);
      const [row0] = await w.db.knex('account_sessions').select('expire');
      w.clock.advance(DAY + 1000);
      const renewed = await agent.get('/api/v1/me');
      expect(renewed.status).to.equal(200);
      expect(sessionCookie(renewed)).to.be.a('string');
      expect(renewed.body.memberships).to.have.length(1);
      const [row1] = await w.db.knex('account_sessions').select('expire');
      expect(row1.expire.getTime() - row0.expire.getTime()).to.equal(DAY + 1000);
      const next = await agent.get('/api/v1/me');
      expect(sessionCookie(next)).to.equal(undefined);
      expect(dbQueries(next)).to.equal(1);
    });

    it('a stamp rotated elsewhere ends the session on its next GET', async () => {
      const { app } = w.another({}, { requestReads: new RequestReads({ knex: w.db.knex, clock: w.clock, kernel: reads }) });
      const agent = request.agent(app);
      const other = request.agent(app);
      expect((await agent.post('/api/v1/auth/register').send({ email: 'stamp@example.test', password: PASSWORD, displayName: 'S' })).status).to.equal(200);
      await login(other, 'stamp@example.test').expect(200);
      expect((await agent.get('/api/v1/me')).status).to.equal(200);
      expect((await other.post('/api/v1/auth/logout')).status).to.equal(204);
      const res = await agent.get('/api/v1/me');
      expect(res.status).to.equal(401);
      expect(res.body.code).to.equal('unauthenticated');
    });
  });
});
