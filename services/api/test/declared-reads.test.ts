/**
 * Every declared read (a GET route's `read`, loaded by the kernel with the session in one
 * statement) answers byte for byte what the same route answers when it reads itself through its
 * store and model (an instance composed without declared reads, on the same database and clock).
 */
import { expect } from 'chai';
import request from 'supertest';
import { type Harness, signUp, startHarness } from './harness.js';

const queries = (res: request.Response): number => JSON.parse(res.headers['x-diagnostics'] ?? '{"db":{"queries":-1}}').db.queries;

/**
 * Statements a route runs besides its declared read, by read: none (GET /me/logins' second factors'
 * summary is lent to its read by @svc/sign-in-factors as fields, compiled by the kernel).
 */
const ownStatements: Record<string, number> = {};

describe('declared reads', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => h.close());

  it('every declared read answers in one statement, byte for byte what the model path answers', async () => {
    const owner = await signUp(h.app, 'declared@example.test', 'Declared Owner');
    const household = await owner.post('/api/v1/households').send({ name: 'Declared', timeZoneId: 'Europe/Berlin', defaultDinnerTime: '17:30' });
    expect(household.status, JSON.stringify(household.body)).to.be.oneOf([200, 201]);
    const householdId: string = household.body.id;
    const token = 'tok/en:ä "x"';
    expect((await owner.put('/api/v1/me/devices').send({ token, platform: 'ios', provider: null })).status).to.equal(200);
    expect((await owner.put('/api/v1/me/devices').send({ token: 'second', platform: 'android', provider: null })).status).to.equal(200);
    const members = await owner.get(`/api/v1/households/${householdId}/members`);
    const event = await owner.post(`/api/v1/households/${householdId}/events`).send({
      date: '2026-12-01',
      eventType: 'Guests',
      servingTime: '18:00',
      availableCookingMinutes: 30,
      notes: 'Lent "quoted" ünïcode \\ 😀',
      participants: [
        { memberId: members.body.items?.[0]?.memberId ?? members.body[0]?.memberId, name: 'Declared Owner' },
        { memberId: null, name: 'Guest' },
      ],
    });
    expect(event.status, JSON.stringify(event.body)).to.equal(201);
    const rule = await owner.post(`/api/v1/households/${householdId}/rules`).send({
      strength: 'Hard',
      scope: 'Permanent',
      startDate: null,
      endDate: null,
      payload: { kind: 'MaximumActiveCookingTime', minutes: 40, weekdays: ['Monday', 'Tuesday'], specificDate: null },
    });
    expect(rule.status, JSON.stringify(rule.body)).to.equal(201);
    expect((await owner.post(`/api/v1/households/${householdId}/calendar-feed`)).status).to.equal(201);
    const dish = await owner
      .post(`/api/v1/households/${householdId}/dishes`)
      .send({ name: 'Lent "quoted" ünïcode \\ 😀', category: 'Fish', activeMinutes: 25, priceClass: 'Cheap', tags: ['a "b"', 'ø'], madeAgain: true });
    expect(dish.status, JSON.stringify(dish.body)).to.equal(201);
    // A value for each path parameter a declared read may key on.
    const params: Record<string, string> = { householdId, token, eventId: event.body.id, dishId: dish.body.id };

    const unlent = await h.unlent();
    const cookie = (await owner.get('/api/v1/me')).request.cookies as unknown as string;
    expect(h.service.declaredReads.length).to.be.greaterThan(0);
    for (const { name, path } of h.service.declaredReads) {
      const url = path.replace(/\{([A-Za-z0-9_]+)\}/g, (_m, p: string) => {
        expect(params, `${name}: a value for {${p}}`).to.have.property(p);
        return encodeURIComponent(params[p]!);
      });
      // Once to fill what an instance may keep (a list's answer under its version), then measured.
      expect((await owner.get(url)).status, `${name} ${url}`).to.equal(200);
      const lent = await owner.get(url).set('X-Diagnostics', '1');
      expect(lent.status, `${name} ${url}`).to.equal(200);
      expect(queries(lent), `${name}: one statement`).to.equal(1 + (ownStatements[name] ?? 0));
      const own = await request(unlent).get(url).set('Cookie', cookie).set('X-Diagnostics', '1');
      expect(own.status, `${name} ${url} (model path)`).to.equal(200);
      expect(queries(own), `${name}: the model path reads itself`).to.be.greaterThan(queries(lent));
      expect(lent.text, name).to.equal(own.text);
    }
  });
});
