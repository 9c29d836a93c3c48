/**
 * What the session module owns now that express-session is gone: the cookie's signature, the
 * sign-in's new id, the daily renewal written once, and the cookies and rows the express-session
 * release wrote.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as cookieModule from 'cookie';
import signature from 'cookie-signature';
import request from 'supertest';
import { AccountSessionStore } from '../src/AccountSessionStore.js';
import { SESSION_TTL_MS } from '../src/sessions.js';
import { createWorld, dbQueries, login, sessionCookie, signedUp, type World } from './helpers.js';

const DAY = 24 * 3600_000;

/** `name=value` of a Set-Cookie line. */
const pair = (setCookie: string) => setCookie.split(';')[0]!;

describe('the session module: signed cookie, sign-in, renewal, cookies of the express-session release', () => {
  let w: World;
  before(async () => {
    w = await createWorld();
  });
  after(async () => w.close());
  beforeEach(async () => w.reset());

  it('a cookie whose signature or id was tampered with is no session (401), and costs no statement', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    const good = pair(sessionCookie(await login(agent, 'ada@example.test'))!);
    expect((await request(w.app).get('/api/v1/me').set('Cookie', good)).status).to.equal(200);
    const value = decodeURIComponent(good.slice(good.indexOf('=') + 1));
    const [sid, mac] = value.slice(2).split('.') as [string, string];
    const flip = (s: string) => (s.endsWith('A') ? `${s.slice(0, -1)}B` : `${s.slice(0, -1)}A`);
    for (const tampered of [`s:${sid}.${flip(mac)}`, `s:${flip(sid)}.${mac}`, `s:${sid}`, sid, `${sid}.${mac}`]) {
      const res = await request(w.app).get('/api/v1/me').set('Cookie', cookieModule.serialize('service_session', tampered));
      expect(res.status, tampered).to.equal(401);
      expect(dbQueries(res), tampered).to.equal(0);
    }
    // Signed with another secret.
    const foreign = cookieModule.serialize('service_session', `s:${signature.sign(sid, 'another-secret')}`);
    expect((await request(w.app).get('/api/v1/me').set('Cookie', foreign)).status).to.equal(401);
  });

  it('a sign-in issues a new id, deletes the session the request carried, and the old cookie stops working', async () => {
    const { agent, userId } = await signedUp(w, 'ada@example.test');
    const [before] = await w.db.knex('account_sessions').where({ accountId: userId }).select('sid');
    const res = await login(agent, 'ada@example.test').expect(200);
    const fresh = pair(sessionCookie(res)!);
    const rows = await w.db.knex('account_sessions').where({ accountId: userId }).select('sid');
    expect(rows).to.have.length(1);
    expect(rows[0].sid).to.not.equal(before.sid);
    expect(fresh).to.include(encodeURIComponent(`s:${rows[0].sid}.`));
    // The cookie the agent held before the sign-in answers 401; the new one 200.
    const stale = cookieModule.serialize('service_session', `s:${signature.sign(before.sid, w.config.sessionSecret)}`);
    expect((await request(w.app).get('/api/v1/me').set('Cookie', stale)).status).to.equal(401);
    expect((await request(w.app).get('/api/v1/me').set('Cookie', fresh)).status).to.equal(200);
  });

  it('a renewal due with parallel requests of one session writes the row once; each answer that found it due re-sends the cookie', async () => {
    const { agent, userId } = await signedUp(w, 'ada@example.test');
    const [row0] = await w.db.knex('account_sessions').where({ accountId: userId }).select('expire');
    const ordinary = dbQueries(await agent.get('/api/v1/me'));
    w.clock.advance(DAY + 1000);
    const answers = await Promise.all(Array.from({ length: 6 }, () => agent.get('/api/v1/me')));
    for (const res of answers) expect(res.status).to.equal(200);
    expect(answers.filter((res) => sessionCookie(res) !== undefined)).to.not.be.empty;
    // One request ran the UPDATE; the others waited for it, or read the row it wrote.
    expect(answers.map(dbQueries).reduce((a, b) => a + b, 0)).to.equal(6 * ordinary + 1);
    const [row1] = await w.db.knex('account_sessions').where({ accountId: userId }).select('expire');
    expect(row1.expire.getTime() - row0.expire.getTime()).to.equal(DAY + 1000);
    // Another instance that read the row before the renewal landed writes nothing (the statement's condition).
    const store = new AccountSessionStore({ knex: w.db.knex, clock: w.clock, ttlMs: SESSION_TTL_MS });
    const [{ sid, sess }] = await w.db.knex('account_sessions').where({ accountId: userId }).select('sid', 'sess');
    expect(await store.renew(sid, { ...sess, renewedAt: w.clock.now().toISOString() }, new Date(0).toISOString())).to.equal(false);
    expect(await store.renew(sid, { ...sess, renewedAt: w.clock.now().toISOString() }, sess.renewedAt)).to.equal(true);
  });

  it('loads a session the express-session release wrote (its cookie and its row), and renews it', async () => {
    const { userId } = await signedUp(w, 'ada@example.test');
    const [account] = await w.db.knex('accounts').where({ id: userId }).select('securityStamp');
    const now = w.clock.now();
    const sid = 'Qm9yLjVrY2JxZHZtY3A3c2Z4eWJvY2pnaGZr';
    // The row as express-session + connect-pg-simple saved it: the JSON with express-session's cookie.
    const sess = {
      cookie: {
        originalMaxAge: SESSION_TTL_MS,
        expires: new Date(now.getTime() + SESSION_TTL_MS).toISOString(),
        secure: false,
        httpOnly: true,
        path: '/',
        sameSite: 'lax',
      },
      accountId: userId,
      stamp: account.securityStamp,
      renewedAt: new Date(now.getTime() - 2 * DAY).toISOString(),
      method: 'password',
      signedInAt: new Date(now.getTime() - 2 * DAY).toISOString(),
    };
    await w.db.knex('account_sessions').insert({
      sid,
      sess: JSON.stringify(sess),
      expire: new Date(now.getTime() + SESSION_TTL_MS - 2 * DAY),
      accountId: userId,
      publicId: randomUUID(),
      createdAt: new Date(now.getTime() - 2 * DAY),
      lastSeenAt: new Date(now.getTime() - 2 * DAY),
      method: 'password',
    });
    // The cookie as express-session's setcookie made it: `s:` + cookie-signature, URI-encoded.
    const cookie = cookieModule.serialize('service_session', `s:${signature.sign(sid, w.config.sessionSecret)}`);
    const res = await request(w.app).get('/api/v1/me').set('Cookie', cookie);
    expect(res.status).to.equal(200);
    expect(res.body.user.id).to.equal(userId);
    // Due for renewal: the same id, re-sent, and the row keeps its layout.
    expect(pair(sessionCookie(res)!)).to.equal(cookie);
    const [row] = await w.db.knex('account_sessions').where({ sid }).select('sess', 'expire');
    expect(row.expire.getTime()).to.equal(now.getTime() + SESSION_TTL_MS);
    expect(Object.keys(row.sess).sort()).to.deep.equal(['accountId', 'cookie', 'method', 'renewedAt', 'signedInAt', 'stamp']);
    expect(row.sess.renewedAt).to.equal(now.toISOString());
    expect((await request(w.app).get('/api/v1/me/sessions').set('Cookie', cookie)).body.items).to.have.length(2);
  });

  it('a session past its expiry is refused and not renewed', async () => {
    const { agent, userId } = await signedUp(w, 'ada@example.test');
    w.clock.advance(SESSION_TTL_MS + 1000);
    const res = await agent.get('/api/v1/me');
    expect(res.status).to.equal(401);
    expect(sessionCookie(res)).to.equal(undefined);
    const [row] = await w.db.knex('account_sessions').where({ accountId: userId }).select('sess');
    expect(Date.parse(row.sess.renewedAt)).to.be.below(w.clock.now().getTime() - SESSION_TTL_MS);
  });
});
