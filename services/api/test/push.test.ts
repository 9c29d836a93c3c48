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
      expect(inbox.items.map((i: { id: string; data: unknown }) => [i.id, i.data])).to.deep.equal([[sent.body.id, { runId: 'r1' }]]);
    }
    // A session alone never reaches the internal route.
    await ada.post(`/internal/v1/households/${household.id}/notifications`).send({ kind: 'runDone', title: 't', body: 'b' }).expect(401);
  });

  it('documents the new operations in the OpenAPI document', async () => {
    const doc = (await request(h.app).get('/api/v1/openapi.json').expect(200)).body;
    expect(doc.paths['/internal/v1/households/{householdId}/notifications'].post.operationId).to.equal('sendHouseholdNotification');
    expect(doc.paths['/api/v1/me/notifications'].get.operationId).to.equal('listNotifications');
    expect(doc.paths['/api/v1/me/notifications/read'].post.operationId).to.equal('markNotificationsRead');
  });
});
