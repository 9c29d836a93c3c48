/**
 * GET …/calendar-feed on the authenticated read path of the composed service: the stored feed is
 * lent to the session statement (meal-events' `calendarFeedReadAhead`, guarded by the membership
 * test), and the role check takes the caller's role from the same read, so every answer — the
 * feed, none (404), a Junior's 403, a non-member's 404 — is one statement, and the feed is exactly
 * what the service answers without the read-ahead. Correctness tests, never timings.
 */
import { createHmac } from 'node:crypto';
import * as mealEvents from '@svc/meal-events';
import { expect } from 'chai';
import type request from 'supertest';
import { type Harness, signUp, startHarness } from './harness.js';

const queries = (res: request.Response): number => JSON.parse(res.headers['x-diagnostics'] ?? '{"db":{"queries":-1}}').db.queries;
const SESSION_SECRET = 'read-path-calendar session secret, 32+ characters';

describe('the authenticated read path: GET …/calendar-feed', () => {
  let h: Harness;
  /** The calendar service as the host builds it, asked outside a request: nothing lent, the role and the feed read by queries of its own. */
  let plain: mealEvents.CalendarFeedService;
  before(async () => {
    h = await startHarness({ AUTH_RATE_LIMIT: '1000000', SESSION_SECRET });
    plain = new mealEvents.CalendarFeedService({
      feeds: new mealEvents.ObjectionCalendarFeedStore(h.db.knex),
      events: new mealEvents.ObjectionMealEventStore(h.db.knex),
      clock: h.clock,
      access: h.service.households.access,
      profiles: h.service.households.profiles,
      publicBaseUrl: 'http://localhost:8080',
      // The host's derivation of the sealing key from SESSION_SECRET (services/api/src/service.ts).
      tokenSecret: createHmac('sha256', SESSION_SECRET).update('meal-events-calendar-feed').digest('base64url'),
    });
  });
  after(async () => {
    await h?.close();
  });

  it("is one statement for the Owner and an Adult, in any letter case, and answers what POST answered and the service's own read answers", async () => {
    const owner = await signUp(h.app, 'feed-owner@example.com');
    const adult = await signUp(h.app, 'feed-adult@example.com');
    const userId = (await owner.get('/api/v1/me')).body.user.id as string;
    const household = (await owner.post('/api/v1/households').send({ name: 'Feed', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' })).body;
    const feed = `/api/v1/households/${household.id}/calendar-feed`;
    const { code } = (await owner.post(`/api/v1/households/${household.id}/invitations`).send({ role: 'Adult' })).body;
    expect((await adult.post('/api/v1/invitations/accept').send({ code })).status).to.equal(200);

    // Before any feed: 404, from the session statement alone (it lends "none", not nothing).
    const none = await owner.get(feed).set('X-Diagnostics', '1');
    expect(none.status).to.equal(404);
    expect(none.body.code).to.equal('not_found');
    expect(queries(none)).to.equal(1);

    h.clock.advance(1234);
    const created = await owner.post(feed);
    expect(created.status).to.equal(201);
    expect(created.body.createdAt).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(created.body.createdAt.endsWith('.234Z')).to.equal(true);
    const reference = await plain.get({ userId }, household.id);
    expect(reference).to.deep.equal(created.body);

    for (const [who, agent] of [
      ['Owner', owner],
      ['Adult', adult],
    ] as const) {
      for (const path of [feed, `/api/v1/households/${household.id.toUpperCase()}/calendar-feed`]) {
        const res = await agent.get(path).set('X-Diagnostics', '1');
        expect(res.status, `${who} ${path}`).to.equal(200);
        expect(queries(res), `${who} ${path}`).to.equal(1);
        expect(res.body, `${who} ${path}`).to.deep.equal(created.body);
        // Byte for byte: the keys in the same order, createdAt with its milliseconds.
        expect(res.text, `${who} ${path}`).to.equal(JSON.stringify(reference));
        expect(res.headers['content-type']).to.equal('application/json; charset=utf-8');
      }
    }

    // The same GET of a session due for its daily renewal: the read is still lent, and the renewal
    // is the one statement more; the same bytes.
    h.clock.advance(25 * 3600_000);
    const renewed = await owner.get(feed).set('X-Diagnostics', '1');
    expect(renewed.status).to.equal(200);
    expect(queries(renewed)).to.equal(2);
    const after = await owner.get(feed).set('X-Diagnostics', '1');
    expect(queries(after)).to.equal(1);
    expect(after.text).to.equal(renewed.text);
  });

  it('refuses a Junior (403) and a non-member (404, nothing of the feed) from the session read alone', async () => {
    const owner = await signUp(h.app, 'feed-roles-owner@example.com');
    const junior = await signUp(h.app, 'feed-roles-junior@example.com');
    const stranger = await signUp(h.app, 'feed-roles-stranger@example.com');
    const household = (await owner.post('/api/v1/households').send({ name: 'Roles', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' })).body;
    const feed = `/api/v1/households/${household.id}/calendar-feed`;
    const { code } = (await owner.post(`/api/v1/households/${household.id}/invitations`).send({ role: 'Junior' })).body;
    expect((await junior.post('/api/v1/invitations/accept').send({ code })).body.role).to.equal('Junior');
    const made = (await owner.post(feed)).body as { url: string; createdAt: string };
    const token = new URL(made.url).pathname.replace(/^\/calendar\/|\.ics$/g, '');

    for (const path of [feed, `/api/v1/households/${household.id.toUpperCase()}/calendar-feed`]) {
      const refused = await junior.get(path).set('X-Diagnostics', '1');
      expect(refused.status, path).to.equal(403);
      expect(refused.body.code, path).to.equal('forbidden');
      // The role came with the session (households' roleOf asked nothing more).
      expect(queries(refused), path).to.equal(1);
      expect(refused.text, path).to.not.include(token);

      const hidden = await stranger.get(path).set('X-Diagnostics', '1');
      expect(hidden.status, path).to.equal(404);
      expect(hidden.body.code, path).to.equal('not_found');
      expect(queries(hidden), path).to.equal(1);
      expect(hidden.text, path).to.not.include(token);
      expect(hidden.text, path).to.not.include(made.createdAt);
    }
    // The owner still reads it, in one statement.
    const own = await owner.get(feed).set('X-Diagnostics', '1');
    expect(own.body).to.deep.equal(made);
    expect(queries(own)).to.equal(1);
  });

  it('shows every change on the next read: 404 after DELETE, the new URL after another POST', async () => {
    const owner = await signUp(h.app, 'feed-change-owner@example.com');
    const household = (await owner.post('/api/v1/households').send({ name: 'Changes', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' })).body;
    const feed = `/api/v1/households/${household.id}/calendar-feed`;
    const first = (await owner.post(feed)).body;
    expect((await owner.get(feed)).body).to.deep.equal(first);

    expect((await owner.delete(feed)).status).to.equal(204);
    const gone = await owner.get(feed).set('X-Diagnostics', '1');
    expect(gone.status).to.equal(404);
    expect(gone.body.code).to.equal('not_found');
    expect(queries(gone)).to.equal(1);

    h.clock.advance(1000);
    const second = (await owner.post(feed)).body;
    h.clock.advance(1000);
    const third = (await owner.post(feed)).body;
    expect(new Set([first.url, second.url, third.url]).size).to.equal(3);
    const res = await owner.get(feed).set('X-Diagnostics', '1');
    expect(res.status).to.equal(200);
    expect(queries(res)).to.equal(1);
    expect(res.body).to.deep.equal(third);

    // A change the service never saw (a script, another instance): the next read shows it too.
    await h.db.knex('calendar_feeds').where({ household_id: household.id }).delete();
    expect((await owner.get(feed)).status).to.equal(404);
  });
});
