/**
 * Issue 34 parts 2–4 end to end: the changes feed (values equal to each GET, also the model
 * path's, one item per resource, two statements a page, deletions and 410, commit order under
 * parallel writers on two instances), Idempotency-Key (replay byte for byte of POST, PATCH and
 * DELETE, per person across cookie and token (after the route's own gates), 422, 409 in flight across two instances, 400) and
 * ETag / If-Match (the GET's tag is the one a write checks; stale → 412 for every resource).
 */
import { createLogger } from '@svc/http-kit';
import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { loadConfig } from '../src/config.js';
import { buildService, type Service } from '../src/service.js';
import { type Harness, startHarness } from './harness.js';

const EVENT = { date: '2026-12-01', eventType: 'Guests', servingTime: '18:00', availableCookingMinutes: 30, notes: '', participants: [] };
const RULE = {
  payload: { kind: 'CategoryFrequency', category: 'Fish', minimumPerWeek: 1, maximumPerWeek: 2 },
  strength: 'Hard',
  scope: 'Permanent',
  startDate: null,
  endDate: null,
};

async function cookieOf(app: Express, email: string): Promise<string> {
  const res = await request(app)
    .post('/api/v1/auth/register')
    .send({ email, password: 'correct horse battery', displayName: email.split('@')[0] });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return (res.headers['set-cookie'] as unknown as string[]).map((c) => c.split(';')[0]).join('; ');
}

