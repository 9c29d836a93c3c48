/**
 * The changes feed's cursors and fast paths (issues 42, 44, 47): a cursor is bound to its household
 * (another household's, an altered or a made-up one answers 400 `invalid_cursor`; the unsigned form
 * of before 410 `cursor_expired`), a poll with nothing new costs the session's one statement, and a
 * page rendered before is answered again only while the household's version is unchanged, on
 * whichever instance the change was written.
 */
import { createLogger } from '@svc/http-kit';
import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { loadConfig } from '../src/config.js';
import { buildService, type Service } from '../src/service.js';
import { type Harness, startHarness } from './harness.js';

const EVENT = { date: '2026-12-01', eventType: 'Guests', servingTime: '18:00', availableCookingMinutes: 30, notes: '', participants: [] };

async function cookieOf(app: Express, email: string): Promise<string> {
  const res = await request(app)
    .post('/api/v1/auth/register')
    .send({ email, password: 'correct horse battery', displayName: email.split('@')[0] });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return (res.headers['set-cookie'] as unknown as string[]).map((c) => c.split(';')[0]).join('; ');
}

describe('changes feed: cursors bound to their household, polls and pages answered from the version', function () {
  this.timeout(120_000);
  let h: Harness;
  let second: Service;
  let a: Express;
  let b: Express;
  let owner: string;
  let x: string;
  let y: string;

  const statements = (res: request.Response) => JSON.parse(res.headers['x-diagnostics'] ?? '{}').db.queries as number;
  const feed = (app: Express, household: string, query = '') =>
    request(app).get(`/api/v1/households/${household}/changes${query}`).set('Cookie', owner).set('X-Diagnostics', '1');
  const household = async (name: string) => {
    const res = await request(a).post('/api/v1/households').set('Cookie', owner).send({ name, timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.id as string;
  };
  const addEvent = async (app: Express, hh: string, notes: string) => {
    const res = await request(app)
      .post(`/api/v1/households/${hh}/events`)
      .set('Cookie', owner)
      .send({ ...EVENT, notes });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.id as string;
  };

  before(async () => {
    h = await startHarness({ AUTH_RATE_LIMIT: '1000000' });
    a = h.app;
    second = await buildService({
      config: loadConfig({ DATA_DIR: h.dataDir, PASSWORD_BREACH_API: 'off', PUBLIC_BASE_URL: 'http://localhost:8080', AUTH_RATE_LIMIT: '1000000' }),
      knex: h.db.knex,
      logger: createLogger({ level: 'silent' }),
      clock: h.clock,
      startMailer: false,
    });
    b = second.app;
    owner = await cookieOf(a, 'owner@example.com');
    x = await household('X');
    y = await household('Y');
    for (let i = 0; i < 3; i++) {
      await addEvent(a, x, `x${i}`);
      await addEvent(a, y, `y${i}`);
    }
  });
  after(async () => {
    await second?.close();
    await h?.close();
  });

  it('refuses a cursor of another household, an altered, a malformed or an empty one with 400 invalid_cursor', async () => {
    const ofX = (await feed(a, x, '?limit=2')).body.nextCursor as string;
    expect(ofX).to.match(/^[0-9]+\.[A-Za-z0-9_-]{22}$/);
    // The same position exists in Y (both have more changes than it): without the binding Y would answer its items after it.
    const onY = await feed(a, y, `?since=${encodeURIComponent(ofX)}`);
    expect(onY.status, JSON.stringify(onY.body)).to.equal(400);
    expect(onY.body.code).to.equal('invalid_cursor');
    expect((await feed(b, y, `?since=${encodeURIComponent(ofX)}`)).body.code, 'on another instance too').to.equal('invalid_cursor');
    const [position, mac] = ofX.split('.') as [string, string];
    const altered = [
      `${Number(position) - 1}.${mac}`,
      `${position}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`,
      `${position}.${mac}.`,
      `${position}.`,
      'not-a-cursor-!',
      `${position}.${mac}x`,
      '',
    ];
    for (const since of altered) {
      const res = await feed(a, x, `?since=${encodeURIComponent(since)}`);
      expect([res.status, res.body.code], JSON.stringify(since)).to.deep.equal([400, 'invalid_cursor']);
      expect(res.body.errors?.[0]?.field ?? res.body.fields?.[0]?.field ?? 'since').to.equal('since');
    }
    // The cursor on its own household still holds, on either instance.
    expect((await feed(a, x, `?since=${encodeURIComponent(ofX)}`)).status).to.equal(200);
    expect((await feed(b, x, `?since=${encodeURIComponent(ofX)}`)).status).to.equal(200);
  });

  it('answers an unsigned cursor of the older form 410 cursor_expired (read everything again)', async () => {
    for (const since of ['0', '2']) {
      const res = await feed(a, x, `?since=${since}`);
      expect([res.status, res.body.code]).to.deep.equal([410, 'cursor_expired']);
    }
  });

  it('answers a poll with nothing new in the session’s one statement, and sees a write of another instance at once', async () => {
    const all = await feed(a, x, '?limit=500');
    expect(all.status).to.equal(200);
    const cursor = all.body.nextCursor as string;
    const empty = await feed(a, x, `?since=${encodeURIComponent(cursor)}`);
    expect(empty.body).to.deep.equal({ items: [], nextCursor: cursor });
    expect(statements(empty), 'the session statement alone').to.equal(1);
    // A write on the other instance: the next poll on this one has it.
    const id = await addEvent(b, x, 'from b');
    const next = await feed(a, x, `?since=${encodeURIComponent(cursor)}`);
    expect(next.body.items.map((i: { id: string }) => i.id)).to.deep.equal([id]);
    expect(statements(next)).to.equal(2);
    const after = await feed(a, x, `?since=${encodeURIComponent(next.body.nextCursor)}`);
    expect(after.body).to.deep.equal({ items: [], nextCursor: next.body.nextCursor });
    expect(statements(after)).to.equal(1);
  });

  it('answers a page read again at an unchanged version without a statement, and never after a change on either instance', async () => {
    const start = (await feed(a, x, '?limit=500')).body.nextCursor as string;
    const ids = [await addEvent(a, x, 'p1'), await addEvent(a, x, 'p2')];
    const q = `?since=${encodeURIComponent(start)}`;
    const first = await feed(a, x, q);
    expect(first.body.items.map((i: { id: string }) => i.id)).to.deep.equal(ids);
    expect(statements(first)).to.equal(2);
    const again = await feed(a, x, q);
    expect(again.text, 'byte for byte').to.equal(first.text);
    expect(statements(again), 'the session statement alone').to.equal(1);
    // Changed on the other instance: this instance reads the page again.
    expect(
      (
        await request(b)
          .put(`/api/v1/households/${x}/events/${ids[0]}`)
          .set('Cookie', owner)
          .send({ ...EVENT, notes: 'p1 changed' })
      ).status,
    ).to.equal(200);
    const changed = await feed(a, x, q);
    expect(statements(changed)).to.equal(2);
    expect(changed.body.items.map((i: { id: string; value: { notes: string } }) => [i.id, i.value.notes])).to.deep.equal([
      [ids[1], 'p2'],
      [ids[0], 'p1 changed'],
    ]);
  });

  it('keeps a page holding a member, and records a rename of its account as a change of the member in each of its households', async () => {
    const first = await feed(a, x, '?limit=500');
    type Item = { resource: string; id: string; value: { displayName: string } };
    const member = (first.body.items as Item[]).find((i) => i.resource === 'member');
    expect(member?.value.displayName).to.equal('owner');
    const again = await feed(a, x, '?limit=500');
    expect(statements(again), 'kept: the session statement alone').to.equal(1);
    expect(again.text).to.equal(first.text);
    const ends = await Promise.all([x, y].map(async (hh) => (await feed(a, hh, '?limit=500')).body.nextCursor as string));
    expect((await request(a).patch('/api/v1/me').set('Cookie', owner).send({ displayName: 'Renamed owner' })).status).to.equal(200);
    // The rename moved both households' versions: the kept page is read again, the member now last.
    const renamed = await feed(a, x, '?limit=500');
    expect(statements(renamed)).to.equal(2);
    const items = renamed.body.items as Item[];
    expect([items.at(-1)?.resource, items.at(-1)?.id, items.at(-1)?.value.displayName]).to.deep.equal(['member', member?.id, 'Renamed owner']);
    expect(items.filter((i) => i.resource === 'member')).to.have.length(1);
    for (const [i, hh] of [x, y].entries()) {
      const polled = await feed(b, hh, `?since=${encodeURIComponent(ends[i]!)}`);
      expect(
        (polled.body.items as Item[]).map((it) => [it.resource, it.value.displayName]),
        'a poll after the rename has it, on either instance',
      ).to.deep.equal([['member', 'Renamed owner']]);
    }
    // The same name again changes nothing.
    const end = renamed.body.nextCursor as string;
    expect((await request(a).patch('/api/v1/me').set('Cookie', owner).send({ displayName: 'Renamed owner' })).status).to.equal(200);
    expect((await feed(a, x, `?since=${encodeURIComponent(end)}`)).body.items).to.deep.equal([]);
  });
});
