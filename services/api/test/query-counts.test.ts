/**
 * SQL statements per operation, read from each answer's X-Diagnostics header, against a budget:
 * a change that makes an operation do more database work than it did fails here (speed itself is
 * measured by `npm run bench`, never by a timed test). The table is printed so a change that makes
 * an operation cheaper can lower its budget.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type request from 'supertest';
import supertest from 'supertest';
import { type Harness, signUp, startHarness } from './harness.js';

/** Budget per operation: the most statements it may issue. */
const BUDGET: Record<string, number> = {
  'GET /api/v1/me': 1,
  'PATCH /api/v1/me': 3,
  // One SELECT more since issue 35: whether a second step is due (sign-in-factors' gate, asked once
  // the password is right; an account with TOTP on then costs an INSERT of its mfaToken instead of a session).
  // One fewer since accounts' own session module: the old session's DELETE is part of the new one's INSERT.
  'POST /api/v1/auth/login': 7,
  'POST /api/v1/auth/register (new address)': 6,
  'POST /api/v1/auth/forgot-password': 7,
  'GET /api/v1/households/{id}': 1,
  // The session, then ONE statement: the Owner check and the change; a rename's news job is
  // enqueued by that statement itself (households' `jobSources`, a trigger @svc/jobs installs),
  // and only when the name really changed. It was 3 before push, then 5 (BEGIN, the change, the
  // news job's INSERT, COMMIT).
  'PATCH /api/v1/households/{id}': 2,
  'PATCH /api/v1/households/{id} (no rename)': 2,
  // A new zone moves the pending reminders in the same transaction: BEGIN, the change, the move, COMMIT.
  'PATCH /api/v1/households/{id} (time zone)': 5,
  'GET /api/v1/households/{id}/members': 3,
  'GET /api/v1/households/{id}/rules': 1,
  'POST /api/v1/households/{id}/rules': 2,
  'GET /api/v1/households/{id}/rules/defaults': 3,
  'POST /api/v1/households/{id}/rules/parse': 7,
  'GET /api/v1/households/{id}/events': 2,
  // Issue 47's bounds are held by the INSERT's own triggers (counted under the household's list-version lock): no statement more.
  'POST /api/v1/households/{id}/events': 2,
  // A reminder: the household's zone, then the event's INSERT, which enqueues the reminder job itself (meal-events'
  // `jobSources`, a trigger @svc/jobs installs): one round trip more than without (it was 6: BEGIN, INSERT, INSERT, COMMIT).
  'POST /api/v1/households/{id}/events (with reminderMinutes)': 3,
  // Issue 34: the key's claim is one statement; the answer is kept after it was sent.
  'POST /api/v1/households/{id}/events (Idempotency-Key)': 3,
  // The session (with the caller's memberships), then the page with its values and the household's
  // counter in one statement (each kind's value by its owner's declared read), at any depth and
  // whatever kinds the page holds. It was 7 while each kind's values were a statement of their own.
  'GET /api/v1/households/{id}/changes': 2,
  // Nothing new since the cursor: the household's counter version comes with the session (changes' `changesRead`).
  'GET /api/v1/households/{id}/changes (nothing new)': 1,
  // A series (issue 33): at most 2 round trips more than a single event (the household's zone; the series and its year of occurrences are one INSERT).
  'POST /api/v1/households/{id}/events (weekly series of a year)': 4,
  // A single event's PUT is one UPDATE that also says whether the event is there; an occurrence's
  // takes the transaction that locks its series.
  'PUT /api/v1/households/{id}/events/{id}': 2,
  'GET /api/v1/households/{id}/events/{id}': 1,
  // A single event's DELETE, as its PUT: one statement that also says whether the event is there.
  'DELETE /api/v1/households/{id}/events/{id}': 2,
  'DELETE /api/v1/households/{id}/events/{id} (no such event)': 2,
  // A member's 404: the event's declared read answers its absence with the session (`absentIsAnswer`).
  'GET /api/v1/households/{id}/events/{id} (no such event)': 1,
  'PUT /api/v1/households/{id}/events/{id} (no such event)': 2,
  // Issue 47's bound of devices a person is held by the upsert's own trigger (the person's lock, then the count).
  'PUT /api/v1/me/devices': 2,
  'GET /api/v1/me/devices/{token}': 1,
  "GET /api/v1/me/devices/{token} (not the caller's)": 1,
  // The session (with the caller's roles), then the INSERT, whose trigger holds the 2,000 bound (the household's lock, then the count).
  'POST /api/v1/households/{id}/dishes': 2,
  // The session (with the caller's roles), then the page (one row more than asked, no count).
  'GET /api/v1/households/{id}/dishes': 2,
  'GET /api/v1/households/{id}/dishes/{id}': 1,
  'GET /api/v1/households/{id}/dishes/{id} (no such dish)': 1,
  'PUT /api/v1/households/{id}/dishes/{id}': 2,
  // The library's answer was made when the module loaded.
  'GET /api/v1/starter-dishes': 1,
  'GET /api/v1/time-zones': 1,
};

