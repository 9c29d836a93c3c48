import { expect } from 'chai';
import request from 'supertest';
import { type Harness, linkTo, signUp, startHarness } from './harness.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('user journeys through the composed service', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  it('signs up, confirms by the mailed link, creates a household, invites a Junior who completes onboarding', async () => {
    const owner = await signUp(h.app, 'Kari@Example.com', 'Kari');
    const me = await owner.get('/api/v1/me');
    expect(me.status).to.equal(200);
    expect(me.headers['cache-control']).to.equal('no-store');
    expect(me.body.user).to.include({ email: 'Kari@Example.com', displayName: 'Kari' });
    expect(me.body.user.id).to.match(UUID);
    expect(me.body).to.include({ emailConfirmed: false, hasPassword: true, isPlatformAdmin: false });
    expect(me.body.serverNow).to.match(ISO_MS);
    expect(me.body.memberships).to.deep.equal([]);

    const [confirmation] = await h.mailsTo('kari@example.com');
    expect(confirmation, 'a confirmation mail').to.not.equal(undefined);
    const link = linkTo(confirmation!, '/confirm-email');
    expect(link.origin).to.equal('http://localhost:8080');
    expect(link.searchParams.get('userId')).to.equal(me.body.user.id);
    const confirm = await request(h.app)
      .post('/api/v1/auth/confirm-email')
      .send({ userId: link.searchParams.get('userId'), token: link.searchParams.get('token') });
    expect(confirm.status).to.equal(204);
    expect((await owner.get('/api/v1/me')).body.emailConfirmed).to.equal(true);

    const created = await owner
      .post('/api/v1/households')
      .send({ name: 'Nordmann', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30', preferredLanguage: 'nb', inviteCode: null });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const household = created.body;
    expect(household).to.include({
      name: 'Nordmann',
      timeZoneId: 'Europe/Oslo',
      defaultDinnerTime: '17:30',
      preferredLanguage: 'nb',
      country: 'NO',
      measurementSystem: 'Metric',
      dryGoodsMeasure: 'Weight',
      onboardingCompletedAt: null,
    });
    const memberships = (await owner.get('/api/v1/me')).body.memberships;
    expect(memberships).to.have.length(1);
    expect(memberships[0]).to.include({ householdId: household.id, householdName: 'Nordmann', role: 'Owner' });

    const invitation = await owner.post(`/api/v1/households/${household.id}/invitations`).send({ role: 'Junior' });
    expect(invitation.status).to.equal(201);
    const junior = await signUp(h.app, 'ola@example.com', 'Ola');
    const accepted = await junior.post('/api/v1/invitations/accept').send({ code: invitation.body.code });
    expect(accepted.status).to.equal(200);
    expect(accepted.body).to.include({ householdId: household.id, role: 'Junior' });

    // a Junior may not change settings or rules, but may finish onboarding
    expect((await junior.patch(`/api/v1/households/${household.id}`).send({ name: 'Mine' })).status).to.equal(403);
    expect(
      (
        await junior
          .post(`/api/v1/households/${household.id}/rules`)
          .send({ payload: { kind: 'RepeatAfterDays', days: 7 }, strength: 'Hard', scope: 'Permanent', startDate: null, endDate: null })
      ).status,
    ).to.equal(403);
    const done = await junior.post(`/api/v1/households/${household.id}/onboarding/complete`).send({ skippedSteps: ['Pantry'], defaultDinnerTime: '18:00' });
    expect(done.status).to.equal(200);
    expect(done.body.alreadyCompleted).to.equal(false);
    expect(done.body.conversationId).to.match(UUID);
    const again = await owner.post(`/api/v1/households/${household.id}/onboarding/complete`).send({ skippedSteps: null, defaultDinnerTime: '19:00' });
    expect(again.body).to.deep.equal({
      onboardingCompletedAt: done.body.onboardingCompletedAt,
      alreadyCompleted: true,
      conversationId: done.body.conversationId,
    });
    const after = await owner.get(`/api/v1/households/${household.id}`);
    expect(after.body.defaultDinnerTime).to.equal('18:00');
    const thread = await junior.get(`/api/v1/households/${household.id}/conversations/${done.body.conversationId}`);
    expect(thread.status).to.equal(200);
    expect(thread.body.messages.map((m: { kind: string }) => m.kind)).to.include('onboarding_recap');

    // an outsider learns nothing
    const stranger = await signUp(h.app, 'stranger@example.com');
    expect((await stranger.get(`/api/v1/households/${household.id}`)).status).to.equal(404);
    expect((await stranger.get(`/api/v1/households/${household.id}/events`)).status).to.equal(404);
    expect((await stranger.get(`/api/v1/households/${household.id}/rules`)).status).to.equal(404);
  });

  it('keeps rules, parses a sentence into proposals that create accepts, and pages events', async () => {
    const adult = await signUp(h.app, 'planner@example.com', 'Planner');
    const household = (await adult.post('/api/v1/households').send({ name: 'Planners', timeZoneId: 'America/New_York', defaultDinnerTime: '18:00' })).body;
    expect(household).to.include({ country: 'US', measurementSystem: 'UsCustomary', dryGoodsMeasure: 'Volume', preferredLanguage: 'en' });

    const defaults = await adult.get(`/api/v1/households/${household.id}/rules/defaults`);
    expect(defaults.status).to.equal(200);
    expect(defaults.body.active).to.equal(true);
    expect(defaults.body.rules.length).to.be.greaterThan(0);

    const parsed = await adult
      .post(`/api/v1/households/${household.id}/rules/parse`)
      .send({ text: 'fish twice a week, no meat on Mondays and tacos on Fridays' });
    expect(parsed.status).to.equal(200);
    expect(parsed.body.proposals).to.have.length(3);
    for (const p of parsed.body.proposals) {
      const made = await adult.post(`/api/v1/households/${household.id}/rules`).send(p.request);
      expect(made.status, JSON.stringify(made.body)).to.equal(201);
      expect(made.body.source).to.equal('UserDeclared');
    }
    expect((await adult.get(`/api/v1/households/${household.id}/rules`)).body).to.have.length(3);
    expect((await adult.get(`/api/v1/households/${household.id}/rules/defaults`)).body.active).to.equal(false);

    for (let d = 1; d <= 5; d++) {
      const res = await adult.post(`/api/v1/households/${household.id}/events`).send({
        date: `2026-12-0${d}`,
        eventType: 'Guests',
        servingTime: '18:00',
        availableCookingMinutes: 45,
        notes: '',
        participants: [{ memberId: null, name: 'Grandma' }],
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: request.Response = await adult.get(`/api/v1/households/${household.id}/events`).query({ limit: 2, ...(cursor ? { cursor } : {}) });
      expect(page.status).to.equal(200);
      expect(page.body.total).to.equal(null);
      seen.push(...page.body.items.map((e: { date: string }) => e.date));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).to.deep.equal(['2026-12-01', '2026-12-02', '2026-12-03', '2026-12-04', '2026-12-05']);
    expect((await adult.get(`/api/v1/households/${household.id}/events?cursor=forged`)).status).to.equal(400);
    expect((await adult.get(`/api/v1/households/${household.id}/events`).query({ from: '0000-01-01' })).body.code).to.equal('validation_failed');

    // meal-events' relations migration ran: a household's events go with the household.
    const events = () => h.db.knex('mealEvents').where({ householdId: household.id }).count({ n: '*' }).first();
    expect(await events()).to.deep.equal({ n: '5' });
    await h.db.knex('households').where({ id: household.id }).delete();
    expect(await events()).to.deep.equal({ n: '0' });
  });

  it('registers a phone, moves it to the next login on the same phone, and forgets it on delete', async () => {
    const a = await signUp(h.app, 'phone-a@example.com');
    const b = await signUp(h.app, 'phone-b@example.com');
    const put = await a.put('/api/v1/me/devices').send({ token: 'tok-123', platform: 'ios', provider: null });
    expect(put.status).to.equal(200);
    expect(put.body).to.include({ token: 'tok-123', platform: 'ios', provider: 'fcm', listChanges: true, householdNews: true, runDone: true, reminders: true });
    expect((await b.put('/api/v1/me/devices').send({ token: 'tok-123', platform: 'ios', provider: null })).status).to.equal(200);
    expect((await a.get('/api/v1/me/devices/tok-123')).status).to.equal(404);
    const patched = await b.patch('/api/v1/me/devices/tok-123').send({ listChanges: false, householdNews: true, runDone: false });
    expect(patched.body).to.include({ listChanges: false, runDone: false, reminders: true });
    expect((await b.delete('/api/v1/me/devices/tok-123')).status).to.equal(204);
    expect((await b.get('/api/v1/me/devices/tok-123')).status).to.equal(404);
  });

  it('signs out everywhere on logout: a copied cookie fails its next request', async () => {
    const agent = await signUp(h.app, 'twice@example.com');
    const login = await request(h.app).post('/api/v1/auth/login').send({ email: 'twice@example.com', password: 'correct horse battery' });
    expect(login.status).to.equal(200);
    const cookie = login.headers['set-cookie']![0]!.split(';')[0]!;
    expect((await request(h.app).get('/api/v1/me').set('Cookie', cookie)).status).to.equal(200);
    expect((await agent.post('/api/v1/auth/logout')).status).to.equal(204);
    const after = await request(h.app).get('/api/v1/me').set('Cookie', cookie);
    expect(after.status).to.equal(401);
    expect(after.body.code).to.equal('unauthenticated');
  });

  it('serves the OpenAPI document with every operation of the spec', async () => {
    const doc = (await request(h.app).get('/api/v1/openapi.json')).body;
    const ops = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([p, m]) =>
      Object.keys(m).map((verb) => `${verb.toUpperCase()} ${p}`),
    );
    for (const op of [
      'GET /api/v1/me',
      'PATCH /api/v1/me',
      'POST /api/v1/me/password',
      'POST /api/v1/me/email',
      'POST /api/v1/auth/register',
      'POST /api/v1/auth/login',
      'POST /api/v1/auth/logout',
      'POST /api/v1/auth/confirm-email',
      'POST /api/v1/auth/confirm-email-change',
      'POST /api/v1/auth/resend-confirmation',
      'POST /api/v1/auth/forgot-password',
      'POST /api/v1/auth/reset-password',
      'PUT /api/v1/me/devices',
      'GET /api/v1/me/devices/{token}',
      'PATCH /api/v1/me/devices/{token}',
      'DELETE /api/v1/me/devices/{token}',
      'GET /api/v1/time-zones',
      'POST /api/v1/households',
      'GET /api/v1/households/{householdId}',
      'PATCH /api/v1/households/{householdId}',
      'POST /api/v1/households/{householdId}/onboarding/complete',
      'GET /api/v1/households/{householdId}/events',
      'GET /api/v1/households/{householdId}/rules',
      'POST /api/v1/households/{householdId}/rules',
      'GET /api/v1/households/{householdId}/rules/defaults',
      'POST /api/v1/households/{householdId}/rules/parse',
      'PATCH /api/v1/households/{householdId}/rules/{ruleId}',
      'DELETE /api/v1/households/{householdId}/rules/{ruleId}',
      'GET /api/v1/auth/providers',
      'GET /api/v1/auth/challenge/{provider}',
      'GET /api/v1/auth/external-callback',
      'POST /api/v1/auth/exchange',
      'POST /api/v1/auth/idp/native',
      'GET /api/v1/me/sessions',
      'DELETE /api/v1/me/sessions/{sessionId}',
      'DELETE /api/v1/me/sessions',
      'GET /api/v1/me/logins',
      'DELETE /api/v1/me/logins/{provider}',
      'GET /api/v1/me/export',
      'DELETE /api/v1/me',
    ])
      expect(ops, op).to.include(op);
  });
});
