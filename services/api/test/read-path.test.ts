/**
 * The authenticated read path of the composed service: one statement loads the session, its
 * account and the caller's memberships (households' SQL composed by the kernel), a GET writes
 * nothing, and household routes take the caller's role from that read.
 * These are correctness tests (roles, removals, forged cookies, statement counts), never timings.
 */
import * as accounts from '@svc/accounts';
import { SESSION_COOKIE } from '@svc/contracts';
import type { ReadingRequest } from '@svc/http-kit';
import * as mealEvents from '@svc/meal-events';
import * as mealRules from '@svc/meal-rules';
import * as push from '@svc/push';
import * as signInFactors from '@svc/sign-in-factors';
import { expect } from 'chai';
import request from 'supertest';
import { type Harness, signUp, startHarness } from './harness.js';

const queries = (res: request.Response): number => JSON.parse(res.headers['x-diagnostics'] ?? '{"db":{"queries":-1}}').db.queries;
const event = { date: '2026-12-01', eventType: 'Guests', servingTime: '18:00', availableCookingMinutes: 30, notes: '', participants: [] };

describe('the authenticated read path', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ AUTH_RATE_LIMIT: '1000000' });
  });
  after(async () => {
    await h?.close();
  });

  it('GET /me is one statement, and its memberships are what households lists, in the same order', async () => {
    const agent = await signUp(h.app, 'one-statement@example.com');
    const ids: string[] = [];
    for (const name of ['Second', 'First', 'Third']) {
      const created = await agent.post('/api/v1/households').send({ name, timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' });
      expect(created.status).to.equal(201);
      ids.push(created.body.id);
      h.clock.advance(1000);
    }
    const me = await agent.get('/api/v1/me').set('X-Diagnostics', '1');
    expect(me.status).to.equal(200);
    expect(queries(me)).to.equal(1);
    expect(me.headers['server-timing']).to.match(/db;dur=[\d.]+;desc="1 queries"/);
    const userId = me.body.user.id as string;
    expect(me.body.memberships).to.deep.equal(await h.service.households.memberships(userId));
    expect(me.body.memberships.map((m: { householdId: string }) => m.householdId)).to.deep.equal(ids);
    expect(me.body.memberships.every((m: { role: string }) => m.role === 'Owner')).to.equal(true);
  });

  it('household routes check the role the session read loaded: a role change or a removal counts from the next request', async () => {
    const owner = await signUp(h.app, 'roles-owner@example.com', 'Owner');
    const member = await signUp(h.app, 'roles-member@example.com', 'Member');
    const household = (await owner.post('/api/v1/households').send({ name: 'Roles', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' })).body;
    const hh = `/api/v1/households/${household.id}`;
    const { code } = (await owner.post(`${hh}/invitations`).send({ role: 'Adult' })).body;
    const joined = await member.post('/api/v1/invitations/accept').send({ code });
    expect(joined.status).to.equal(200);

    // As an Adult: may add events; the read costs the session statement and the page.
    expect((await member.post(`${hh}/events`).send(event)).status).to.equal(201);
    const page = await member.get(`${hh}/events`).set('X-Diagnostics', '1');
    expect(page.status).to.equal(200);
    expect(queries(page)).to.be.at.most(2);
    // The household and its rules are read ahead by the session statement: one round trip each.
    const rules = await member.get(`${hh}/rules`).set('X-Diagnostics', '1');
    expect(rules.status).to.equal(200);
    expect(queries(rules)).to.equal(1);
    const read = await member.get(hh).set('X-Diagnostics', '1');
    expect(read.status).to.equal(200);
    expect(queries(read)).to.equal(1);

    // Made a Junior: the very next request (a write) is refused.
    expect((await owner.patch(`${hh}/members/${joined.body.memberId}`).send({ role: 'Junior' })).status).to.equal(200);
    const refused = await member.post(`${hh}/events`).send(event);
    expect(refused.status).to.equal(403);
    expect((await member.get(`${hh}/events`)).status).to.equal(200);
    expect((await member.get('/api/v1/me')).body.memberships).to.deep.equal([
      { householdId: household.id, householdName: 'Roles', role: 'Junior', memberId: joined.body.memberId },
    ]);

    // Removed: the next read (the GET path) answers 404, as for any non-member.
    expect((await owner.delete(`${hh}/members/${joined.body.memberId}`)).status).to.equal(204);
    for (const path of [`${hh}/events`, `${hh}/rules`, hh]) {
      const res = await member.get(path);
      expect(res.status, path).to.equal(404);
      expect(res.body.code, path).to.equal('not_found');
    }
    expect((await member.get('/api/v1/me')).body.memberships).to.deep.equal([]);
  });

  it("reads lent to the session statement answer exactly what the packages' own reads answer", async () => {
    const owner = await signUp(h.app, 'ahead-owner@example.com');
    const stranger = await signUp(h.app, 'ahead-stranger@example.com');
    const household = (await owner.post('/api/v1/households').send({ name: 'Ahead "quoted" ünïcode', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' }))
      .body;
    const hh = `/api/v1/households/${household.id}`;
    const patched = await owner.patch(hh).send({ address: 'Storgata 1\n0155 Oslo\t"A"', loyaltyPrograms: ['Trumf', 'Coop "Medlem"'], maxNewDishesPerWeek: 4 });
    expect(patched.status).to.equal(200);
    const rule = (payload: object, endDate: string | null) => ({
      payload,
      strength: 'Soft',
      scope: endDate ? 'DateRange' : 'Permanent',
      startDate: endDate ? '2026-12-01' : null,
      endDate,
    });
    for (const body of [
      rule({ kind: 'CategoryFrequency', category: 'Fish', minimumPerWeek: 1, maximumPerWeek: 2 }, null),
      rule({ kind: 'CategoryFrequency', category: 'Vegetarian', minimumPerWeek: 2, maximumPerWeek: 4 }, '2026-12-24'),
    ]) {
      const created = await owner.post(`${hh}/rules`).send(body);
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
    }
    // Timestamps with microseconds, one a hair before the next second: both reads must cut them to
    // milliseconds as pg's driver does (…07.999Z), never round them up; the rules tie on the millisecond.
    await h.db.knex.raw(
      `update households set updated_at = '2026-03-04 05:06:07.999999+00', onboarding_completed_at = '2026-03-04 05:06:07.000500+00' where id = ?`,
      [household.id],
    );
    await h.db.knex.raw(`update meal_rules set created_at = '2026-03-04 05:06:07.123999+00' where household_id = ?`, [household.id]);

    const userId = (await owner.get('/api/v1/me')).body.user.id as string;
    const got = await owner.get(hh).set('X-Diagnostics', '1');
    expect(got.status).to.equal(200);
    expect(queries(got)).to.equal(1);
    // Outside a request nothing is read ahead: the package's own read (Objection, the driver's Dates).
    const reference = await h.service.households.get({ userId }, household.id);
    expect(got.body).to.deep.equal(JSON.parse(JSON.stringify(reference)));
    expect(got.body.updatedAt).to.equal('2026-03-04T05:06:07.999Z');
    expect(got.body.onboardingCompletedAt).to.equal('2026-03-04T05:06:07.000Z');
    expect(got.body.loyaltyPrograms).to.deep.equal(['Trumf', 'Coop "Medlem"']);
    // Lent as the answer's own JSON text (PostgreSQL's), in the contract's order, sent as it comes.
    expect(Object.keys(got.body)).to.deep.equal(Object.keys(reference));
    expect(got.body.defaultDinnerTime)
      .to.equal(reference.defaultDinnerTime)
      .and.match(/^\d\d:\d\d$/);
    expect(got.headers['content-type']).to.equal('application/json; charset=utf-8');
    expect(got.headers['content-length']).to.equal(String(Buffer.byteLength(got.text)));

    const rules = await owner.get(`${hh}/rules`).set('X-Diagnostics', '1');
    expect(rules.status).to.equal(200);
    expect(queries(rules)).to.equal(1);
    const store = new mealRules.ObjectionMealRuleStore(h.db.knex);
    const listed = await h.db.knex.transaction((trx) => store.list(household.id, trx));
    expect(rules.body).to.deep.equal(JSON.parse(JSON.stringify(listed)));
    expect(rules.body).to.have.length(2);
    expect(rules.body.map((r: { createdAt: string }) => r.createdAt)).to.deep.equal(['2026-03-04T05:06:07.123Z', '2026-03-04T05:06:07.123Z']);

    // A uuid is the same id in any letter case: a member's GET of the upper-cased path answers the
    // same, still in one statement (path ids are handed on lower-cased).
    for (const [path, body] of [
      [`/api/v1/households/${household.id.toUpperCase()}`, got.body],
      [`/api/v1/households/${household.id.toUpperCase()}/rules`, rules.body],
    ] as const) {
      const res = await owner.get(path).set('X-Diagnostics', '1');
      expect(res.status, path).to.equal(200);
      expect(res.body, path).to.deep.equal(body);
      expect(queries(res), path).to.equal(1);
    }

    // A household with no rules: an empty list, still one statement.
    const empty = (await owner.post('/api/v1/households').send({ name: 'Empty', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' })).body;
    const none = await owner.get(`/api/v1/households/${empty.id}/rules`).set('X-Diagnostics', '1');
    expect(none.body).to.deep.equal([]);
    expect(queries(none)).to.equal(1);

    // Nothing is lent to a non-member: 404 as always, in the one statement.
    for (const path of [hh, `${hh}/rules`, `/api/v1/households/${household.id.toUpperCase()}`]) {
      const res = await stranger.get(path).set('X-Diagnostics', '1');
      expect(res.status, path).to.equal(404);
      expect(res.body.code, path).to.equal('not_found');
      expect(queries(res), path).to.equal(1);
    }
    // After a write in the same session the next read sees it (a lent value lives for one request only).
    expect((await owner.patch(hh).send({ name: 'Renamed' })).status).to.equal(200);
    expect((await owner.get(hh)).body.name).to.equal('Renamed');
  });

  it("every other GET of one resource is lent too (rule defaults, members, one event, the caller's phones and one of them): one statement, the packages' own answer", async () => {
    const owner = await signUp(h.app, 'lent-owner@example.com');
    const stranger = await signUp(h.app, 'lent-stranger@example.com');
    const userId = (await owner.get('/api/v1/me')).body.user.id as string;
    const strangerId = (await stranger.get('/api/v1/me')).body.user.id as string;
    const household = (await owner.post('/api/v1/households').send({ name: 'Lent', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' })).body;
    const other = (await stranger.post('/api/v1/households').send({ name: 'Not yours', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' })).body;
    const hh = `/api/v1/households/${household.id}`;

    // The rule defaults: the household's country and whether it has a CategoryFrequency rule, both
    // read with the session. The reference is the service without the read-ahead (its own two reads).
    const plain = new mealRules.MealRulesService({
      store: new mealRules.ObjectionMealRuleStore(h.db.knex),
      clock: { now: () => new Date() },
      access: h.service.households.access,
      profiles: h.service.households.profiles,
      spendTurn: h.service.households.spendTurn,
    });
    const defaults = await owner.get(`${hh}/rules/defaults`).set('X-Diagnostics', '1');
    expect(defaults.status).to.equal(200);
    expect(queries(defaults)).to.equal(1);
    expect(defaults.body).to.deep.equal(await plain.defaults({ userId }, household.id));
    expect(defaults.body.active).to.equal(true);
    const own = await owner.post(`${hh}/rules`).send({
      payload: { kind: 'CategoryFrequency', category: 'Fish', minimumPerWeek: 1, maximumPerWeek: 2 },
      strength: 'Soft',
      scope: 'Permanent',
      startDate: null,
      endDate: null,
    });
    expect(own.status).to.equal(201);
    const after = await owner.get(`/api/v1/households/${household.id.toUpperCase()}/rules/defaults`).set('X-Diagnostics', '1');
    expect(after.status).to.equal(200);
    expect(queries(after)).to.equal(1);
    expect(after.body).to.deep.equal(await plain.defaults({ userId }, household.id));
    expect(after.body.active).to.equal(false);
    const strangers = await stranger.get(`${hh}/rules/defaults`).set('X-Diagnostics', '1');
    expect(strangers.status).to.equal(404);
    expect(queries(strangers)).to.equal(1);

    // The members, named as the service names them (the account's display name, read with the session).
    expect((await owner.patch('/api/v1/me').send({ displayName: 'Renamed "Owner"' })).status).to.equal(200);
    const members = await owner.get(`${hh}/members`).set('X-Diagnostics', '1');
    expect(members.status).to.equal(200);
    expect(queries(members)).to.equal(1);
    expect(members.body).to.deep.equal(JSON.parse(JSON.stringify(await h.service.households.listMembers({ userId }, household.id))));
    expect(members.body.map((m: { displayName: string }) => m.displayName)).to.deep.equal(['Renamed "Owner"']);
    expect((await stranger.get(`${hh}/members`)).status).to.equal(404);

    // One event, by its id (any letter case); another household's event, an unknown id and a
    // non-member all get 404, never its data.
    const created = await owner.post(`${hh}/events`).send({ ...event, notes: 'Lent "quoted" ünïcode', participants: [{ memberId: null, name: 'Guest' }] });
    expect(created.status).to.equal(201);
    const theirs = await stranger.post(`/api/v1/households/${other.id}/events`).send(event);
    expect(theirs.status).to.equal(201);
    await h.db.knex.raw(`update meal_events set created_at = '2026-03-04 05:06:07.999+00' where id = ?`, [created.body.id]);
    const reference = await new mealEvents.ObjectionMealEventStore(h.db.knex).get(household.id, created.body.id);
    for (const path of [`${hh}/events/${created.body.id}`, `/api/v1/households/${household.id.toUpperCase()}/events/${created.body.id.toUpperCase()}`]) {
      const res = await owner.get(path).set('X-Diagnostics', '1');
      expect(res.status, path).to.equal(200);
      expect(queries(res), path).to.equal(1);
      expect(res.body, path).to.deep.equal(JSON.parse(JSON.stringify(reference)));
      expect(res.body.createdAt).to.equal('2026-03-04T05:06:07.999Z');
      // The headers res.json gives an answer.
      expect(res.headers['content-type'], path).to.equal('application/json; charset=utf-8');
      expect(res.headers['content-length'], path).to.equal(String(Buffer.byteLength(res.text)));
      expect(Object.keys(res.body), path).to.deep.equal(Object.keys(reference!));
    }
    // An occurrence of a series (issue 33): its seriesId in the lent one-event read and in the page's SQL-written JSON, byte for byte as the model writes it.
    const occurrence = await owner.post(`${hh}/events`).send({ ...event, notes: 'Weekly', repeat: { frequency: 'weekly', count: 2 } });
    expect(occurrence.status).to.equal(201);
    const modelAnswer = JSON.stringify(await new mealEvents.ObjectionMealEventStore(h.db.knex).get(household.id, occurrence.body.id));
    expect(JSON.parse(modelAnswer).seriesId).to.equal(occurrence.body.seriesId);
    expect((await owner.get(`${hh}/events/${occurrence.body.id}`)).text).to.equal(modelAnswer);
    const pageText = (await owner.get(`${hh}/events?limit=100`)).text;
    expect(pageText).to.contain(modelAnswer);
    // The whole page as the model answers its rows (read with `select *`, through toApi).
    const modelRows = await mealEvents.MealEventModel.bindKnex(h.db.knex)
      .query()
      .where({ householdId: household.id })
      .orderBy(['date', 'servingTime', 'id'])
      .limit(100);
    expect(pageText).to.contain(`{"items":${JSON.stringify(modelRows.map((m) => m.toApi()))},`);
    const head = await owner.head(`${hh}/events/${created.body.id}`);
    expect(head.status).to.equal(200);
    expect(head.headers['content-length']).to.be.a('string');
    for (const [agent, path] of [
      [owner, `${hh}/events/${theirs.body.id}`],
      [owner, `${hh}/events/00000000-0000-4000-8000-000000000000`],
      [stranger, `${hh}/events/${created.body.id}`],
    ] as const) {
      const res = await agent.get(path);
      expect(res.status, path).to.equal(404);
      expect(res.body.code, path).to.equal('not_found');
    }

    // One of the caller's phones, by its token (any text, as the path decodes it); another account's
    // token is not found, and a token moved to another account stops being lent to the first.
    const token = 'tok/en:ä "x"';
    expect((await owner.put('/api/v1/me/devices').send({ token, platform: 'ios', provider: null })).status).to.equal(200);
    expect((await stranger.put('/api/v1/me/devices').send({ token: 'stranger-phone', platform: 'android', provider: null })).status).to.equal(200);
    const pushStore = new push.ObjectionPushStore(h.db.knex);
    const device = await owner.get(`/api/v1/me/devices/${encodeURIComponent(token)}`).set('X-Diagnostics', '1');
    expect(device.status).to.equal(200);
    expect(queries(device)).to.equal(1);
    expect(device.body).to.deep.equal(JSON.parse(JSON.stringify(await pushStore.get(userId, token))));
    expect(device.body.token).to.equal(token);
    expect((await owner.put('/api/v1/me/devices').send({ token: 'second phone', platform: 'android', provider: null })).status).to.equal(200);
    const listed = await owner.get('/api/v1/me/devices').set('X-Diagnostics', '1');
    expect(listed.status).to.equal(200);
    expect(queries(listed)).to.equal(1);
    expect(listed.body).to.deep.equal(JSON.parse(JSON.stringify({ items: await pushStore.list(userId) })));
    expect(listed.body.items.map((d: { token: string }) => d.token).sort()).to.deep.equal(['second phone', token]);
    // A NUL is no token (400 once the session held), and lends nothing: the batch's statement never sees it.
    const nul = await owner.get('/api/v1/me/devices/a%00b');
    expect(nul.status).to.equal(400);
    const notMine = await owner.get('/api/v1/me/devices/stranger-phone');
    expect(notMine.status).to.equal(404);
    expect(notMine.body.code).to.equal('not_found');
    expect((await stranger.put('/api/v1/me/devices').send({ token, platform: 'ios', provider: null })).status).to.equal(200);
    expect((await owner.get(`/api/v1/me/devices/${encodeURIComponent(token)}`)).status).to.equal(404);
    const moved = await stranger.get(`/api/v1/me/devices/${encodeURIComponent(token)}`).set('X-Diagnostics', '1');
    expect(moved.status).to.equal(200);
    expect(queries(moved)).to.equal(1);
    expect(moved.body).to.deep.equal(JSON.parse(JSON.stringify(await pushStore.get(strangerId, token))));
  });

  it("GET /me/logins: one statement, the session's with the password flag, the identities and the second factors' summary sign-in-factors lends", async () => {
    const person = await signUp(h.app, 'lent-logins@example.com');
    const other = await signUp(h.app, 'lent-logins-other@example.com');
    const userId = (await person.get('/api/v1/me')).body.user.id as string;
    const otherId = (await other.get('/api/v1/me')).body.user.id as string;
    const personStore = new accounts.ObjectionPersonStore(h.db.knex);

    const none = await person.get('/api/v1/me/logins').set('X-Diagnostics', '1');
    expect(none.status).to.equal(200);
    expect(queries(none)).to.equal(1);
    expect(none.body).to.deep.equal({ hasPassword: true, identities: [], totp: false, passkeys: 0 });

    // The summary's fields as sign-in-factors' own read answers them: a pending TOTP is off, a
    // confirmed one on; passkeys counted (another account's not).
    const factorsStore = new signInFactors.SignInFactorStore(h.db.knex);
    const sealed = Buffer.from('sealed');
    await h.db.knex('mfa_totp').insert({ account_id: userId, secret_sealed: sealed, confirmed_at: null, created_at: '2026-01-01T00:00:00Z' });
    const passkey = (id: string, accountId: string) => ({
      id,
      account_id: accountId,
      credential_id: `cred-${id}`,
      public_key: sealed,
      counter: 0,
      name: 'key',
      created_at: '2026-01-01T00:00:00Z',
    });
    await h.db
      .knex('passkeys')
      .insert([
        passkey('00000000-0000-4000-8000-0000000000a1', userId),
        passkey('00000000-0000-4000-8000-0000000000a2', userId),
        passkey('00000000-0000-4000-8000-0000000000a3', otherId),
      ]);
    const pending = await person.get('/api/v1/me/logins').set('X-Diagnostics', '1');
    expect(queries(pending)).to.equal(1);
    expect(pending.body).to.deep.include({ totp: false, passkeys: 2 });
    expect(pending.body).to.deep.include(await factorsStore.summary(userId));
    await h.db.knex('mfa_totp').where({ account_id: userId }).update({ confirmed_at: '2026-01-02T00:00:00Z' });
    const on = await person.get('/api/v1/me/logins').set('X-Diagnostics', '1');
    expect(queries(on)).to.equal(1);
    expect(on.body).to.deep.include({ totp: true, passkeys: 2 });
    expect(on.body).to.deep.include(await factorsStore.summary(userId));
    // Without the kernel's value: the session, then the same declared read (the identities with the
    // second factors' summary) as one statement of its own, never a second path.
    const cookie = (await person.get('/api/v1/me')).request.cookies as unknown as string;
    const unlent = await request(await h.unlent())
      .get('/api/v1/me/logins')
      .set('Cookie', cookie)
      .set('X-Diagnostics', '1');
    expect(unlent.body).to.deep.equal(on.body);
    expect(queries(unlent)).to.equal(2);
    await h.db.knex('passkeys').whereIn('account_id', [userId, otherId]).delete();
    await h.db.knex('mfa_totp').where({ account_id: userId }).delete();

    // Two linked identities (the later one first in the table), another account's, and a
    // millisecond that must survive the SQL formatting.
    await h.db.knex('account_identities').insert([
      {
        account_id: userId,
        provider: 'google',
        subject: 'g-1',
        email: 'Lent "Person"@gmail.example',
        email_verified: true,
        created_at: '2026-05-06 07:08:09.5+00',
      },
      { account_id: userId, provider: 'apple', subject: 'a-1', email: null, email_verified: false, created_at: '2026-01-02 03:04:05.123+00' },
      { account_id: otherId, provider: 'google', subject: 'g-2', email: 'other@gmail.example', email_verified: true, created_at: '2026-01-01 00:00:00+00' },
    ]);
    const linked = await person.get('/api/v1/me/logins').set('X-Diagnostics', '1');
    expect(linked.status).to.equal(200);
    expect(queries(linked)).to.equal(1);
    expect(linked.body).to.deep.equal(
      JSON.parse(JSON.stringify({ hasPassword: true, identities: await personStore.identities(userId), totp: false, passkeys: 0 })),
    );
    expect(linked.body.identities).to.deep.equal([
      { provider: 'apple', email: null, linkedAt: '2026-01-02T03:04:05.123Z' },
      { provider: 'google', email: 'Lent "Person"@gmail.example', linkedAt: '2026-05-06T07:08:09.500Z' },
    ]);

    // A social-only account: no password, as the session read says.
    await h.db.knex('accounts').where({ id: otherId }).update({ password_hash: null });
    const social = await other.get('/api/v1/me/logins').set('X-Diagnostics', '1');
    expect(social.status).to.equal(200);
    expect(queries(social)).to.equal(1);
    expect(social.body).to.deep.equal({
      hasPassword: false,
      identities: [{ provider: 'google', email: 'other@gmail.example', linkedAt: '2026-01-01T00:00:00.000Z' }],
      totp: false,
      passkeys: 0,
    });

    // Unlinked: the next read shows it (nothing held between requests).
    expect((await person.delete('/api/v1/me/logins/APPLE')).status).to.equal(204);
    const after = await person.get('/api/v1/me/logins');
    expect(after.body.identities.map((i: { provider: string }) => i.provider)).to.deep.equal(['google']);
  });

  it('GET /me/sessions is lent too: one statement, the live sessions as the store lists them (expired and signed-out ones left out)', async () => {
    const sidOf = (agent: request.Agent) => {
      const value = decodeURIComponent(agent.jar.getCookie(SESSION_COOKIE, { domain: '127.0.0.1', path: '/', secure: false, script: false })!.value);
      return value.slice(2, value.lastIndexOf('.'));
    };
    const phone = await signUp(h.app, 'lent-sessions@example.com', 'Lent sessions', 'correct horse battery');
    const userId = (await phone.get('/api/v1/me')).body.user.id as string;
    const signIn = async (userAgent: string) => {
      const agent = request.agent(h.app);
      const res = await agent
        .post('/api/v1/auth/login')
        .set('User-Agent', userAgent)
        .send({ email: 'lent-sessions@example.com', password: 'correct horse battery' });
      expect(res.status).to.equal(200);
      return agent;
    };
    // Each sign-in a second later than the one before: newest first is then the laptop.
    h.clock.advance(1000);
    const expired = await signIn('Old tablet');
    h.clock.advance(1000);
    const laptop = await signIn('Laptop "quoted" \\ slash\twith a tab');
    await h.db
      .knex('account_sessions')
      .where({ sid: sidOf(expired) })
      .update({ expire: new Date(h.clock.now().getTime() - 1000) });
    // Another account's session is never listed.
    await signUp(h.app, 'lent-sessions-other@example.com');
    const personStore = new accounts.ObjectionPersonStore(h.db.knex);

    const listed = await laptop.get('/api/v1/me/sessions').set('X-Diagnostics', '1');
    expect(listed.status).to.equal(200);
    expect(queries(listed)).to.equal(1);
    expect(listed.text).to.equal(JSON.stringify({ items: await personStore.liveSessions(userId, sidOf(laptop), h.clock.now()) }));
    const agents = listed.body.items.map((i: { userAgent: string | null }) => i.userAgent);
    expect(agents[0]).to.equal('Laptop "quoted" \\ slash\twith a tab');
    expect(agents).to.not.include('Old tablet');
    expect(listed.body.items.filter((i: { current: boolean }) => i.current).map((i: { userAgent: string }) => i.userAgent)).to.deep.equal([agents[0]]);
    // The phone asks: its own session is the current one.
    const fromPhone = await phone.get('/api/v1/me/sessions').set('X-Diagnostics', '1');
    expect(queries(fromPhone)).to.equal(1);
    expect(fromPhone.text).to.equal(JSON.stringify({ items: await personStore.liveSessions(userId, sidOf(phone), h.clock.now()) }));
    expect(fromPhone.body.items[0].current).to.equal(false);
    expect(fromPhone.body.items.filter((i: { current: boolean }) => i.current)).to.have.length(1);

    // A row written before created_at, last_seen_at and method existed: the same fallbacks as the store's own read.
    await h.db
      .knex('account_sessions')
      .where({ sid: sidOf(phone) })
      .update({ created_at: null, last_seen_at: null, method: null });
    // (The store's own read first: the GET then writes lastSeenAt, off the request.)
    const legacyReference = JSON.stringify({ items: await personStore.liveSessions(userId, sidOf(phone), h.clock.now()) });
    const legacy = await phone.get('/api/v1/me/sessions').set('X-Diagnostics', '1');
    expect(queries(legacy)).to.equal(1);
    expect(legacy.text).to.equal(legacyReference);
    await h.service.accounts.sessionsIdle();
    const old = legacy.body.items.find((i: { current: boolean }) => i.current);
    expect(old.method).to.equal('password');
    expect(old.lastSeenAt).to.equal(old.createdAt);

    // A session whose stamp is no longer the account's (signed out everywhere by a password change
    // elsewhere) is not listed; the laptop's own next read shows it ended (401).
    await h.db.knex.raw(`update account_sessions set sess = jsonb_set(sess::jsonb, '{stamp}', '"old"')::json where sid = ?`, [sidOf(laptop)]);
    const after = await phone.get('/api/v1/me/sessions').set('X-Diagnostics', '1');
    expect(queries(after)).to.equal(1);
    expect(after.text).to.equal(JSON.stringify({ items: await personStore.liveSessions(userId, sidOf(phone), h.clock.now()) }));
    expect(after.body.items).to.have.length(listed.body.items.length - 1);
    expect(after.body.items.map((i: { userAgent: string | null }) => i.userAgent)).to.not.include('Laptop "quoted" \\ slash\twith a tab');
  });

  it('a page of events read again while the list is unchanged costs only the session statement; any change shows on the next read', async () => {
    const owner = await signUp(h.app, 'cache-owner@example.com');
    const household = (await owner.post('/api/v1/households').send({ name: 'Cached', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' })).body;
    const list = `/api/v1/households/${household.id}/events?limit=5`;
    for (let i = 0; i < 3; i++) expect((await owner.post(`/api/v1/households/${household.id}/events`).send({ ...event, notes: `e${i}` })).status).to.equal(201);
    const first = await owner.get(list).set('X-Diagnostics', '1');
    expect(queries(first)).to.equal(2);
    const again = await owner.get(list).set('X-Diagnostics', '1');
    expect(again.text).to.equal(first.text);
    expect(queries(again)).to.equal(1);
    // A write through the API: the next read shows it.
    const added = (await owner.post(`/api/v1/households/${household.id}/events`).send({ ...event, notes: 'added' })).body;
    const afterPost = await owner.get(list);
    expect(afterPost.body.items.map((e: { notes: string }) => e.notes)).to.include('added');
    // A write the service never saw (another instance, a script): the next read shows it too.
    await h.db.knex('meal_events').where({ id: added.id }).update({ notes: 'by hand' });
    expect((await owner.get(list)).body.items.map((e: { notes: string }) => e.notes)).to.include('by hand');
    await h.db.knex('meal_events').where({ id: added.id }).delete();
    expect((await owner.get(list)).body.items.map((e: { id: string }) => e.id)).to.not.include(added.id);
    // Parallel writes and reads: once they are done, a read answers what the table holds.
    await Promise.all([
      ...Array.from({ length: 6 }, (_, i) => owner.post(`/api/v1/households/${household.id}/events`).send({ ...event, notes: `p${i}` })),
      ...Array.from({ length: 6 }, () => owner.get(list)),
    ]);
    const settled = await owner.get(`/api/v1/households/${household.id}/events?limit=100`);
    const rows = await h.db.knex('meal_events').where({ household_id: household.id }).select('id');
    expect(settled.body.items.map((e: { id: string }) => e.id).sort()).to.deep.equal(rows.map((r: { id: string }) => r.id).sort());
    expect(settled.body.items).to.have.length(9);
  });

  it('the rules read again while unchanged are one round trip and the same text; any change, whoever makes it, shows on the next read', async () => {
    const owner = await signUp(h.app, 'rules-cache-owner@example.com');
    const household = (await owner.post('/api/v1/households').send({ name: 'Rules', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' })).body;
    const hh = `/api/v1/households/${household.id}`;
    const rule = (days: number) => ({ payload: { kind: 'RepeatAfterDays', days }, strength: 'Soft', scope: 'Permanent', startDate: null, endDate: null });
    const empty = await owner.get(`${hh}/rules`).set('X-Diagnostics', '1');
    expect(empty.text).to.equal('[]');
    expect(queries(empty)).to.equal(1);
    const created = (await owner.post(`${hh}/rules`).send(rule(7))).body;
    const first = await owner.get(`${hh}/rules`).set('X-Diagnostics', '1');
    expect(first.body.map((r: { id: string }) => r.id)).to.deep.equal([created.id]);
    expect(queries(first)).to.equal(1);
    const again = await owner.get(`${hh}/rules`).set('X-Diagnostics', '1');
    expect(again.text).to.equal(first.text);
    expect(queries(again)).to.equal(1);
    expect(again.headers['content-type']).to.equal('application/json; charset=utf-8');
    // Through the API, by hand (a script, another instance), and deleted by hand: each shows next time.
    expect((await owner.patch(`${hh}/rules/${created.id}`).send(rule(9))).status).to.equal(200);
    expect((await owner.get(`${hh}/rules`)).body[0].payload.days).to.equal(9);
    await h.db.knex('meal_rules').where({ id: created.id }).update({ strength: 'Hard' });
    expect((await owner.get(`${hh}/rules`)).body[0].strength).to.equal('Hard');
    await h.db.knex('meal_rules').where({ id: created.id }).delete();
    expect((await owner.get(`${hh}/rules`)).text).to.equal('[]');
    // Parallel writes and reads: once they are done, a read answers what the table holds.
    await Promise.all([
      ...Array.from({ length: 6 }, (_, i) => owner.post(`${hh}/rules`).send(rule(10 + i))),
      ...Array.from({ length: 6 }, () => owner.get(`${hh}/rules`)),
    ]);
    const settled = await owner.get(`${hh}/rules`);
    const rows = await h.db.knex('meal_rules').where({ household_id: household.id }).select('id');
    expect(settled.body.map((r: { id: string }) => r.id).sort()).to.deep.equal(rows.map((r: { id: string }) => r.id).sort());
    expect(settled.body).to.have.length(6);
    // Another member's first read, a stranger's read: the held answer goes to members only.
    const stranger = await signUp(h.app, 'rules-cache-stranger@example.com');
    expect((await stranger.get(`${hh}/rules`)).status).to.equal(404);
  });

  it('a non-member never learns a household exists, whatever its id looks like', async () => {
    const owner = await signUp(h.app, 'exists-owner@example.com');
    const stranger = await signUp(h.app, 'exists-stranger@example.com');
    const household = (await owner.post('/api/v1/households').send({ name: 'Private', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' })).body;
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const id of [household.id, unknown]) {
      const res = await stranger.get(`/api/v1/households/${id}/events`).set('X-Diagnostics', '1');
      expect(res.status).to.equal(404);
      expect(res.body.code).to.equal('not_found');
      // Answered from the session read alone: no membership query.
      expect(queries(res)).to.equal(1);
    }
  });

  it('a GET with a forged, unsigned or stale cookie is unauthenticated, and a read writes nothing', async () => {
    const agent = await signUp(h.app, 'cookies@example.com');
    const me = await agent.get('/api/v1/me');
    expect(me.status).to.equal(200);
    // The agent's cookie, as the client sends it.
    const jar = agent.jar.getCookie(SESSION_COOKIE, { domain: '127.0.0.1', path: '/', secure: false, script: false });
    expect(jar, 'the session cookie').to.not.equal(undefined);
    const value = decodeURIComponent(jar!.value);
    expect(value.startsWith('s:')).to.equal(true);
    const sid = value.slice(2, value.lastIndexOf('.'));
    const signed = (v: string) => `${SESSION_COOKIE}=${encodeURIComponent(v)}`;

    expect((await request(h.app).get('/api/v1/me').set('Cookie', signed(value))).status).to.equal(200);
    for (const forged of [`s:${sid}.${'A'.repeat(43)}`, `s:${sid}`, sid, `s:${sid}x${value.slice(value.lastIndexOf('.'))}`]) {
      const res = await request(h.app).get('/api/v1/me').set('Cookie', signed(forged));
      expect(res.status, forged).to.equal(401);
      expect(res.body.code).to.equal('unauthenticated');
    }

    const before = await h.db.knex('account_sessions').where({ sid }).select('sess', 'expire').first();
    h.clock.advance(3600_000);
    const read = await request(h.app).get('/api/v1/me').set('Cookie', signed(value));
    expect(read.status).to.equal(200);
    expect(read.headers['set-cookie']).to.equal(undefined);
    await h.service.accounts.sessionsIdle();
    expect(await h.db.knex('account_sessions').where({ sid }).select('sess', 'expire').first()).to.deep.equal(before);

    // Signed out: the same cookie, valid signature and all, no longer reads.
    expect((await agent.post('/api/v1/auth/logout')).status).to.equal(204);
    expect((await request(h.app).get('/api/v1/me').set('Cookie', signed(value))).status).to.equal(401);
  });

  it('the hot reads (compiled serializers) answer byte for byte what JSON.stringify writes', async () => {
    const agent = await signUp(h.app, 'serializers@example.com', 'Serializer "quoted" \\ name');
    const household = (await agent.post('/api/v1/households').send({ name: 'Ser "i" al', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' })).body;
    const hh = `/api/v1/households/${household.id}`;
    const rule = (payload: object) => ({ payload, strength: 'Soft', scope: 'Permanent', startDate: null, endDate: null });
    for (const payload of [
      { kind: 'CategoryFrequency', category: 'Fish', minimumPerWeek: 1, maximumPerWeek: 3 },
      { kind: 'MaximumActiveCookingTime', minutes: 30, weekdays: ['Tuesday'], specificDate: null },
    ]) {
      expect((await agent.post(`${hh}/rules`).send(rule(payload))).status).to.equal(201);
    }
    for (let i = 0; i < 3; i++) {
      const created = await agent
        .post(`${hh}/events`)
        .send({ ...event, notes: `note ${i} "x" \u00e9`, participants: [{ memberId: null, name: `Guest ${i}` }] });
      expect(created.status).to.equal(201);
    }
    expect((await agent.post(`${hh}/calendar-feed`)).status).to.equal(201);
    const one = (await agent.post(`${hh}/events`).send({ ...event, participants: [{ memberId: null, name: 'Gjest "én"' }] })).body;
    for (const path of [
      '/api/v1/me',
      '/api/v1/me/sessions',
      hh,
      `${hh}/rules`,
      `${hh}/events?limit=2`,
      `${hh}/calendar-feed`,
      `${hh}/members`,
      `${hh}/rules/defaults`,
      `${hh}/events/${one.id}`,
    ]) {
      const res = await agent.get(path);
      expect(res.status, path).to.equal(200);
      expect(res.headers['content-type'], path).to.equal('application/json; charset=utf-8');
      expect(res.text, path).to.equal(JSON.stringify(res.body));
    }
    const page = (await agent.get(`${hh}/events?limit=2`)).body;
    expect(page.items).to.have.length(2);
    expect(page.total).to.equal(null);
    expect(page.nextCursor).to.be.a('string');
    expect(page.items[0].participants).to.have.length(1);
    expect(page.items[0].participants[0]).to.have.keys('memberId', 'name');
  });

  it('sessions read in the same turn share one statement per variant, and each gets only its own row', async () => {
    const sidOf = (agent: request.Agent) => {
      const value = decodeURIComponent(agent.jar.getCookie(SESSION_COOKIE, { domain: '127.0.0.1', path: '/', secure: false, script: false })!.value);
      return value.slice(2, value.lastIndexOf('.'));
    };
    const owner = await signUp(h.app, 'batch-owner@example.com', 'Owner of the batch');
    const stranger = await signUp(h.app, 'batch-stranger@example.com', 'Stranger');
    const gone = await signUp(h.app, 'batch-gone@example.com', 'Signed out');
    const household = (await owner.post('/api/v1/households').send({ name: 'Batched', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' })).body;
    const sids = { owner: sidOf(owner), stranger: sidOf(stranger), gone: sidOf(gone) };
    expect((await gone.post('/api/v1/auth/logout')).status).to.equal(204);

    const store = h.service.accounts.sessions.store;
    // Count the statements: each takes one connection from the pool.
    const pool = h.db.knex.client as unknown as { acquireConnection(): Promise<unknown> };
    const acquire = pool.acquireConnection.bind(pool);
    let statements = 0;
    pool.acquireConnection = () => {
      statements++;
      return acquire();
    };
    // What the kernel needs of a request: a GET of the household's path (its declared read).
    const householdGet = () => ({ method: 'GET', path: `/api/v1/households/${household.id}` }) as ReadingRequest;
    expect(h.service.readKernel.match(householdGet().path)?.read.name).to.equal('households_household');
    const [aheadReq, strangerReq] = [householdGet(), householdGet()];
    try {
      const [me, other, ahead, strangerAhead, unknown, signedOut, again] = await Promise.all([
        store.loadSession(sids.owner),
        store.loadSession(sids.stranger),
        store.loadSession(sids.owner, aheadReq),
        store.loadSession(sids.stranger, strangerReq),
        store.loadSession('no-such-session'),
        store.loadSession(sids.gone),
        store.loadSession(sids.owner),
      ]);
      // One statement for the plain reads, one for the household read-ahead.
      expect(statements).to.equal(2);
      expect(me?.account?.displayName).to.equal('Owner of the batch');
      expect(me?.memberships?.map((m) => m.householdId)).to.deep.equal([household.id]);
      expect(again?.account).to.deep.equal(me?.account);
      expect(again?.account).to.not.equal(me?.account);
      expect(other?.account?.displayName).to.equal('Stranger');
      expect(other?.memberships).to.deep.equal([]);
      expect(ahead?.account?.displayName).to.equal('Owner of the batch');
      // The household's declared read loads its row, handed by the kernel to the request (accounts' answer never carries it).
      expect(ahead).to.not.have.property('read');
      expect(ahead).to.not.have.property('read_value');
      expect(aheadReq.lent?.name).to.equal('households_household');
      expect((aheadReq.lent?.value as { name?: string } | undefined)?.name).to.equal('Batched');
      // Not a member: the same statement loads the stranger nothing.
      expect(strangerAhead?.account?.displayName).to.equal('Stranger');
      expect(strangerReq.lent).to.equal(undefined);
      expect(unknown).to.equal(null);
      expect(signedOut).to.equal(null);
    } finally {
      pool.acquireConnection = acquire;
    }

    // Over HTTP, in parallel: every caller is answered as itself.
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        [
          () => owner.get('/api/v1/me'),
          () => stranger.get('/api/v1/me'),
          () => owner.get(`/api/v1/households/${household.id}`),
          () => stranger.get(`/api/v1/households/${household.id}`),
          () => gone.get('/api/v1/me'),
        ][i % 5]!(),
      ),
    );
    answers.forEach((res, i) => {
      const expected = [
        [200, 'Owner of the batch'],
        [200, 'Stranger'],
        [200, 'Batched'],
        [404, undefined],
        [401, undefined],
      ][i % 5]!;
      expect(res.status, `request ${i}`).to.equal(expected[0]);
      if (i % 5 === 0 || i % 5 === 1) expect(res.body.user.displayName).to.equal(expected[1]);
      if (i % 5 === 2) expect(res.body.name).to.equal('Batched');
    });
  });

  it('parallel reads of one session each load it: none is answered from another request', async () => {
    const a = await signUp(h.app, 'parallel-a@example.com', 'A');
    const b = await signUp(h.app, 'parallel-b@example.com', 'B');
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).get('/api/v1/me')));
    answers.forEach((res, i) => {
      expect(res.status).to.equal(200);
      expect(res.body.user.displayName).to.equal(i % 2 ? 'A' : 'B');
    });
  });
});
