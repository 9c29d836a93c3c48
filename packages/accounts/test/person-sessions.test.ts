import { randomUUID } from 'node:crypto';
import { compileValue, type Pojo } from '@svc/db';
import { newRequestContext, runWithContext } from '@svc/http-kit';
import { expect } from 'chai';
import request from 'supertest';
import { AccountSessionStore } from '../src/AccountSessionStore.js';
import { ObjectionPersonStore, sessionsRead } from '../src/index.js';
import { SESSION_TTL_MS } from '../src/sessions.js';
import { createWorld, dbQueries, login, PASSWORD, sessionCookie, signedUp, type World } from './helpers.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('a person’s sessions: GET /me/sessions, DELETE /me/sessions/{id}, DELETE /me/sessions', () => {
  let w: World;
  before(async () => {
    w = await createWorld();
  });
  beforeEach(async () => w.reset());
  after(async () => w?.close());

  const sidOf = (res: request.Response) =>
    /^s:([^.]+)\./.exec(decodeURIComponent(/service_session=([^;]+)/.exec(sessionCookie(res) ?? '')?.[1] ?? ''))?.[1] ?? '';

  it('lists the caller’s live sessions newest first, with a handle that is not the session id, the sign-in method, a trimmed and bounded User-Agent', async () => {
    const agent = request.agent(w.app);
    const reg = await agent
      .post('/api/v1/auth/register')
      .set('User-Agent', '   PhoneApp/1.0 (iPhone)   ')
      .send({ email: 'ada@example.test', password: PASSWORD, displayName: 'Ada' });
    expect(reg.status).to.equal(200);
    const firstSid = sidOf(reg);
    w.clock.advance(60_000);
    const laptop = request.agent(w.app);
    const signed = await login(laptop, 'ada@example.test').set('User-Agent', `Laptop ${'x'.repeat(400)}`);
    expect(signed.status).to.equal(200);
    const secondSid = sidOf(signed);

    const res = await laptop.get('/api/v1/me/sessions');
    expect(res.status).to.equal(200);
    expect(res.headers['cache-control']).to.equal('no-store');
    const items = res.body.items as Record<string, unknown>[];
    expect(items).to.have.length(2);
    expect(items.map((s) => s.current)).to.deep.equal([true, false]);
    expect(items[0]).to.include({ createdAt: '2026-11-22T09:01:00.000Z', lastSeenAt: '2026-11-22T09:01:00.000Z', method: 'password' });
    expect(items[0]!.userAgent).to.equal(`Laptop ${'x'.repeat(249)}`);
    expect(items[1]).to.include({ createdAt: '2026-11-22T09:00:00.000Z', method: 'password', userAgent: 'PhoneApp/1.0 (iPhone)' });
    for (const s of items) {
      expect(Object.keys(s).sort()).to.deep.equal(['createdAt', 'current', 'id', 'lastSeenAt', 'method', 'userAgent']);
      expect(s.id).to.match(UUID);
    }
    // No secret in the answer: neither session id appears anywhere in it.
    const sids = (await w.db.knex('account_sessions').select('sid')).map((r: { sid: string }) => r.sid).sort();
    expect(sids).to.deep.equal([firstSid, secondSid].sort());
    expect(JSON.stringify(res.body)).to.not.include(firstSid).and.not.include(secondSid);

    // The other session sees itself as current.
    const fromPhone = await agent.get('/api/v1/me/sessions');
    expect(fromPhone.body.items.map((s: { id: string; current: boolean }) => [s.id, s.current])).to.deep.equal([
      [items[0]!.id, false],
      [items[1]!.id, true],
    ]);
  });

  it('records the method of a social sign-in and keeps method and sign-in time when a password change re-issues the session', async () => {
    const { userId } = await signedUp(w, 'ada@example.test');
    const phone = request.agent(w.app);
    expect((await phone.post('/api/v1/test/sign-in').send({ accountId: userId, method: 'apple' })).status).to.equal(200);
    w.clock.advance(5 * 60_000);
    const changed = await phone.post('/api/v1/me/password').send({ currentPassword: PASSWORD, newPassword: 'another fine password' });
    expect(changed.status).to.equal(204);
    const res = await phone.get('/api/v1/me/sessions');
    // The password change ended every other session; this one kept how and when it signed in.
    expect(res.body.items).to.have.length(1);
    expect(res.body.items[0]).to.include({ method: 'apple', createdAt: '2026-11-22T09:00:00.000Z', current: true });
  });

  it('writes lastSeenAt at most once a minute, outside the request: GET /me stays two queries', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    const lastSeen = async () => {
      await w.accounts.service.sessionsIdle();
      return (await w.db.knex('account_sessions').select('lastSeenAt').first()).lastSeenAt.toISOString();
    };
    expect(await lastSeen()).to.equal('2026-11-22T09:00:00.000Z');
    w.clock.advance(59_000);
    expect(dbQueries(await agent.get('/api/v1/me'))).to.equal(2);
    expect(await lastSeen()).to.equal('2026-11-22T09:00:00.000Z');
    w.clock.advance(1_000);
    const due = await agent.get('/api/v1/me');
    expect(due.status).to.equal(200);
    expect(dbQueries(due)).to.equal(2);
    expect(await lastSeen()).to.equal('2026-11-22T09:01:00.000Z');
    w.clock.advance(30_000);
    await agent.get('/api/v1/me');
    expect(await lastSeen()).to.equal('2026-11-22T09:01:00.000Z');
    const listed = await agent.get('/api/v1/me/sessions');
    expect(listed.body.items[0].lastSeenAt).to.equal('2026-11-22T09:01:00.000Z');
  });

  it('concurrent requests in the same minute write lastSeenAt once', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    w.clock.advance(120_000);
    await w.db.knex.raw('create table touch_log (at timestamptz)');
    await w.db.knex.raw(`create function log_touch() returns trigger language plpgsql as $$
      begin insert into touch_log values (new.last_seen_at); return new; end $$`);
    await w.db.knex.raw('create trigger touch_logger after update of last_seen_at on account_sessions for each row execute function log_touch()');
    try {
      const answers = await Promise.all(Array.from({ length: 6 }, () => agent.get('/api/v1/me')));
      expect(answers.map((r) => r.status)).to.deep.equal([200, 200, 200, 200, 200, 200]);
      await w.accounts.service.sessionsIdle();
      const { rows } = await w.db.knex.raw('select count(*)::int as n from touch_log');
      expect(rows[0].n).to.equal(1);
    } finally {
      await w.db.knex.raw('drop trigger touch_logger on account_sessions; drop function log_touch(); drop table touch_log');
    }
  });

  it('ends another session at its next request, on every instance; the caller stays signed in', async () => {
    const { agent, userId } = await signedUp(w, 'ada@example.test');
    // The phone talks to a second instance of the service (same database).
    const other = w.another();
    const phone = request.agent(other.app);
    expect((await login(phone, 'ada@example.test')).status).to.equal(200);
    expect((await phone.get('/api/v1/me')).status).to.equal(200);
    const items = (await agent.get('/api/v1/me/sessions')).body.items as { id: string; current: boolean }[];
    const phoneSession = items.find((s) => !s.current)!;
    const ended = await agent.delete(`/api/v1/me/sessions/${phoneSession.id}`);
    expect(ended.status).to.equal(204);
    expect(sessionCookie(ended)).to.equal(undefined);
    const next = await phone.get('/api/v1/me');
    expect(next.status).to.equal(401);
    expect(next.body.code).to.equal('unauthenticated');
    expect((await agent.get('/api/v1/me')).status).to.equal(200);
    expect(await w.db.knex('account_sessions').where({ accountId: userId }).count({ n: '*' }).first()).to.deep.equal({ n: '1' });
    // Ending it again: it is gone.
    const again = await agent.delete(`/api/v1/me/sessions/${phoneSession.id}`);
    expect(again.status).to.equal(404);
    expect(again.body.code).to.equal('not_found');
  });

  it('ending the current session signs the caller out', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    const [mine] = (await agent.get('/api/v1/me/sessions')).body.items;
    const res = await agent.delete(`/api/v1/me/sessions/${mine.id}`);
    expect(res.status).to.equal(204);
    expect(sessionCookie(res)).to.match(/^service_session=;/);
    expect((await agent.get('/api/v1/me')).status).to.equal(401);
    expect(await w.db.knex('account_sessions').count({ n: '*' }).first()).to.deep.equal({ n: '0' });
  });

  it('answers 404 for a session of another account, or none, and 400 for a handle that is not a UUID', async () => {
    const ada = await signedUp(w, 'ada@example.test');
    const bob = await signedUp(w, 'bob@example.test');
    const [bobs] = (await bob.agent.get('/api/v1/me/sessions')).body.items;
    const foreign = await ada.agent.delete(`/api/v1/me/sessions/${bobs.id}`);
    expect(foreign.status).to.equal(404);
    expect(foreign.headers['content-type']).to.match(/application\/problem\+json/);
    expect(foreign.body.code).to.equal('not_found');
    expect((await bob.agent.get('/api/v1/me')).status).to.equal(200);
    const none = await ada.agent.delete('/api/v1/me/sessions/00000000-0000-4000-8000-000000000000');
    expect(none.status).to.equal(404);
    const bad = await ada.agent.delete('/api/v1/me/sessions/not-a-uuid');
    expect(bad.status).to.equal(400);
    expect(bad.body.code).to.equal('validation_failed');
  });

  it('DELETE /me/sessions ends every other session of the caller and no one else’s', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    const phones = [request.agent(w.app), request.agent(w.another().app)];
    for (const p of phones) expect((await login(p, 'ada@example.test')).status).to.equal(200);
    const bob = await signedUp(w, 'bob@example.test');
    const res = await agent.delete('/api/v1/me/sessions');
    expect(res.status).to.equal(204);
    for (const p of phones) expect((await p.get('/api/v1/me')).status).to.equal(401);
    expect((await agent.get('/api/v1/me')).status).to.equal(200);
    expect((await bob.agent.get('/api/v1/me')).status).to.equal(200);
    const left = (await agent.get('/api/v1/me/sessions')).body.items;
    expect(left).to.have.length(1);
    expect(left[0].current).to.equal(true);
  });

  it('does not list sessions a logout ended, nor expired ones', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    const phone = request.agent(w.app);
    await login(phone, 'ada@example.test');
    expect((await phone.post('/api/v1/auth/logout')).status).to.equal(204);
    const fresh = request.agent(w.app);
    await login(fresh, 'ada@example.test');
    expect((await agent.get('/api/v1/me')).status).to.equal(401);
    const listed = (await fresh.get('/api/v1/me/sessions')).body.items;
    expect(listed).to.have.length(1);
    w.clock.advance(31 * 24 * 3600_000);
    expect((await fresh.get('/api/v1/me/sessions')).status).to.equal(401);
  });

  it('a session ended while its request renews it stays ended: only a sign-in inserts a session row', async () => {
    const { agent, userId } = await signedUp(w, 'ada@example.test');
    const store = new AccountSessionStore({ knex: w.db.knex, clock: w.clock, ttlMs: SESSION_TTL_MS });
    const [row] = await w.db.knex('account_sessions').select('sid', 'sess');
    // Another device ended the session after this request read it; then the request renews it.
    await w.db.knex('account_sessions').where({ sid: row.sid }).delete();
    expect(await store.renew(row.sid, { ...row.sess, renewedAt: w.clock.now().toISOString() })).to.equal(false);
    expect(await w.db.knex('account_sessions').count({ n: '*' }).first()).to.deep.equal({ n: '0' });
    expect((await agent.get('/api/v1/me')).status).to.equal(401);
    // A sign-in does write a row; the User-Agent goes to its column only.
    const sess = { accountId: userId, stamp: 'x', renewedAt: w.clock.now().toISOString(), method: 'google' as const };
    await store.insert({ sid: 'fresh-sid', sess, signedInAt: w.clock.now(), userAgent: null });
    const written = await w.db.knex('account_sessions').select('accountId', 'method', 'userAgent', w.db.knex.raw('sess::text as sess')).first();
    expect(written).to.include({ accountId: userId, method: 'google', userAgent: null });
    expect(written.sess).to.not.include('userAgent');
  });

  it('a sign-in that loses the race with its account’s deletion answers 401 and leaves no session', async () => {
    const { userId } = await signedUp(w, 'ada@example.test');
    const store = new AccountSessionStore({ knex: w.db.knex, clock: w.clock, ttlMs: SESSION_TTL_MS });
    await w.db.knex('accounts').where({ id: userId }).delete();
    const sess = { accountId: userId, stamp: 'x', renewedAt: '', method: 'password' as const };
    const err = await store.insert({ sid: 'late-sid', sess, signedInAt: w.clock.now(), userAgent: 'x' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as { code?: string }).code).to.equal('23503');
    expect(await w.db.knex('account_sessions').count({ n: '*' }).first()).to.deep.equal({ n: '0' });
  });

  it('the list is one query (lent to the session statement); each end costs two: the session (with its account) and one statement', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    const phone = request.agent(w.app);
    await login(phone, 'ada@example.test');
    await w.accounts.service.sessionsIdle();
    expect(dbQueries(await agent.get('/api/v1/me/sessions'))).to.equal(1);
    const items = (await agent.get('/api/v1/me/sessions')).body.items as { id: string; current: boolean }[];
    expect(dbQueries(await agent.delete(`/api/v1/me/sessions/${items.find((s) => !s.current)!.id}`))).to.equal(2);
    expect(dbQueries(await agent.delete('/api/v1/me/sessions'))).to.equal(2);
  });

  it('the store answers without the kernel (one statement: the same declared read, the session being read bound) what it answers from the loaded rows', async () => {
    const { userId } = await signedUp(w, 'ada@example.test');
    const other = await signedUp(w, 'bob@example.test');
    const { securityStamp } = await w.db.knex('accounts').where({ id: userId }).first();
    const now = w.clock.now();
    const row = (sid: string, o: { createdAt?: string | null; expire?: string; stamp?: string; accountId?: string; method?: string | null } = {}) => ({
      sid,
      sess: JSON.stringify({ accountId: o.accountId ?? userId, stamp: o.stamp ?? securityStamp }),
      expire: o.expire ?? '2026-12-01T00:00:00.000Z',
      accountId: o.accountId ?? userId,
      publicId: randomUUID(),
      createdAt: o.createdAt === undefined ? '2026-11-20T08:00:00.123456Z' : o.createdAt,
      lastSeenAt: null,
      userAgent: `agent of ${sid}`,
      method: o.method === undefined ? 'google' : o.method,
    });
    await w.db.knex('account_sessions').insert([
      row('same-time-1'),
      row('same-time-2'),
      // Written before the columns existed: its times fall back to the expiry, its method to password.
      row('old-row', { createdAt: null, method: null, expire: '2026-11-30T00:00:00.5Z' }),
      row('expired', { expire: now.toISOString() }),
      row('old-stamp', { stamp: 'a stamp of before' }),
      row('bobs', { accountId: other.userId }),
    ]);
    const store = new ObjectionPersonStore(w.db.knex);
    /** What the read kernel loads of `sessionsRead` for the account, read by session `sid`, at `now`. */
    const lent = async (sid: string | null): Promise<Pojo[]> => {
      const b = { account: 'p.account', household: 'null', arg: 'null', known: 'null', session: 'p.sid', now: 'p.now' };
      const { rows } = await w.db.knex.raw(
        `select ${compileValue(sessionsRead, b)} as v from (select ?::uuid as account, ?::text as sid, ?::timestamptz as now) p`,
        [userId, sid, now],
      );
      return rows[0].v;
    };
    for (const sid of [undefined, 'same-time-2', 'old-row', 'expired', 'bobs']) {
      const ctx = newRequestContext('test');
      const own = await runWithContext(ctx, () => store.liveSessions(userId, sid, now));
      expect(ctx.db.queries, String(sid)).to.equal(1);
      expect(await store.liveSessions(userId, sid, now, await lent(sid ?? null)), String(sid)).to.deep.equal(own);
      // Unexpired, holding the account's stamp, the account's own: by sign-in time, newest first (a
      // row without one first, as PostgreSQL orders nulls in a descending order), then by handle.
      const live = (await w.db.knex('account_sessions').whereIn('sid', ['same-time-1', 'same-time-2', 'old-row']).select('sid', 'publicId')) as {
        sid: string;
        publicId: string;
      }[];
      const sameTime = live.filter((r) => r.sid !== 'old-row').sort((a, b) => (a.publicId < b.publicId ? -1 : 1));
      const signedUpRow = own.find((s) => !live.some((r) => r.publicId === s.id));
      expect(own.map((s) => s.id)).to.deep.equal([live.find((r) => r.sid === 'old-row')!.publicId, signedUpRow?.id, ...sameTime.map((r) => r.publicId)]);
      expect(own.filter((s) => s.current).map((s) => s.id)).to.deep.equal(live.filter((r) => r.sid === sid).map((r) => r.publicId));
    }
    const listed = await store.liveSessions(userId, undefined, now);
    expect(listed[0]).to.include({ createdAt: '2026-11-30T00:00:00.500Z', lastSeenAt: '2026-11-30T00:00:00.500Z', method: 'password', current: false });
    expect(listed[2]).to.include({ createdAt: '2026-11-20T08:00:00.123Z', lastSeenAt: '2026-11-20T08:00:00.123Z', method: 'google' });
  });

  it('needs a session (401) for every one of them', async () => {
    for (const [method, path] of [
      ['get', '/api/v1/me/sessions'],
      ['delete', '/api/v1/me/sessions'],
      ['delete', '/api/v1/me/sessions/00000000-0000-4000-8000-000000000000'],
    ] as const) {
      const res = await request(w.app)[method](path);
      expect(res.status, `${method} ${path}`).to.equal(401);
      expect(res.body.code).to.equal('unauthenticated');
    }
  });
});