describe('integrations: changes feed, Idempotency-Key, ETag / If-Match', function () {
  this.timeout(120_000);
  let h: Harness;
  let second: Service;
  let a: Express;
  let b: Express;
  let owner: string;
  let adult: string;
  let hh: string;
  let householdId: string;
  let adultMemberId: string;

  before(async () => {
    h = await startHarness({ AUTH_RATE_LIMIT: '1000000' });
    a = h.app;
    // A second instance on the same database: what two pods behind a balancer share.
    second = await buildService({
      config: loadConfig({ DATA_DIR: h.dataDir, PASSWORD_BREACH_API: 'off', PUBLIC_BASE_URL: 'http://localhost:8080', AUTH_RATE_LIMIT: '1000000' }),
      knex: h.db.knex,
      logger: createLogger({ level: 'silent' }),
      clock: h.clock,
      startMailer: false,
    });
    b = second.app;
    owner = await cookieOf(a, 'owner@example.com');
    adult = await cookieOf(a, 'adult@example.com');
    const made = await request(a).post('/api/v1/households').set('Cookie', owner).send({ name: 'Feed', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' });
    expect(made.status).to.equal(201);
    householdId = made.body.id;
    hh = `/api/v1/households/${householdId}`;
    const code = (await request(a).post(`${hh}/invitations`).set('Cookie', owner).send({ role: 'Adult' })).body.code;
    expect((await request(a).post('/api/v1/invitations/accept').set('Cookie', adult).send({ code })).status).to.equal(200);
    const members = (await request(a).get(`${hh}/members`).set('Cookie', owner)).body as { memberId: string; role: string }[];
    adultMemberId = members.find((m) => m.role === 'Adult')!.memberId;
  });
  after(async () => {
    await second?.close();
    await h?.close();
  });

  async function feed(app: Express, since?: string, limit?: number) {
    const q = new URLSearchParams();
    if (since !== undefined) q.set('since', since);
    if (limit !== undefined) q.set('limit', String(limit));
    return request(app).get(`${hh}/changes?${q}`).set('Cookie', adult);
  }

  describe('changes feed', () => {
    it('reports every resource once with its latest change, its value equal to its own GET, in commit order', async () => {
      const rule = (await request(a).post(`${hh}/rules`).set('Cookie', owner).send(RULE)).body;
      const event = (await request(a).post(`${hh}/events`).set('Cookie', owner).send(EVENT)).body;
      expect(
        (
          await request(a)
            .put(`${hh}/events/${event.id}`)
            .set('Cookie', owner)
            .send({ ...EVENT, notes: 'Taco night' })
        ).status,
      ).to.equal(200);
      expect((await request(a).patch(hh).set('Cookie', owner).send({ name: 'Feed Two' })).status).to.equal(200);
      const res = await feed(a);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.nextCursor).to.be.a('string');
      const items = res.body.items as { resource: string; id: string; change: string; value: unknown }[];
      const keys = items.map((i) => `${i.resource}:${i.id}`);
      expect(new Set(keys).size, 'each resource once').to.equal(keys.length);
      // The household's latest change (the rename) came last.
      expect(items.at(-1)).to.include({ resource: 'household', id: householdId, change: 'upsert' });
      expect(keys.indexOf(`rule:${rule.id}`)).to.be.lessThan(keys.indexOf(`event:${event.id}`));
      const value = (r: string, id: string) => items.find((i) => i.resource === r && i.id === id)!.value;
      expect(value('household', householdId)).to.deep.equal((await request(a).get(hh).set('Cookie', adult)).body);
      expect(value('event', event.id)).to.deep.equal((await request(a).get(`${hh}/events/${event.id}`).set('Cookie', adult)).body);
      expect((value('event', event.id) as { notes: string }).notes).to.equal('Taco night');
      const rules = (await request(a).get(`${hh}/rules`).set('Cookie', adult)).body as { id: string }[];
      expect(value('rule', rule.id)).to.deep.equal(rules.find((r) => r.id === rule.id));
      const members = (await request(a).get(`${hh}/members`).set('Cookie', adult)).body as { memberId: string }[];
      expect(value('member', adultMemberId)).to.deep.equal(members.find((m) => m.memberId === adultMemberId));
      // Nothing new since the last cursor: no items, and a cursor to ask with again.
      const again = await feed(a, res.body.nextCursor);
      expect(again.body).to.deep.equal({ items: [], nextCursor: res.body.nextCursor });
    });

    it('reports a deletion with a null value, pages with limit, and refuses a limit out of 1–500', async () => {
      const start = (await feed(a)).body.nextCursor as string;
      const event = (await request(a).post(`${hh}/events`).set('Cookie', owner).send(EVENT)).body;
      const rule = (await request(a).post(`${hh}/rules`).set('Cookie', owner).send(RULE)).body;
      expect((await request(a).delete(`${hh}/events/${event.id}`).set('Cookie', owner)).status).to.equal(204);
      const first = await feed(a, start, 1);
      expect(first.body.items.map((i: { id: string }) => i.id)).to.deep.equal([rule.id]);
      const second = await feed(a, first.body.nextCursor, 1);
      expect(second.body.items).to.deep.equal([{ resource: 'event', id: event.id, change: 'delete', at: second.body.items[0].at, value: null }]);
      for (const limit of ['0', '501', 'x']) expect((await request(a).get(`${hh}/changes?limit=${limit}`).set('Cookie', adult)).status).to.equal(400);
      expect((await request(a).get(`${hh}/changes?since=abc`).set('Cookie', adult)).body.code).to.equal('invalid_cursor');
    });

    it('answers 404 to a non-member', async () => {
      const stranger = await cookieOf(a, 'stranger@example.com');
      expect((await request(a).get(`${hh}/changes`).set('Cookie', stranger)).status).to.equal(404);
    });

    it('keeps commit order under parallel writers on two instances: a reader following the cursor misses nothing', async () => {
      let cursor = (await feed(a)).body.nextCursor as string;
      const seen = new Set<string>();
      let writing = true;
      const reader = (async () => {
        while (writing) {
          const res = await feed(b, cursor, 500);
          for (const i of res.body.items) seen.add(i.id);
          cursor = res.body.nextCursor;
        }
      })();
      const ids: string[] = [];
      await Promise.all(
        Array.from({ length: 40 }, async (_, n) => {
          const res = await request(n % 2 ? a : b)
            .post(`${hh}/events`)
            .set('Cookie', owner)
            .send({ ...EVENT, notes: `parallel ${n}` });
          expect(res.status).to.equal(201);
          ids.push(res.body.id);
        }),
      );
      writing = false;
      await reader;
      for (const i of (await feed(b, cursor, 500)).body.items) seen.add(i.id);
      expect(
        ids.filter((id) => !seen.has(id)),
        'events a reader following the cursor never saw',
      ).to.deep.equal([]);
      const positions = (await h.db.knex('household_changes').where({ household_id: householdId }).orderBy('position')).map((r) => Number(r.position));
      expect(new Set(positions).size).to.equal(positions.length);
    });
  });

  describe('changes feed under a mix of writers', () => {
    it('serialises every kind of write of one household at its counter without a deadlock or a 5xx (two instances)', async () => {
      const event = (await request(a).post(`${hh}/events`).set('Cookie', owner).send(EVENT)).body;
      const rule = (await request(a).post(`${hh}/rules`).set('Cookie', owner).send(RULE)).body;
      const writes: (() => request.Test)[] = [];
      for (let n = 0; n < 6; n++) {
        const app = n % 2 ? a : b;
        writes.push(
          () =>
            request(app)
              .post(`${hh}/events`)
              .set('Cookie', owner)
              .send({ ...EVENT, notes: `mix ${n}` }),
          () =>
            request(app)
              .put(`${hh}/events/${event.id}`)
              .set('Cookie', owner)
              .send({ ...EVENT, notes: `put ${n}` }),
          () =>
            request(app)
              .patch(hh)
              .set('Cookie', owner)
              .send({ name: `Mix ${n}` }),
          () =>
            request(app)
              .patch(`${hh}/members/${adultMemberId}`)
              .set('Cookie', owner)
              .send({ role: n % 2 ? 'Adult' : 'Junior' }),
          () =>
            request(app)
              .patch(`${hh}/rules/${rule.id}`)
              .set('Cookie', owner)
              .send({ ...RULE, strength: n % 2 ? 'Soft' : 'Hard' }),
          () =>
            request(app)
              .post(`${hh}/events`)
              .set('Cookie', owner)
              .send({ ...EVENT, date: '2026-12-07', notes: `series ${n}`, repeat: { frequency: 'weekly', count: 5 } }),
        );
      }
      const answers = await Promise.all(writes.map((w) => w()));
      const failed = answers.filter((r) => r.status >= 500).map((r) => `${r.status} ${r.text}`);
      expect(failed).to.deep.equal([]);
      await request(a).patch(`${hh}/members/${adultMemberId}`).set('Cookie', owner).send({ role: 'Adult' });
      const positions = (await h.db.knex('household_changes').where({ household_id: householdId }).orderBy('position')).map((r) => Number(r.position));
      const counter = await h.db.knex('household_change_counters').where({ household_id: householdId }).first();
      expect(Math.max(...positions)).to.equal(Number(counter.last));
    });
  });

  describe('changes feed while a member leaves', () => {
    it('a member removed while events naming them are written: no deadlock or 5xx, and the feed tells both', async () => {
      for (let round = 0; round < 3; round++) {
        const guest = await cookieOf(a, `leaver${round}@example.com`);
        const code = (await request(a).post(`${hh}/invitations`).set('Cookie', owner).send({ role: 'Adult' })).body.code;
        expect((await request(b).post('/api/v1/invitations/accept').set('Cookie', guest).send({ code })).status).to.equal(200);
        const members = (await request(a).get(`${hh}/members`).set('Cookie', owner)).body as { memberId: string; userId: string | null; displayName: string }[];
        const leaver = members.find((m) => m.displayName === `leaver${round}`)!;
        const named = { ...EVENT, participants: [{ memberId: leaver.memberId, name: leaver.displayName }] };
        const since = (await feed(a)).body.nextCursor as string;
        const answers = await Promise.all([
          request(a).delete(`${hh}/members/${leaver.memberId}`).set('Cookie', owner),
          request(b).post(`${hh}/events`).set('Cookie', owner).send(named),
          request(a)
            .post(`${hh}/events`)
            .set('Cookie', owner)
            .send({ ...named, repeat: { frequency: 'weekly', count: 4 } }),
          request(b).post(`${hh}/events`).set('Cookie', owner).send(named),
        ]);
        expect(answers.filter((r) => r.status >= 500).map((r) => r.text)).to.deep.equal([]);
        expect(answers[0]!.status).to.equal(204);
        const changes = (await feed(a, since, 500)).body.items as { resource: string; id: string; change: string }[];
        expect(changes.filter((c) => c.resource === 'member')).to.deep.include({ ...changes.find((c) => c.id === leaver.memberId)!, change: 'delete' });
      }
    });
  });

  describe('Idempotency-Key', () => {
    it('replays the first answer byte for byte (status, body, Location/ETag/Content-Type) and creates once', async () => {
      const body = { ...EVENT, notes: 'once' };
      const first = await request(a).post(`${hh}/events`).set('Cookie', owner).set('Idempotency-Key', 'k-once').send(body);
      expect(first.status).to.equal(201);
      // The same JSON, members in another order, on the other instance.
      const reordered = Object.fromEntries(Object.entries(body).reverse());
      const again = await request(b).post(`${hh}/events`).set('Cookie', owner).set('Idempotency-Key', 'k-once').send(reordered);
      expect(again.status).to.equal(201);
      expect(again.text).to.equal(first.text);
      for (const name of ['content-type', 'etag']) expect(again.headers[name], name).to.equal(first.headers[name]);
      const made = await h.db.knex('meal_events').where({ household_id: householdId, notes: 'once' });
      expect(made).to.have.length(1);
    });

    it('answers 422 idempotency_key_reused for another body or another path, 400 for an empty or over-long key', async () => {
      await request(a).post(`${hh}/events`).set('Cookie', owner).set('Idempotency-Key', 'k-reuse').send(EVENT);
      const other = await request(a)
        .post(`${hh}/events`)
        .set('Cookie', owner)
        .set('Idempotency-Key', 'k-reuse')
        .send({ ...EVENT, notes: 'other' });
      expect([other.status, other.body.code]).to.deep.equal([422, 'idempotency_key_reused']);
      // Another path (with a body valid there: the route's input checks come before the key's, issue 47).
      const path = await request(a).post(`${hh}/rules`).set('Cookie', owner).set('Idempotency-Key', 'k-reuse').send(RULE);
      expect([path.status, path.body.code]).to.deep.equal([422, 'idempotency_key_reused']);
      const invalid = await request(a).post(`${hh}/rules`).set('Cookie', owner).set('Idempotency-Key', 'k-reuse').send(EVENT);
      expect([invalid.status, invalid.body.code]).to.deep.equal([400, 'validation_failed']);
      for (const key of ['', 'x'.repeat(256)]) {
        const res = await request(a).post(`${hh}/events`).set('Cookie', owner).set('Idempotency-Key', key).send(EVENT);
        expect([res.status, res.body.code]).to.deep.equal([400, 'validation_failed']);
      }
      // Another person's same key is theirs.
      const mine = await request(a)
        .post(`${hh}/events`)
        .set('Cookie', adult)
        .set('Idempotency-Key', 'k-reuse')
        .send({ ...EVENT, notes: 'adult' });
      expect(mine.status).to.equal(201);
    });

    it('answers 409 idempotency_key_in_flight to parallel requests with one key on two instances; one event is made', async () => {
      const body = { ...EVENT, notes: 'in flight' };
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, n) =>
          request(n % 2 ? a : b)
            .post(`${hh}/events`)
            .set('Cookie', owner)
            .set('Idempotency-Key', 'k-parallel')
            .send(body),
        ),
      );
      const created = answers.filter((r) => r.status === 201);
      const busy = answers.filter((r) => r.status === 409);
      expect(created.length + busy.length).to.equal(answers.length);
      expect(created.length).to.be.greaterThan(0);
      expect(new Set(created.map((r) => r.text)).size, 'every 201 is the one answer').to.equal(1);
      for (const r of busy) expect(r.body.code).to.equal('idempotency_key_in_flight');
      expect(await h.db.knex('meal_events').where({ household_id: householdId, notes: 'in flight' })).to.have.length(1);
    });

    it('replays a DELETE and a PATCH without doing them again (the retry of a DELETE answers 204, not 404)', async () => {
      const rule = (await request(a).post(`${hh}/rules`).set('Cookie', owner).send(RULE)).body;
      const deleted = await request(a).delete(`${hh}/rules/${rule.id}`).set('Cookie', owner).set('Idempotency-Key', 'k-delete');
      expect(deleted.status).to.equal(204);
      const retried = await request(b).delete(`${hh}/rules/${rule.id}`).set('Cookie', owner).set('Idempotency-Key', 'k-delete');
      expect([retried.status, retried.text]).to.deep.equal([204, deleted.text]);
      expect((await request(a).delete(`${hh}/rules/${rule.id}`).set('Cookie', owner)).status, 'without the key it runs again').to.equal(404);
      const renamed = await request(a).patch(hh).set('Cookie', owner).set('Idempotency-Key', 'k-patch').send({ name: 'Keyed once' });
      expect(renamed.status).to.equal(200);
      expect((await request(a).patch(hh).set('Cookie', owner).send({ name: 'Renamed since' })).status).to.equal(200);
      // The retry answers what the first answered and leaves the later rename in place.
      const again = await request(b).patch(hh).set('Cookie', owner).set('Idempotency-Key', 'k-patch').send({ name: 'Keyed once' });
      expect([again.status, again.text, again.headers.etag]).to.deep.equal([200, renamed.text, renamed.headers.etag]);
      expect((await request(a).get(hh).set('Cookie', owner)).body.name).to.equal('Renamed since');
    });

    it('keeps a key per person whatever signs the request in: a token’s retry of a cookie’s POST is replayed (the token passed the route’s own gate), one event is made', async () => {
      const token = (
        await request(a)
          .post('/api/v1/me/tokens')
          .set('Cookie', owner)
          .send({ name: 'retry', scopes: ['events:write'] })
      ).body.token as string;
      const body = { ...EVENT, notes: 'cookie then token' };
      const first = await request(a).post(`${hh}/events`).set('Cookie', owner).set('Idempotency-Key', 'k-person').send(body);
      expect(first.status).to.equal(201);
      const retry = await request(b).post(`${hh}/events`).set('Authorization', `Bearer ${token}`).set('Idempotency-Key', 'k-person').send(body);
      expect([retry.status, retry.text, retry.headers['idempotent-replayed']]).to.deep.equal([201, first.text, 'true']);
      expect(await h.db.knex('meal_events').where({ household_id: householdId, notes: 'cookie then token' })).to.have.length(1);
      // The other way round the session gets the token's answer again.
      const byToken = await request(b)
        .post(`${hh}/events`)
        .set('Authorization', `Bearer ${token}`)
        .set('Idempotency-Key', 'k-token')
        .send({ ...body, notes: 'token then cookie' });
      expect(byToken.status).to.equal(201);
      const bySession = await request(a)
        .post(`${hh}/events`)
        .set('Cookie', owner)
        .set('Idempotency-Key', 'k-token')
        .send({ ...body, notes: 'token then cookie' });
      expect([bySession.status, bySession.text, bySession.headers['idempotent-replayed']]).to.deep.equal([201, byToken.text, 'true']);
    });

    it('costs a POST of an event one statement more', async () => {
      const count = (res: request.Response) => JSON.parse(res.headers['x-diagnostics'] ?? '{}').db.queries as number;
      const plain = await request(a).post(`${hh}/events`).set('Cookie', owner).set('X-Diagnostics', '1').send(EVENT);
      const keyed = await request(a).post(`${hh}/events`).set('Cookie', owner).set('X-Diagnostics', '1').set('Idempotency-Key', 'k-count').send(EVENT);
      expect(keyed.status).to.equal(201);
      expect(count(keyed)).to.be.at.most(count(plain) + 1);
    });
  });

  describe('ETag / If-Match', () => {
    it('the GET of a household and of an event carry the ETag their writes answer and check', async () => {
      const got = await request(a).get(hh).set('Cookie', owner);
      expect(got.headers.etag).to.match(/^"[A-Za-z0-9_-]+"$/);
      const patched = await request(a)
        .patch(hh)
        .set('Cookie', owner)
        .set('If-Match', got.headers.etag as string)
        .send({ name: 'Tagged' });
      expect(patched.status).to.equal(200);
      expect(patched.headers.etag).to.not.equal(got.headers.etag);
      expect((await request(b).get(hh).set('Cookie', owner)).headers.etag).to.equal(patched.headers.etag);
      const event = await request(a).post(`${hh}/events`).set('Cookie', owner).send(EVENT);
      expect((await request(b).get(`${hh}/events/${event.body.id}`).set('Cookie', owner)).headers.etag).to.equal(event.headers.etag);
    });

    it('answers 412 precondition_failed to a stale If-Match, for each resource; * matches any existing one', async () => {
      const stale = async (path: string, etag: string, write: (t: request.Test) => request.Test, method: 'put' | 'patch' | 'delete') => {
        const res = await write(request(a)[method](path).set('Cookie', owner).set('If-Match', etag));
        expect([res.status, res.body.code], `${method} ${path}`).to.deep.equal([412, 'precondition_failed']);
      };
      // Household: a tag taken before a rename.
      const hTag = (await request(a).get(hh).set('Cookie', owner)).headers.etag as string;
      await request(a).patch(hh).set('Cookie', owner).send({ name: 'Renamed' });
      await stale(hh, hTag, (t) => t.send({ name: 'Again' }), 'patch');
      await stale(hh, hTag, (t) => t.send({ confirmName: 'Renamed' }), 'delete');
      // Member.
      const mTag = (await request(a).patch(`${hh}/members/${adultMemberId}`).set('Cookie', owner).send({ role: 'Junior' })).headers.etag as string;
      // The tag a write answered is the one the next write is checked against (members have no GET of their own).
      const back = await request(a).patch(`${hh}/members/${adultMemberId}`).set('Cookie', owner).set('If-Match', mTag).send({ role: 'Adult' });
      expect(back.status, JSON.stringify(back.body)).to.equal(200);
      await stale(`${hh}/members/${adultMemberId}`, mTag, (t) => t.send({ role: 'Junior' }), 'patch');
      await stale(`${hh}/members/${adultMemberId}`, mTag, (t) => t, 'delete');
      // Rule.
      const rule = await request(a).post(`${hh}/rules`).set('Cookie', owner).send(RULE);
      const softened = await request(a)
        .patch(`${hh}/rules/${rule.body.id}`)
        .set('Cookie', owner)
        .set('If-Match', rule.headers.etag as string)
        .send({ ...RULE, strength: 'Soft' });
      expect(softened.status, JSON.stringify(softened.body)).to.equal(200);
      await stale(`${hh}/rules/${rule.body.id}`, rule.headers.etag as string, (t) => t.send(RULE), 'patch');
      await stale(`${hh}/rules/${rule.body.id}`, rule.headers.etag as string, (t) => t, 'delete');
      // Event.
      const event = await request(a).post(`${hh}/events`).set('Cookie', owner).send(EVENT);
      const changed = await request(a)
        .put(`${hh}/events/${event.body.id}`)
        .set('Cookie', owner)
        .set('If-Match', event.headers.etag as string)
        .send({ ...EVENT, notes: 'changed' });
      expect(changed.status, JSON.stringify(changed.body)).to.equal(200);
      await stale(`${hh}/events/${event.body.id}`, event.headers.etag as string, (t) => t.send(EVENT), 'put');
      await stale(`${hh}/events/${event.body.id}`, event.headers.etag as string, (t) => t, 'delete');
      // The current tag and * pass.
      const current = (await request(a).get(`${hh}/events/${event.body.id}`).set('Cookie', owner)).headers.etag as string;
      expect((await request(a).put(`${hh}/events/${event.body.id}`).set('Cookie', owner).set('If-Match', current).send(EVENT)).status).to.equal(200);
      expect((await request(a).delete(`${hh}/events/${event.body.id}`).set('Cookie', owner).set('If-Match', '*')).status).to.equal(204);
      // On a deleted one: 404.
      expect((await request(a).delete(`${hh}/events/${event.body.id}`).set('Cookie', owner).set('If-Match', '*')).status).to.equal(404);
      expect((await request(a).put(`${hh}/events/${event.body.id}`).set('Cookie', owner).set('If-Match', current).send(EVENT)).status).to.equal(404);
    });
  });

  describe('the OpenAPI document', () => {
    it('names Idempotency-Key, If-Match, ETag and the new codes per operation', async () => {
      const doc = (await request(a).get('/api/v1/openapi.json')).body;
      type Op = { parameters: { name: string }[]; responses: Record<string, { description: string; headers?: Record<string, unknown> }> };
      const op = (path: string, method: string) => doc.paths[path][method] as Op;
      const params = (o: Op) => o.parameters.map((p) => p.name);
      const events = '/api/v1/households/{householdId}/events';
      const event = `${events}/{eventId}`;
      expect(params(op(events, 'post'))).to.include('Idempotency-Key');
      expect(op(events, 'post').responses['409']!.description).to.contain('idempotency_key_in_flight');
      expect(op(events, 'post').responses['422']!.description).to.contain('idempotency_key_reused');
      expect(op(events, 'post').responses['201']!.headers).to.have.property('ETag');
      expect(params(op('/api/v1/auth/login', 'post'))).to.not.include('Idempotency-Key');
      expect(params(op(event, 'put'))).to.include.members(['Idempotency-Key', 'If-Match']);
      expect(op(event, 'delete').responses['412']!.description).to.contain('precondition_failed');
      expect(op(event, 'get').responses['200']!.headers).to.have.property('ETag');
      expect(op('/api/v1/households/{householdId}', 'patch').responses['412']!.description).to.contain('precondition_failed');
      expect(op('/api/v1/households/{householdId}/members/{memberId}', 'patch').responses['200']!.headers).to.have.property('ETag');
      expect(op('/api/v1/households/{householdId}/rules/{ruleId}', 'delete').responses['412']!.description).to.contain('precondition_failed');
      expect(op('/api/v1/households/{householdId}/changes', 'get').responses['410']!.description).to.contain('cursor_expired');
    });
  });

  describe('If-Match under parallel writers', () => {
    it('lets exactly one of 8 parallel PATCHes with the same If-Match through, on two instances; the rest answer 412', async () => {
      const tag = (await request(a).get(hh).set('Cookie', owner)).headers.etag as string;
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, n) =>
          request(n % 2 ? a : b)
            .patch(hh)
            .set('Cookie', owner)
            .set('If-Match', tag)
            .send({ name: `Racer ${n}` }),
        ),
      );
      expect(answers.map((r) => r.status).sort()).to.deep.equal([200, 412, 412, 412, 412, 412, 412, 412]);
      const winner = answers.find((r) => r.status === 200)!;
      expect((await request(a).get(hh).set('Cookie', owner)).body.name).to.equal(winner.body.name);
    });
  });

  // Last: it moves the clock 400 days on (the sessions above end with it).
  describe('changes feed: the page with its values in one statement', () => {
    it('answers, by cookie or by token, what the owning packages’ own GETs answer on an instance that lends no read, in two statements at any page', async () => {
      const rule = (await request(a).post(`${hh}/rules`).set('Cookie', owner).send(RULE)).body;
      await request(a)
        .post(`${hh}/events`)
        .set('Cookie', owner)
        .send({ ...EVENT, notes: 'feed values', participants: [adultMemberId] });
      const token = (
        await request(a)
          .post('/api/v1/me/tokens')
          .set('Cookie', adult)
          .send({ name: 'feed', scopes: ['households:read'] })
      ).body.token as string;
      expect(token).to.match(/^mp_pat_/);
      // The reference: every route reads itself (the model path), nothing lent with the session.
      const unlent = await h.unlent();
      const statements = (res: request.Response) => JSON.parse(res.headers['x-diagnostics'] ?? '{}').db.queries as number;
      const byCookie = await request(a).get(`${hh}/changes?limit=500`).set('Cookie', adult).set('X-Diagnostics', '1');
      const byToken = await request(b).get(`${hh}/changes?limit=500`).set('Authorization', `Bearer ${token}`).set('X-Diagnostics', '1');
      const reference = await request(unlent).get(`${hh}/changes?limit=500`).set('Cookie', adult);
      expect([byCookie.status, byToken.status, reference.status]).to.deep.equal([200, 200, 200]);
      expect([statements(byCookie), statements(byToken)], 'the session (or token) statement and the page').to.deep.equal([2, 2]);
      expect(byToken.body).to.deep.equal(byCookie.body);
      expect(reference.body).to.deep.equal(byCookie.body);
      const items = byCookie.body.items as { resource: string; id: string; change: string; value: unknown }[];
      expect(new Set(items.map((i) => i.resource))).to.deep.equal(new Set(['household', 'member', 'rule', 'event']));
      // Each value equals its own GET (or its list item) on the instance that lends nothing.
      const get = async (path: string) => (await request(unlent).get(`${hh}${path}`).set('Cookie', adult).expect(200)).body;
      const [household, members, rules] = [await get(''), (await get('/members')) as { memberId: string }[], (await get('/rules')) as { id: string }[]];
      for (const item of items.filter((i) => i.change === 'upsert')) {
        const own =
          item.resource === 'household'
            ? household
            : item.resource === 'member'
              ? members.find((m) => m.memberId === item.id)
              : item.resource === 'rule'
                ? rules.find((r) => r.id === item.id)
                : await get(`/events/${item.id}`);
        expect(item.value, `${item.resource} ${item.id}`).to.deep.equal(own);
      }
      expect(items.find((i) => i.id === rule.id)?.value).to.deep.include({ id: rule.id });
      // Pages of 7 by cursor: the same items, two statements each (read the first time), whatever kinds a page holds.
      const paged: unknown[] = [];
      let since: string | undefined;
      for (let n = 0; n < 100; n++) {
        const page = await request(a)
          .get(`${hh}/changes?limit=7${since === undefined ? '' : `&since=${since}`}`)
          .set('Cookie', adult)
          .set('X-Diagnostics', '1');
        expect(page.status).to.equal(200);
        // The last poll (nothing new) is answered from the version read with the session.
        expect(statements(page), `page ${n + 1}`).to.equal(page.body.items.length ? 2 : 1);
        if (!page.body.items.length) break;
        paged.push(...page.body.items);
        since = page.body.nextCursor;
      }
      expect(paged).to.deep.equal(items);
    });
  });

  describe('changes feed, 90 days later', () => {
    it('forgets deletions after 90 days: an older cursor answers 410 cursor_expired, a fresh read works', async () => {
      const before = (await feed(a)).body.nextCursor as string;
      const event = (await request(a).post(`${hh}/events`).set('Cookie', owner).send(EVENT)).body;
      await request(a).delete(`${hh}/events/${event.id}`).set('Cookie', owner);
      h.clock.advance(400 * 24 * 3600 * 1000);
      await h.service.jobs.enqueue('changes-purge', {});
      await h.service.jobs.runDue();
      // The sessions ended with the 400 days: sign in again.
      const login = await request(a).post('/api/v1/auth/login').send({ email: 'adult@example.com', password: 'correct horse battery' });
      expect(login.status).to.equal(200);
      adult = (login.headers['set-cookie'] as unknown as string[]).map((c) => c.split(';')[0]).join('; ');
      const res = await feed(a, before);
      expect(res.status).to.equal(410);
      expect(res.body.code).to.equal('cursor_expired');
      const fresh = await feed(a);
      expect(fresh.status).to.equal(200);
      expect(fresh.body.items.some((i: { id: string }) => i.id === event.id)).to.equal(false);
    });
  });
});
