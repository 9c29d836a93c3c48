/**
 * Personal access tokens in the composed service (decisions.md §8): scopes × roles over the
 * operations a token may reach and those it never may, one statement per authenticated GET as on
 * the cookie path, and revocation seen by a second instance on the same database.
 */
import { createKnex } from '@svc/db';
import { createLogger } from '@svc/http-kit';
import { expect } from 'chai';
import request from 'supertest';
import { loadConfig } from '../src/config.js';
import { buildService, type Service } from '../src/service.js';
import { type Harness, signUp, startHarness } from './harness.js';

const SCOPES = ['households:read', 'events:read', 'events:write', 'rules:read', 'rules:write'] as const;
type Scope = (typeof SCOPES)[number];
type Role = 'Owner' | 'Adult' | 'Junior' | 'Outsider';

describe('personal access tokens in the composed service', function () {
  this.timeout(120_000);
  let h: Harness;
  let householdId: string;
  const people = {} as Record<Role, request.Agent>;
  let eventId: string;
  let ruleId: string;

  const rule = (min: number) => ({
    payload: { kind: 'CategoryFrequency', category: 'Fish', minimumPerWeek: min, maximumPerWeek: 3 },
    strength: 'Soft',
    scope: 'Permanent',
    startDate: null,
    endDate: null,
  });
  const event = (date: string) => ({
    date,
    eventType: 'Guests',
    servingTime: '18:00',
    availableCookingMinutes: 60,
    notes: '',
    participants: [{ memberId: null, name: 'Guest' }],
  });

  before(async () => {
    h = await startHarness({ AUTH_RATE_LIMIT: '1000000', TOKEN_RATE_LIMIT: '1000000' });
    people.Owner = await signUp(h.app, 'owner@example.test', 'Olive Owner');
    householdId = (await people.Owner.post('/api/v1/households').send({ name: 'Tokens', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' }).expect(201))
      .body.id;
    for (const role of ['Adult', 'Junior'] as const) {
      people[role] = await signUp(h.app, `${role.toLowerCase()}@example.test`, `${role} Person`);
      const { code } = (await people.Owner.post(`/api/v1/households/${householdId}/invitations`).send({ role }).expect(201)).body;
      await people[role].post('/api/v1/invitations/accept').send({ code }).expect(200);
    }
    people.Outsider = await signUp(h.app, 'outsider@example.test', 'Otto Outsider');
    eventId = (await people.Owner.post(`/api/v1/households/${householdId}/events`).send(event('2026-12-01')).expect(201)).body.id;
    ruleId = (await people.Owner.post(`/api/v1/households/${householdId}/rules`).send(rule(1)).expect(201)).body.id;
  });
  after(async () => h?.close());

  const tokenFor = async (role: Role, scopes: readonly Scope[]): Promise<string> =>
    (
      await people[role]
        .post('/api/v1/me/tokens')
        .send({ name: `${role} ${scopes.join(' ')}`, scopes })
        .expect(201)
    ).body.token;

  /** The operations a token may reach, each with the scope that opens it; `fresh` makes what a DELETE deletes. */
  const base = () => `/api/v1/households/${householdId}`;
  const inScope: { name: string; scope: Scope; send: (c: request.SuperTest<request.Test>) => Promise<request.Response> }[] = [
    { name: 'GET household', scope: 'households:read', send: (c) => c.get(base()) },
    { name: 'GET members', scope: 'households:read', send: (c) => c.get(`${base()}/members`) },
    { name: 'GET calendar-feed', scope: 'households:read', send: (c) => c.get(`${base()}/calendar-feed`) },
    { name: 'GET changes', scope: 'households:read', send: (c) => c.get(`${base()}/changes?limit=1`) },
    {
      name: 'GET series (unknown: 404 for everyone who may look)',
      scope: 'events:read',
      send: (c) => c.get(`${base()}/series/00000000-0000-4000-8000-000000000000`),
    },
    { name: 'GET events', scope: 'events:read', send: (c) => c.get(`${base()}/events?from=2026-12-01&to=2026-12-31`) },
    { name: 'GET event', scope: 'events:read', send: (c) => c.get(`${base()}/events/${eventId}`) },
    { name: 'POST event', scope: 'events:write', send: (c) => c.post(`${base()}/events`).send(event('2026-12-02')) },
    { name: 'PUT event', scope: 'events:write', send: (c) => c.put(`${base()}/events/${eventId}`).send(event('2026-12-01')) },
    {
      name: 'DELETE event',
      scope: 'events:write',
      send: async (c) => {
        const id = (await people.Owner.post(`${base()}/events`).send(event('2026-12-03')).expect(201)).body.id;
        return c.delete(`${base()}/events/${id}`);
      },
    },
    { name: 'GET rules', scope: 'rules:read', send: (c) => c.get(`${base()}/rules`) },
    { name: 'GET rule defaults', scope: 'rules:read', send: (c) => c.get(`${base()}/rules/defaults`) },
    { name: 'POST rule', scope: 'rules:write', send: (c) => c.post(`${base()}/rules`).send(rule(2)) },
    { name: 'PATCH rule', scope: 'rules:write', send: (c) => c.patch(`${base()}/rules/${ruleId}`).send(rule(1)) },
  ];
  /** Operations no token reaches, whatever its scopes (decisions.md §8 details). */
  const never: { name: string; send: (c: request.SuperTest<request.Test>) => request.Test }[] = [
    { name: 'PATCH household (settings)', send: (c) => c.patch(base()).send({ name: 'Renamed' }) },
    { name: 'DELETE household', send: (c) => c.delete(base()) },
    { name: 'POST invitations', send: (c) => c.post(`${base()}/invitations`).send({ role: 'Adult' }) },
    { name: 'GET invitations', send: (c) => c.get(`${base()}/invitations`) },
    { name: 'POST owner', send: (c) => c.post(`${base()}/owner`).send({ memberId: '00000000-0000-4000-8000-000000000000' }) },
    { name: 'POST calendar-feed', send: (c) => c.post(`${base()}/calendar-feed`) },
    { name: 'POST onboarding/complete', send: (c) => c.post(`${base()}/onboarding/complete`).send({}) },
    { name: 'PUT /me/devices', send: (c) => c.put('/api/v1/me/devices').send({ token: 'x', platform: 'ios' }) },
    { name: 'PATCH /me', send: (c) => c.patch('/api/v1/me').send({ displayName: 'Renamed' }) },
    { name: 'GET /me/tokens', send: (c) => c.get('/api/v1/me/tokens') },
    { name: 'POST /me/tokens', send: (c) => c.post('/api/v1/me/tokens').send({ name: 'x', scopes: ['events:read'] }) },
    { name: 'GET /me/notifications', send: (c) => c.get('/api/v1/me/notifications') },
    { name: 'DELETE /me', send: (c) => c.delete('/api/v1/me').send({ password: 'correct horse battery' }) },
    { name: 'POST /auth/logout', send: (c) => c.post('/api/v1/auth/logout') },
    { name: 'POST /households', send: (c) => c.post('/api/v1/households').send({ name: 'New', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' }) },
  ];

  /** A client sending `Authorization: Bearer token` on every request, no cookie. */
  const withToken = (token: string) => {
    const c = request(h.app);
    const wrap = (m: 'get' | 'post' | 'put' | 'patch' | 'delete') => (url: string) => c[m](url).set('Authorization', `Bearer ${token}`);
    return {
      get: wrap('get'),
      post: wrap('post'),
      put: wrap('put'),
      patch: wrap('patch'),
      delete: wrap('delete'),
    } as unknown as request.SuperTest<request.Test>;
  };

  it('scopes × roles: within its scope a token answers what the person’s session answers (roles included); outside it 403 insufficient_scope', async () => {
    const table: string[] = [];
    const differByRole = new Set<string>();
    for (const role of ['Owner', 'Adult', 'Junior', 'Outsider'] as const) {
      const all = await tokenFor(role, SCOPES);
      const single = Object.fromEntries(await Promise.all(SCOPES.map(async (s) => [s, await tokenFor(role, [s])] as const))) as Record<Scope, string>;
      for (const op of inScope) {
        const bySession = (await op.send(people[role] as unknown as request.SuperTest<request.Test>)).status;
        const byAll = await op.send(withToken(all));
        expect(byAll.status, `${role} ${op.name} with every scope: ${JSON.stringify(byAll.body)}`).to.equal(bySession);
        for (const s of SCOPES) {
          const res = await op.send(withToken(single[s]));
          if (s === op.scope) expect(res.status, `${role} ${op.name} with ${s}`).to.equal(bySession);
          else {
            expect(res.status, `${role} ${op.name} with ${s}`).to.equal(403);
            expect(res.body.code).to.equal('insufficient_scope');
          }
        }
        table.push(`${role} ${op.name} → ${bySession}`);
        if (bySession >= 400) differByRole.add(op.name);
      }
      // GET /me answers every token, whatever its one scope: who it acts as and its households.
      for (const s of SCOPES) expect((await withToken(single[s]).get('/api/v1/me')).status, `${role} GET /me with ${s}`).to.equal(200);
      for (const op of never) {
        const res = await op.send(withToken(all));
        expect(res.status, `${role} ${op.name}`).to.equal(403);
        expect(res.body.code, `${role} ${op.name}`).to.equal('insufficient_scope');
      }
    }
    // The person's role still limits the token: a Junior's or an outsider's answers differ from the Owner's somewhere.
    expect(table).to.include.members(['Owner GET household → 200', 'Owner POST rule → 201', 'Outsider GET household → 404', 'Outsider GET events → 404']);
    expect([...differByRole]).to.include('POST rule');
    // Nothing a token was refused left a trace: still one household, its name unchanged, no token made by a token.
    const household = (await people.Owner.get(base()).expect(200)).body;
    expect(household.name).to.equal('Tokens');
    expect((await people.Owner.get('/api/v1/me/tokens').expect(200)).body.items).to.have.length(6);
  });

  it('the notice of a new token says in words what it may do, in English and in Norwegian, then its scopes', async () => {
    await people.Outsider.post('/api/v1/me/tokens')
      .send({ name: 'Home Assistant', scopes: ['households:read', 'events:write'] })
      .expect(201);
    await people.Outsider.post('/api/v1/me/tokens')
      .set('Accept-Language', 'nb-NO, en;q=0.5')
      .send({ name: 'Hjemme', scopes: ['rules:read'], expiresAt: '2027-01-31T00:00:00Z' })
      .expect(201);
    const texts = (await h.mailsTo('outsider@example.test')).map((m) => m.text);
    const en = texts.find((t) => t.includes('"Home Assistant"'));
    expect(en).to.contain(
      'It may see your households and add and change meal events on your behalf (scopes: households:read, events:write), and does not expire.',
    );
    const nb = texts.find((t) => t.includes('«Hjemme»'));
    expect(nb).to.match(/Det kan se måltidsreglene på dine vegne \(tilganger: rules:read\), til 2027-01-31[^ ]* \(UTC\)\./);
    for (const t of [en, nb]) expect(t).to.not.match(/(It may|Det kan) (households|events|rules):/);
  });

  it('GET /me and GET household cost one statement with a token, as with the session cookie', async () => {
    const token = await tokenFor('Owner', ['households:read']);
    const queries = (res: request.Response): number => JSON.parse(res.headers['x-diagnostics'] ?? '{"db":{"queries":-1}}').db.queries;
    for (const path of ['/api/v1/me', base()]) {
      const byToken = await request(h.app).get(path).set('Authorization', `Bearer ${token}`).set('X-Diagnostics', '1').expect(200);
      const byCookie = await people.Owner.get(path).set('X-Diagnostics', '1').expect(200);
      expect(queries(byToken), path).to.equal(1);
      expect(queries(byCookie), path).to.equal(1);
      const { serverNow: _a, ...tokenBody } = byToken.body;
      const { serverNow: _b, ...cookieBody } = byCookie.body;
      expect(tokenBody).to.deep.equal(cookieBody);
    }
    // Another minute: still one statement (lastUsedAt is written after the answer, outside the request).
    h.clock.advance(60_000);
    expect(queries(await request(h.app).get(base()).set('Authorization', `Bearer ${token}`).set('X-Diagnostics', '1').expect(200))).to.equal(1);
  });

  it('a token deleted on one instance is refused at once by another instance on the same database', async () => {
    const knex = createKnex(h.db.url);
    let second: Service | undefined;
    try {
      second = await buildService({
        config: loadConfig({ DATA_DIR: h.dataDir, PASSWORD_BREACH_API: 'off', PUBLIC_BASE_URL: 'http://localhost:8080' }),
        knex,
        logger: createLogger({ level: 'silent' }),
        clock: h.clock,
        startMailer: false,
      });
      const token = await tokenFor('Adult', ['events:read']);
      const id = (await people.Adult.get('/api/v1/me/tokens').expect(200)).body.items[0].id;
      const read = () => request(second!.app).get(`${base()}/events/${eventId}`).set('Authorization', `Bearer ${token}`);
      expect((await read()).status).to.equal(200);
      await people.Adult.delete(`/api/v1/me/tokens/${id}`).expect(204);
      const after = await read();
      expect(after.status).to.equal(401);
      expect(after.body.code).to.equal('unauthenticated');
    } finally {
      await second?.close();
      await knex.destroy();
    }
  });
});
