/**
 * Issue 47 findings 2 and 3 against the composed service, on two instances sharing one database:
 * an Idempotency-Key replay comes only after the route's own gates (token scope, membership) for
 * the request at hand, a refusal is never kept, and the once-shown secrets (`mp_pat_…` tokens, the
 * calendar-feed URL, invitation codes) are never in `idempotency_keys` in the clear.
 */
import { createLogger } from '@svc/http-kit';
import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { loadConfig } from '../src/config.js';
import { buildService, type Service } from '../src/service.js';
import { type Harness, startHarness } from './harness.js';

async function cookieOf(app: Express, email: string): Promise<string> {
  const res = await request(app)
    .post('/api/v1/auth/register')
    .send({ email, password: 'correct horse battery', displayName: email.split('@')[0] });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return (res.headers['set-cookie'] as unknown as string[]).map((c) => c.split(';')[0]).join('; ');
}

describe('abuse by replay: Idempotency-Key behind every gate (issue 47)', function () {
  this.timeout(180_000);
  let h: Harness;
  let second: Service;
  let a: Express;
  let b: Express;

  before(async () => {
    h = await startHarness({ AUTH_RATE_LIMIT: '1000000', TOKEN_RATE_LIMIT: '1000000' });
    a = h.app;
    second = await buildService({
      config: loadConfig({
        DATA_DIR: h.dataDir,
        PASSWORD_BREACH_API: 'off',
        PUBLIC_BASE_URL: 'http://localhost:8080',
        AUTH_RATE_LIMIT: '1000000',
        TOKEN_RATE_LIMIT: '1000000',
      }),
      knex: h.db.knex,
      logger: createLogger({ level: 'silent' }),
      clock: h.clock,
      startMailer: false,
    });
    b = second.app;
  });
  after(async () => {
    await second?.close();
    await h?.close();
  });

  /** Every kept answer, as the table holds it (waits for answers still being written after their send). */
  async function keptBodies(): Promise<string> {
    for (let i = 0; i < 200; i++) {
      const pending = await h.db.knex('idempotency_keys').whereNull('status').count<{ n: string }[]>('* as n');
      if (pending[0]!.n === '0') break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    const rows = await h.db.knex('idempotency_keys').select('body');
    return rows.map((r: { body: Buffer | null }) => (r.body ? Buffer.from(r.body).toString('latin1') : '')).join('\n');
  }

  it('an events:read token sending the body and key of a session’s POST /me/tokens gets 403, not the full-scope token; the session’s retry is replayed and marked', async () => {
    const owner = await cookieOf(a, 'pat@example.test');
    const body = { name: 'everything', scopes: ['households:read', 'events:read', 'events:write', 'rules:read', 'rules:write'] };
    const first = await request(a).post('/api/v1/me/tokens').set('Cookie', owner).set('Idempotency-Key', 'K').send(body);
    expect(first.status).to.equal(201);
    const secret = first.body.token as string;
    expect(secret).to.match(/^mp_pat_/);
    const reader = (
      await request(a)
        .post('/api/v1/me/tokens')
        .set('Cookie', owner)
        .send({ name: 'reader', scopes: ['events:read'] })
        .expect(201)
    ).body.token as string;
    const attack = await request(b).post('/api/v1/me/tokens').set('Authorization', `Bearer ${reader}`).set('Idempotency-Key', 'K').send(body);
    expect([attack.status, attack.body.code]).to.deep.equal([403, 'insufficient_scope']);
    expect(attack.text).to.not.include(secret);
    const retry = await request(b).post('/api/v1/me/tokens').set('Cookie', owner).set('Idempotency-Key', 'K').send(body);
    expect([retry.status, retry.body.token, retry.headers['idempotent-replayed']]).to.deep.equal([201, secret, 'true']);
    expect(first.headers['idempotent-replayed']).to.equal(undefined);
    // Kept sealed: not the token, nor any part of the answer, in the clear.
    const kept = await keptBodies();
    expect(kept).to.not.include(secret);
    expect(kept).to.not.include('mp_pat_');
  });

  it('the calendar-feed URL and an invitation code: a token gets 403, a member removed since gets 404 (not the kept 201), nothing of them kept in the clear', async () => {
    const owner = await cookieOf(a, 'olga@example.test');
    const adult = await cookieOf(a, 'adam@example.test');
    const made = await request(a)
      .post('/api/v1/households')
      .set('Cookie', owner)
      .send({ name: 'Replay', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' });
    expect(made.status).to.equal(201);
    const hh = `/api/v1/households/${made.body.id}`;
    const joinCode = (await request(a).post(`${hh}/invitations`).set('Cookie', owner).send({ role: 'Adult' }).expect(201)).body.code as string;
    await request(a).post('/api/v1/invitations/accept').set('Cookie', adult).send({ code: joinCode }).expect(200);
    const members = (await request(a).get(`${hh}/members`).set('Cookie', owner)).body as { memberId: string; role: string }[];
    const adultMemberId = members.find((m) => m.role === 'Adult')!.memberId;

    // The adult makes the feed URL and an invitation under keys.
    const feed = await request(a).post(`${hh}/calendar-feed`).set('Cookie', adult).set('Idempotency-Key', 'F').send({});
    expect(feed.status, JSON.stringify(feed.body)).to.equal(201);
    const feedUrl = feed.body.url as string;
    const invite = await request(a).post(`${hh}/invitations`).set('Cookie', adult).set('Idempotency-Key', 'I').send({ role: 'Junior' });
    expect(invite.status, JSON.stringify(invite.body)).to.equal(201);
    const code = invite.body.code as string;
    // The adult's token that may read the household: the gate of each route refuses it.
    const reader = (
      await request(a)
        .post('/api/v1/me/tokens')
        .set('Cookie', adult)
        .send({ name: 'r', scopes: ['households:read'] })
        .expect(201)
    ).body.token as string;
    for (const [path, key, sent] of [
      [`${hh}/calendar-feed`, 'F', {}],
      [`${hh}/invitations`, 'I', { role: 'Junior' }],
    ] as const) {
      const res = await request(b).post(path).set('Authorization', `Bearer ${reader}`).set('Idempotency-Key', key).send(sent);
      expect([res.status, res.body.code], path).to.deep.equal([403, 'insufficient_scope']);
      expect(res.text).to.not.include(code);
      expect(res.text).to.not.include(feedUrl);
    }
    const kept = await keptBodies();
    expect(kept).to.not.include(code);
    expect(kept).to.not.include(
      feedUrl
        .split('/')
        .pop()!
        .replace(/\.ics$/, ''),
    );

    // Removed: the retries answer what the routes answer a non-member, on either instance.
    await request(a).delete(`${hh}/members/${adultMemberId}`).set('Cookie', owner).expect(204);
    for (const [app, path, key, sent] of [
      [b, `${hh}/calendar-feed`, 'F', {}],
      [a, `${hh}/invitations`, 'I', { role: 'Junior' }],
    ] as const) {
      const res = await request(app).post(path).set('Cookie', adult).set('Idempotency-Key', key).send(sent);
      expect([res.status, res.body.code], path).to.deep.equal([404, 'not_found']);
      expect(res.headers['idempotent-replayed']).to.equal(undefined);
      expect(res.text).to.not.include(code);
    }
  });

  it('a token’s refusal under a key is never kept: the person’s session then runs the operation with that key', async () => {
    const owner = await cookieOf(a, 'rita@example.test');
    const made = await request(a)
      .post('/api/v1/households')
      .set('Cookie', owner)
      .send({ name: 'Refusals', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' });
    const hh = `/api/v1/households/${made.body.id}`;
    const reader = (
      await request(a)
        .post('/api/v1/me/tokens')
        .set('Cookie', owner)
        .send({ name: 'r', scopes: ['households:read'] })
        .expect(201)
    ).body.token as string;
    const refused = await request(a).post(`${hh}/invitations`).set('Authorization', `Bearer ${reader}`).set('Idempotency-Key', 'R').send({ role: 'Adult' });
    expect(refused.status).to.equal(403);
    const bySession = await request(b).post(`${hh}/invitations`).set('Cookie', owner).set('Idempotency-Key', 'R').send({ role: 'Adult' });
    expect([bySession.status, bySession.headers['idempotent-replayed']]).to.deep.equal([201, undefined]);
    expect(bySession.body.code).to.be.a('string');
  });

  it('passkey options: 10 an account per 10 minutes in parallel (then 429 rate_limited), and the account keeps at most 5 challenges', async () => {
    const person = await cookieOf(a, 'otto@example.test');
    const answers = await Promise.all(Array.from({ length: 14 }, () => request(a).post('/api/v1/me/passkeys/options').set('Cookie', person).send({})));
    expect(answers.filter((r) => r.status === 200)).to.have.length(10);
    const limited = answers.filter((r) => r.status === 429);
    expect(limited).to.have.length(4);
    expect(limited[0]!.body.code).to.equal('rate_limited');
    expect(limited[0]!.headers['retry-after']).to.match(/^\d+$/);
    const userId = (await request(a).get('/api/v1/me').set('Cookie', person)).body.user.id as string;
    const stored = await h.db.knex('webauthn_challenges').where({ account_id: userId }).count<{ n: string }[]>('* as n');
    expect(Number(stored[0]!.n)).to.be.at.most(5);
  });
});