describe('SQL statements per operation', function () {
  this.timeout(60_000);
  let h: Harness;
  let agent: request.Agent;
  let householdId: string;
  const measured: Record<string, number> = {};

  const queries = (res: request.Response): number => JSON.parse(res.headers['x-diagnostics'] ?? '{"db":{"queries":-1}}').db.queries;
  async function measure(name: string, send: () => request.Test, status: number): Promise<request.Response> {
    const res = await send().set('X-Diagnostics', '1');
    expect(res.status, `${name}: ${JSON.stringify(res.body)}`).to.equal(status);
    measured[name] = queries(res);
    return res;
  }

  before(async () => {
    h = await startHarness({ AUTH_RATE_LIMIT: '1000000' });
    agent = await signUp(h.app, 'counts@example.com');
    householdId = (await agent.post('/api/v1/households').send({ name: 'Counts', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' })).body.id;
  });
  after(async () => {
    console.log(
      `    statements per operation:\n${Object.entries(measured)
        .map(([k, v]) => `      ${String(v).padStart(3)}  (budget ${BUDGET[k]})  ${k}`)
        .join('\n')}`,
    );
    await h?.close();
  });

  it('stays within each operation’s budget', async () => {
    const hh = `/api/v1/households/${householdId}`;
    await measure('GET /api/v1/me', () => agent.get('/api/v1/me'), 200);
    await measure('PATCH /api/v1/me', () => agent.patch('/api/v1/me').send({ displayName: 'Counted' }), 200);
    await measure(
      'POST /api/v1/auth/login',
      () => agent.post('/api/v1/auth/login').send({ email: 'counts@example.com', password: 'correct horse battery' }),
      200,
    );
    await measure(
      'POST /api/v1/auth/register (new address)',
      () => supertest.agent(h.app).post('/api/v1/auth/register').send({ email: 'fresh@example.com', password: 'correct horse battery', displayName: 'Fresh' }),
      200,
    );
    await measure('POST /api/v1/auth/forgot-password', () => agent.post('/api/v1/auth/forgot-password').send({ email: 'counts@example.com' }), 204);
    await measure('GET /api/v1/households/{id}', () => agent.get(hh), 200);
    await measure('PATCH /api/v1/households/{id}', () => agent.patch(hh).send({ name: 'Counted home' }), 200);
    await measure('PATCH /api/v1/households/{id} (no rename)', () => agent.patch(hh).send({ maxNewDishesPerWeek: 4 }), 200);
    await measure('PATCH /api/v1/households/{id} (time zone)', () => agent.patch(hh).send({ timeZoneId: 'Europe/London' }), 200);
    await measure('GET /api/v1/households/{id}/members', () => agent.get(`${hh}/members`), 200);
    await measure('GET /api/v1/households/{id}/rules', () => agent.get(`${hh}/rules`), 200);
    await measure(
      'POST /api/v1/households/{id}/rules',
      () =>
        agent.post(`${hh}/rules`).send({
          payload: { kind: 'CategoryFrequency', category: 'Fish', minimumPerWeek: 1, maximumPerWeek: 2 },
          strength: 'Hard',
          scope: 'Permanent',
          startDate: null,
          endDate: null,
        }),
      201,
    );
    await measure('GET /api/v1/households/{id}/rules/defaults', () => agent.get(`${hh}/rules/defaults`), 200);
    await measure('POST /api/v1/households/{id}/rules/parse', () => agent.post(`${hh}/rules/parse`).send({ text: 'fish twice a week' }), 200);
    await measure('GET /api/v1/households/{id}/events', () => agent.get(`${hh}/events`), 200);
    await measure(
      'POST /api/v1/households/{id}/events',
      () =>
        agent
          .post(`${hh}/events`)
          .send({ date: '2026-12-01', eventType: 'Guests', servingTime: '18:00', availableCookingMinutes: 30, notes: '', participants: [] }),
      201,
    );
    const reminding = await measure(
      'POST /api/v1/households/{id}/events (with reminderMinutes)',
      () =>
        agent.post(`${hh}/events`).send({
          date: '2026-12-01',
          eventType: 'Guests',
          servingTime: '18:00',
          availableCookingMinutes: 30,
          notes: '',
          participants: [],
          reminderMinutes: 30,
        }),
      201,
    );
    // …and its reminder is enqueued all the same, by the INSERT.
    const reminderJobs = await h.db.knex.raw(`select count(*)::int as n from pgboss.job where name = 'meal-events-reminders' and data->'p'->>'e' = ?`, [
      reminding.body.id,
    ]);
    expect(reminderJobs.rows[0].n).to.equal(1);
    await measure(
      'POST /api/v1/households/{id}/events (Idempotency-Key)',
      () =>
        agent
          .post(`${hh}/events`)
          .set('Idempotency-Key', 'count-key')
          .send({ date: '2026-12-02', eventType: 'Guests', servingTime: '18:00', availableCookingMinutes: 30, notes: '', participants: [] }),
      201,
    );
    const single = { date: '2026-12-03', eventType: 'Guests', servingTime: '18:00', availableCookingMinutes: 30, notes: '', participants: [] };
    const put = await agent.post(`${hh}/events`).send(single);
    await measure('PUT /api/v1/households/{id}/events/{id}', () => agent.put(`${hh}/events/${put.body.id}`).send({ ...single, notes: 'moved' }), 200);
    await measure('PUT /api/v1/households/{id}/events/{id} (no such event)', () => agent.put(`${hh}/events/${randomUUID()}`).send(single), 404);
    await measure('GET /api/v1/households/{id}/events/{id}', () => agent.get(`${hh}/events/${put.body.id}`), 200);
    await measure('GET /api/v1/households/{id}/events/{id} (no such event)', () => agent.get(`${hh}/events/${randomUUID()}`), 404);
    await measure('DELETE /api/v1/households/{id}/events/{id}', () => agent.delete(`${hh}/events/${put.body.id}`), 204);
    await measure('DELETE /api/v1/households/{id}/events/{id} (no such event)', () => agent.delete(`${hh}/events/${randomUUID()}`), 404);
    const dishBody = { name: 'Fish cakes', category: 'Fish', activeMinutes: 25, priceClass: 'Cheap', tags: ['classic'], madeAgain: false };
    const dish = await measure('POST /api/v1/households/{id}/dishes', () => agent.post(`${hh}/dishes`).send(dishBody), 201);
    await measure('GET /api/v1/households/{id}/dishes', () => agent.get(`${hh}/dishes`), 200);
    await measure('GET /api/v1/households/{id}/dishes/{id}', () => agent.get(`${hh}/dishes/${dish.body.id}`), 200);
    await measure('GET /api/v1/households/{id}/dishes/{id} (no such dish)', () => agent.get(`${hh}/dishes/${randomUUID()}`), 404);
    await measure('PUT /api/v1/households/{id}/dishes/{id}', () => agent.put(`${hh}/dishes/${dish.body.id}`).send({ ...dishBody, madeAgain: true }), 200);
    await measure('GET /api/v1/starter-dishes', () => agent.get('/api/v1/starter-dishes'), 200);
    const changes = await measure('GET /api/v1/households/{id}/changes', () => agent.get(`${hh}/changes`), 200);
    expect(new Set(changes.body.items.map((i: { resource: string }) => i.resource)), 'a page with every kind of value').to.deep.equal(
      new Set(['household', 'member', 'rule', 'event', 'dish']),
    );
    await measure(
      'GET /api/v1/households/{id}/changes (nothing new)',
      () => agent.get(`${hh}/changes?since=${encodeURIComponent(changes.body.nextCursor)}`),
      200,
    );
    const series = await measure(
      'POST /api/v1/households/{id}/events (weekly series of a year)',
      () =>
        agent.post(`${hh}/events`).send({
          date: '2026-12-01',
          eventType: 'Activity',
          servingTime: '17:00',
          availableCookingMinutes: 20,
          notes: 'Football',
          participants: [],
          repeat: { frequency: 'weekly' },
        }),
      201,
    );
    expect(series.body.seriesId).to.be.a('string');
    await measure('PUT /api/v1/me/devices', () => agent.put('/api/v1/me/devices').send({ token: 'count-token', platform: 'ios' }), 200);
    await measure('GET /api/v1/me/devices/{token}', () => agent.get('/api/v1/me/devices/count-token'), 200);
    await measure("GET /api/v1/me/devices/{token} (not the caller's)", () => agent.get('/api/v1/me/devices/no-such-token'), 404);
    await measure('GET /api/v1/time-zones', () => agent.get('/api/v1/time-zones'), 200);
    for (const [name, n] of Object.entries(measured)) expect(n, name).to.be.at.most(BUDGET[name]!);
  });
});
