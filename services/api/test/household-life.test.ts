import { createLogger } from '@svc/http-kit';
import { expect } from 'chai';
import request from 'supertest';
import { loadConfig } from '../src/config.js';
import { buildService, type Service } from '../src/service.js';
import { type Harness, signUp, startHarness } from './harness.js';

describe("a household's life through the composed service", () => {
  let h: Harness;
  let second: Service;
  before(async () => {
    h = await startHarness({ AUTH_RATE_LIMIT: '1000000' });
    // A second instance on the same database, as a second replica behind a load balancer.
    second = await buildService({
      config: loadConfig({ DATA_DIR: h.dataDir, SMTP_URL: h.smtp.url, PASSWORD_BREACH_API: 'off', PUBLIC_BASE_URL: 'http://localhost:8080' }),
      knex: h.db.knex,
      logger: createLogger({ level: 'silent' }),
      clock: h.clock,
      startMailer: false,
    });
  });
  after(async () => {
    await second?.close();
    await h?.close();
  });

  it('a removed member loses access on their next request, on every instance; deleting the household takes its events along', async () => {
    const owner = await signUp(h.app, 'life-owner@example.com', 'Owner');
    const member = await signUp(h.app, 'life-member@example.com', 'Member');
    const household = (await owner.post('/api/v1/households').send({ name: 'Life', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' })).body;
    const { code } = (await owner.post(`/api/v1/households/${household.id}/invitations`).send({ role: 'Adult' })).body;
    const joined = await member.post('/api/v1/invitations/accept').send({ code });
    expect(joined.status).to.equal(200);
    // The member signed in on the second instance too.
    const memberOnSecond = request.agent(second.app);
    expect((await memberOnSecond.post('/api/v1/auth/login').send({ email: 'life-member@example.com', password: 'correct horse battery' })).status).to.equal(
      200,
    );
    const onSecond = () => memberOnSecond.get(`/api/v1/households/${household.id}`);
    expect((await onSecond()).status).to.equal(200);

    const removed = await owner.delete(`/api/v1/households/${household.id}/members/${joined.body.memberId}`);
    expect(removed.status).to.equal(204);
    expect((await member.get(`/api/v1/households/${household.id}`)).status).to.equal(404);
    expect((await onSecond()).status).to.equal(404);
    expect((await member.get('/api/v1/me')).body.memberships).to.deep.equal([]);

    const event = await owner.post(`/api/v1/households/${household.id}/events`).send({
      date: '2026-12-01',
      eventType: 'Guests',
      servingTime: '18:00',
      availableCookingMinutes: 45,
      notes: '',
      participants: [],
    });
    expect(event.status).to.equal(201);
    expect((await owner.delete(`/api/v1/households/${household.id}`).send({ confirmName: 'life' })).body.code).to.equal('confirmation_mismatch');
    const deleted = await owner.delete(`/api/v1/households/${household.id}`).send({ confirmName: 'Life' });
    expect(deleted.status).to.equal(204);
    expect(await h.db.knex('mealEvents').where({ householdId: household.id }).count({ n: '*' }).first()).to.deep.equal({ n: '0' });
    expect((await owner.get(`/api/v1/households/${household.id}`)).status).to.equal(404);
  });

  it('documents the four operations in the OpenAPI document', async () => {
    const doc = (await request(h.app).get('/api/v1/openapi.json')).body;
    expect(doc.paths['/api/v1/households/{householdId}/members/{memberId}']).to.have.keys('patch', 'delete');
    expect(doc.paths['/api/v1/households/{householdId}/owner']).to.have.keys('post');
    expect(doc.paths['/api/v1/households/{householdId}']).to.include.keys('delete');
  });
});
