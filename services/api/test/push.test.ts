import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FakeApns, FakeFcm } from '@svc/test-support';
import { expect } from 'chai';
import request from 'supertest';
import { type Harness, signUp, startHarness } from './harness.js';

// The composed service with FCM and APNs pointed at local fakes: a phone registered with `fcm` or
// `apns` receives what the internal route sent, and the inbox keeps it.
describe('push through the composed service (FCM and APNs fakes)', () => {
  let h: Harness;
  let fcm: FakeFcm;
  let apns: FakeApns;
  let keys: string;
  const TOKEN = 'planner-service-token';

  before(async () => {
    fcm = new FakeFcm();
    apns = new FakeApns();
    await Promise.all([fcm.start(), apns.start()]);
    keys = fs.mkdtempSync(path.join(os.tmpdir(), 'push-keys-'));
    fs.writeFileSync(path.join(keys, 'fcm.json'), JSON.stringify(fcm.serviceAccount));
    fs.writeFileSync(path.join(keys, 'apns.p8'), apns.p8);
    h = await startHarness(
      {
        FCM_PROJECT_ID: fcm.projectId,
        FCM_CREDENTIALS: path.join(keys, 'fcm.json'),
        FCM_URL: fcm.url,
        FCM_TOKEN_URL: fcm.tokenUrl,
        APNS_KEY_ID: apns.keyId,
        APNS_TEAM_ID: apns.teamId,
        APNS_KEY: path.join(keys, 'apns.p8'),
        APNS_TOPIC: 'no.example.mealplanner',
        APNS_URL: apns.url,
        INTERNAL_API_TOKENS: `other,${TOKEN}`,
      },
      { apnsCa: apns.ca },
    );
    // The provider signs with the service's (manual) clock; the fake judges the token's age by the same.
    apns.now = () => h.clock.now().getTime();
  });
  after(async () => {
    await h.close();
    await Promise.all([fcm.stop(), apns.stop()]);
    fs.rmSync(keys, { recursive: true, force: true });
  });

  it('delivers an internal notification to every member phone that wants the kind, and keeps it in each inbox', async () => {
    const ada = await signUp(h.app, 'ada@example.com', 'Ada');
    const bo = await signUp(h.app, 'bo@example.com', 'Bo');
    const household = (await ada.post('/api/v1/households').send({ name: 'Home', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '18:00' })).body;
    expect(household.id, JSON.stringify(household)).to.be.a('string');
    const invite = await ada.post(`/api/v1/households/${household.id}/invitations`).send({ role: 'Adult' });
    expect(invite.status, JSON.stringify(invite.body)).to.be.oneOf([200, 201]);
    const joined = await bo.post('/api/v1/invitations/accept').send({ code: invite.body.code });
    expect(joined.status, JSON.stringify(joined.body)).to.be.oneOf([200, 201]);
    await ada.put('/api/v1/me/devices').send({ token: 'ada-android', platform: 'android', provider: 'fcm' }).expect(200);
    await bo.put('/api/v1/me/devices').send({ token: 'bo-iphone', platform: 'ios', provider: 'apns' }).expect(200);
    await bo.put('/api/v1/me/devices').send({ token: 'bo-old', platform: 'android' }).expect(200);
    await bo.patch('/api/v1/me/devices/bo-old').send({ listChanges: true, householdNews: true, runDone: false }).expect(200);

    // Bo's joining was householdNews for Ada: out of the way first.
    await h.service.jobs.runDue();
    fcm.delivered.length = 0;
    apns.delivered.length = 0;
    const sent = await request(h.app)
      .post(`/internal/v1/households/${household.id}/notifications`)
      .set('Authorization', `Bearer ${TOKEN}`)
      .send({ kind: 'runDone', title: 'Plan ready', body: 'Next week is planned', data: { runId: 'r1' } })
      .expect(202);
    expect(sent.body.recipients).to.equal(2);
    // Not delivered before the job runs; then exactly once to each phone that wants runDone.
    expect(fcm.delivered).to.have.length(0);
    await h.service.jobs.runDue();
    expect(fcm.delivered.map((d) => d.token)).to.deep.equal(['ada-android']);
    expect(apns.delivered.map((d) => d.token)).to.deep.equal(['bo-iphone']);
    expect(apns.delivered[0]!.payload.aps).to.deep.include({ alert: { title: 'Plan ready', body: 'Next week is planned' } });
    for (const agent of [ada, bo]) {
      const inbox = (await agent.get('/api/v1/me/notifications').expect(200)).body;
      const runDone = inbox.items.filter((i: { kind: string }) => i.kind === 'runDone');
      expect(runDone.map((i: { id: string; data: unknown }) => [i.id, i.data])).to.deep.equal([[sent.body.id, { runId: 'r1' }]]);
    }
    // A session alone never reaches the internal route.
    await ada.post(`/internal/v1/households/${household.id}/notifications`).send({ kind: 'runDone', title: 't', body: 'b' }).expect(401);
  });

  it("tells a household's members of every change from the households routes (householdNews), never the one who acted", async () => {
    for (const d of [fcm.delivered, apns.delivered]) d.length = 0;
    const minute = () => h.clock.advanceSeconds(61); // past the batching minute: each news goes out as itself
    const ada = await signUp(h.app, 'ada2@example.com', 'Ada');
    const bo = await signUp(h.app, 'bo2@example.com', 'Bo');
    const cy = await signUp(h.app, 'cy2@example.com', 'Cy');
    const home = (await ada.post('/api/v1/households').send({ name: 'Home', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '18:00' }).expect(201)).body;
    for (const [agent, token] of [
      [ada, 'ada2'],
      [bo, 'bo2'],
      [cy, 'cy2'],
    ] as const)
      await agent.put('/api/v1/me/devices').send({ token, platform: 'android', provider: 'fcm' }).expect(200);
    const join = async (agent: typeof ada) => {
      const code = (await ada.post(`/api/v1/households/${home.id}/invitations`).send({ role: 'Adult' })).body.code;
      await agent.post('/api/v1/invitations/accept').send({ code }).expect(200);
    };
    const heard = async () => {
      await h.service.jobs.runDue();
      const got = fcm.delivered.map((d) => `${d.token}: ${(d.message.notification as { body: string }).body}`);
      fcm.delivered.length = 0;
      minute();
      return got.sort();
    };
    const memberId = async (name: string) =>
      ((await ada.get(`/api/v1/households/${home.id}/members`).expect(200)).body as { memberId: string; displayName: string }[]).find(
        (m) => m.displayName === name,
      )!.memberId;

    await join(bo);
    expect(await heard()).to.deep.equal(['ada2: Bo joined Home']);
    await join(cy);
    expect(await heard()).to.deep.equal(['ada2: Cy joined Home', 'bo2: Cy joined Home']);
    await ada.patch(`/api/v1/households/${home.id}`).send({ name: 'Cabin' }).expect(200);
    expect(await heard()).to.deep.equal(['bo2: Ada renamed the household to Cabin', 'cy2: Ada renamed the household to Cabin']);
    await ada
      .patch(`/api/v1/households/${home.id}/members/${await memberId('Cy')}`)
      .send({ role: 'Junior' })
      .expect(200);
    expect(await heard()).to.deep.equal(['bo2: Ada made Cy a junior', 'cy2: Ada made Cy a junior']);
    await ada
      .post(`/api/v1/households/${home.id}/owner`)
      .send({ memberId: await memberId('Bo') })
      .expect(200);
    expect(await heard()).to.deep.equal(['bo2: Ada handed Cabin over to Bo', 'cy2: Ada handed Cabin over to Bo']);
    await bo.delete(`/api/v1/households/${home.id}/members/${await memberId('Cy')}`).expect(204);
    // The removed member is no longer told.
    expect(await heard()).to.deep.equal(['ada2: Bo removed Cy from Cabin']);
    await ada.delete(`/api/v1/households/${home.id}/members/${await memberId('Ada')}`).expect(204);
    expect(await heard()).to.deep.equal(['bo2: Ada left Cabin']);
    // A PATCH that does not rename tells nobody.
    await bo.patch(`/api/v1/households/${home.id}`).send({ defaultDinnerTime: '19:00' }).expect(200);
    expect(await heard()).to.deep.equal([]);
  });

  it('a rename is news once per real change: parallel renames each told, the same name in parallel once, refused or unchanged ones never', async () => {
    const ada = await signUp(h.app, 'ada-renames@example.com', 'Ada');
    const bo = await signUp(h.app, 'bo-renames@example.com', 'Bo');
    const home = (await ada.post('/api/v1/households').send({ name: 'Home', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '18:00' }).expect(201)).body;
    const code = (await ada.post(`/api/v1/households/${home.id}/invitations`).send({ role: 'Adult' })).body.code;
    await bo.post('/api/v1/invitations/accept').send({ code }).expect(200);
    await h.service.jobs.runDue();
    const told = async () => {
      await h.service.jobs.runDue();
      const items = (await bo.get('/api/v1/me/notifications?limit=100').expect(200)).body.items as { kind: string; body: string; data: { event?: string } }[];
      return items.filter((i) => i.kind === 'householdNews' && i.data.event === 'householdRenamed').map((i) => i.body);
    };
    const renames = async () => (await told()).length;
    const jobsLeft = async () =>
      Number((await h.db.knex.raw(`select count(*)::int as n from pgboss.job where name = 'households-renamed' and state = 'created'`)).rows[0].n);

    // Refused: not the Owner (403), a name the contract refuses (400), no such household (404): no news, no job, no write.
    await bo.patch(`/api/v1/households/${home.id}`).send({ name: 'Bo’s' }).expect(403);
    await ada.patch(`/api/v1/households/${home.id}`).send({ name: '', maxNewDishesPerWeek: 3 }).expect(400);
    await ada.patch('/api/v1/households/00000000-0000-4000-8000-000000000000').send({ name: 'Nowhere' }).expect(404);
    expect(await jobsLeft()).to.equal(0);
    expect((await ada.get(`/api/v1/households/${home.id}`).expect(200)).body).to.include({ name: 'Home', maxNewDishesPerWeek: home.maxNewDishesPerWeek });
    // The name it already has, and a PATCH of other settings: no news.
    await ada.patch(`/api/v1/households/${home.id}`).send({ name: 'Home' }).expect(200);
    await ada.patch(`/api/v1/households/${home.id}`).send({ maxNewDishesPerWeek: 2 }).expect(200);
    expect(await jobsLeft()).to.equal(0);
    expect(await renames()).to.equal(0);

    // Six parallel renames to one new name: one changed it, the others wrote the name it then had.
    const same = await Promise.all(Array.from({ length: 6 }, () => ada.patch(`/api/v1/households/${home.id}`).send({ name: 'Cabin' })));
    expect(same.map((r) => r.status)).to.deep.equal([200, 200, 200, 200, 200, 200]);
    expect(await jobsLeft()).to.equal(1);
    expect(await renames()).to.equal(1);
    // Five parallel renames to five names: each changed it, each is news (the inbox keeps each; the phone's minute batches them).
    const names = ['A', 'B', 'C', 'D', 'E'].map((x) => `Cabin ${x}`);
    await Promise.all(names.map((name) => ada.patch(`/api/v1/households/${home.id}`).send({ name }).expect(200)));
    expect(await jobsLeft()).to.equal(5);
    expect(await renames()).to.equal(6);
    expect(await jobsLeft()).to.equal(0);
    // The news names the one who renamed it, as the row recorded it, and the name as it is when told.
    const row = (await h.db.knex('households').where({ id: home.id }).first()) as { renamedBy: string; name: string };
    expect(names).to.include(row.name);
    expect((await told()).sort()).to.deep.equal(['Ada renamed the household to Cabin', ...Array(5).fill(`Ada renamed the household to ${row.name}`)]);
    expect(row.renamedBy).to.equal((await ada.get('/api/v1/me').expect(200)).body.user.id);
  });

  it('reminds the participants of a meal event at its time less reminderMinutes (household zone), once, on their phones; a moved event moves it', async () => {
    for (const d of [fcm.delivered, apns.delivered]) d.length = 0;
    h.clock.set('2026-11-22T09:00:00.000Z');
    const ada = await signUp(h.app, 'ada3@example.com', 'Ada');
    const bo = await signUp(h.app, 'bo3@example.com', 'Bo');
    const home = (await ada.post('/api/v1/households').send({ name: 'Home', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '18:00' }).expect(201)).body;
    const code = (await ada.post(`/api/v1/households/${home.id}/invitations`).send({ role: 'Adult' })).body.code;
    await bo.post('/api/v1/invitations/accept').send({ code }).expect(200);
    await ada.put('/api/v1/me/devices').send({ token: 'ada3-android', platform: 'android', provider: 'fcm' }).expect(200);
    await bo.put('/api/v1/me/devices').send({ token: 'bo3-iphone', platform: 'ios', provider: 'apns' }).expect(200);
    // Bo sleeps from 17:00 to 19:00: reminders come all the same.
    await bo
      .patch('/api/v1/me/devices/bo3-iphone')
      .send({ listChanges: true, householdNews: true, runDone: true, quietHours: { start: '17:00', end: '19:00' } })
      .expect(200);
    await h.service.jobs.runDue(); // Bo's joining (householdNews) out of the way
    for (const d of [fcm.delivered, apns.delivered]) d.length = 0;
    const members = (await ada.get(`/api/v1/households/${home.id}/members`).expect(200)).body as { memberId: string; displayName: string }[];
    const boMember = members.find((m) => m.displayName === 'Bo')!.memberId;
    const body = {
      date: '2026-11-24',
      eventType: 'Guests',
      servingTime: '18:00',
      availableCookingMinutes: 60,
      notes: '',
      participants: [{ memberId: boMember, name: 'Bo' }],
      reminderMinutes: 45,
    };
    const event = (await ada.post(`/api/v1/households/${home.id}/events`).send(body).expect(201)).body;
    expect(event.reminderMinutes).to.equal(45);
    // Moved to 18:30 by two parallel PUTs: the reminder moves from 16:15Z (18:00 Oslo less 45 minutes) to 16:45Z.
    await Promise.all(
      [0, 1].map(() =>
        ada
          .put(`/api/v1/households/${home.id}/events/${event.id}`)
          .send({ ...body, servingTime: '18:30' })
          .expect(200),
      ),
    );
    /** The clock moves on; jobs due by then are made due in the database's time too, and run. */
    const runAt = async (at: string) => {
      h.clock.set(at);
      await h.db.knex.raw(
        `update pgboss.job set start_after = now() where name = 'meal-events-reminders' and state = 'created' and (data->>'f')::timestamptz <= ?::timestamptz`,
        [at],
      );
      await h.service.jobs.runDue();
    };
    // The job of 16:15Z runs and finds the event moved: nothing.
    await runAt('2026-11-24T16:40:00.000Z');
    expect(apns.delivered).to.have.length(0);
    await runAt('2026-11-24T16:45:30.000Z');
    await runAt('2026-11-24T17:20:00.000Z');
    expect(apns.delivered.map((d) => [d.token, (d.payload.aps as { alert: unknown }).alert])).to.deep.equal([
      ['bo3-iphone', { title: 'Reminder: Guests', body: 'Guests at 18:30 on 2026-11-24' }],
    ]);
    expect(JSON.stringify(apns.delivered[0]!.payload)).to.include(event.id);
    // Ada is no participant: nothing on her phone, nothing in her inbox.
    expect(fcm.delivered).to.have.length(0);
    expect((await bo.get('/api/v1/me/notifications').expect(200)).body.items.filter((i: { kind: string }) => i.kind === 'reminders')).to.have.length(1);
    expect((await ada.get('/api/v1/me/notifications').expect(200)).body.items.filter((i: { kind: string }) => i.kind === 'reminders')).to.have.length(0);
  });

  it('documents the new operations in the OpenAPI document', async () => {
    const doc = (await request(h.app).get('/api/v1/openapi.json').expect(200)).body;
    expect(doc.paths['/internal/v1/households/{householdId}/notifications'].post.operationId).to.equal('sendHouseholdNotification');
    expect(doc.paths['/api/v1/me/notifications'].get.operationId).to.equal('listNotifications');
    expect(doc.paths['/api/v1/me/notifications/read'].post.operationId).to.equal('markNotificationsRead');
  });

  it('a household time-zone change moves its pending reminders: new jobs at the new zone instant; one the move puts in the past is dropped', async () => {
    h.clock.set('2026-11-22T09:00:00.000Z');
    const ada = await signUp(h.app, 'zone-ada@example.com', 'Ada');
    const home = (await ada.post('/api/v1/households').send({ name: 'Zone', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '18:00' }).expect(201)).body;
    const events = `/api/v1/households/${home.id}/events`;
    const base = { eventType: 'Guests', availableCookingMinutes: 60, notes: '', participants: [], reminderMinutes: 30 };
    // 18:00 Oslo on 10 December less 30 minutes: 16:30Z. 12:00 Oslo today less 30 minutes: 10:30Z (ahead of 09:00Z).
    const later = (
      await ada
        .post(events)
        .send({ ...base, date: '2026-12-10', servingTime: '18:00' })
        .expect(201)
    ).body;
    const today = (
      await ada
        .post(events)
        .send({ ...base, date: '2026-11-22', servingTime: '12:00' })
        .expect(201)
    ).body;
    const jobs = async (eventId: string) =>
      (
        await h.db.knex.raw(`select data->>'f' as f from pgboss.job where name = 'meal-events-reminders' and data->'p'->>'e' = ? order by 1`, [eventId])
      ).rows.map((r: { f: string }) => r.f);
    const instant = async (eventId: string) =>
      (await h.db.knex.raw('select reminder_at as at from meal_events where id = ?', [eventId])).rows[0].at as Date | null;
    expect(await jobs(later.id)).to.deep.equal(['2026-12-10T16:30:00.000Z']);
    expect(await jobs(today.id)).to.deep.equal(['2026-11-22T10:30:00.000Z']);

    // Auckland is UTC+13 in November: 18:00 there on 10 December is 05:00Z (reminder 04:30Z); 12:00 today
    // there was 23:00Z yesterday, so today's reminder would be in the past: dropped, not sent late.
    await ada.patch(`/api/v1/households/${home.id}`).send({ timeZoneId: 'Pacific/Auckland' }).expect(200);
    expect((await instant(later.id))?.toISOString()).to.equal('2026-12-10T04:30:00.000Z');
    expect(await jobs(later.id)).to.deep.equal(['2026-12-10T04:30:00.000Z', '2026-12-10T16:30:00.000Z']);
    expect(await instant(today.id)).to.equal(null);
    expect(await jobs(today.id)).to.deep.equal(['2026-11-22T10:30:00.000Z']);
    // Every job runs: the old ones find the instant changed (or gone) and send nothing; the new one reminds once.
    await h.db.knex.raw(`update pgboss.job set start_after = now() where name = 'meal-events-reminders' and state = 'created'`);
    h.clock.set('2026-12-10T16:31:00.000Z');
    await h.service.jobs.runDue();
    const reminders = (await ada.get('/api/v1/me/notifications').expect(200)).body.items.filter((i: { kind: string }) => i.kind === 'reminders');
    expect(reminders.filter((i: object) => JSON.stringify(i).includes(later.id))).to.have.length(1);
    expect(reminders.filter((i: object) => JSON.stringify(i).includes(today.id))).to.have.length(0);
    // Writing the same zone again moves nothing and enqueues nothing.
    h.clock.set('2026-11-22T09:00:00.000Z');
    await ada.patch(`/api/v1/households/${home.id}`).send({ timeZoneId: 'Pacific/Auckland' }).expect(200);
    expect(
      await h.db.knex
        .raw(`select count(*)::int as n from pgboss.job where name = 'meal-events-reminders' and data->'p'->>'e' = ?`, [later.id])
        .then((r) => r.rows[0].n),
    ).to.equal(2);
  });
});
