import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import { type Harness, signUp, startHarness } from './harness.js';

/** The feed's lines with folding undone (RFC 5545 §3.1). */
function unfolded(text: string): string[] {
  return text.replace(/\r\n[ \t]/g, '').split('\r\n');
}

describe('calendar feed, event participants and the device list in the composed service', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  it("subscribes to a household's meals: local times in the household's zone, which follows the household's settings", async () => {
    const owner = await signUp(h.app, 'cal@example.com', 'Cal');
    const household = (await owner.post('/api/v1/households').send({ name: 'Kalender', timeZoneId: 'America/New_York', defaultDinnerTime: '18:00' })).body;
    const events = `/api/v1/households/${household.id}/events`;
    const [me] = (await owner.get(`/api/v1/households/${household.id}/members`).expect(200)).body;

    // Participants are checked against the household's real members.
    const body = (memberId: string | null) => ({
      date: '2026-11-28',
      eventType: 'Guests',
      servingTime: '18:30',
      availableCookingMinutes: 60,
      notes: 'Thanksgiving leftovers',
      participants: [{ memberId, name: 'Cal' }],
    });
    const refused = await owner.post(events).send(body(randomUUID())).expect(400);
    expect(refused.body.code).to.equal('validation_failed');
    expect(refused.body.errors).to.deep.equal([{ field: 'participants[0].memberId', message: 'is not a member of this household', in: 'body' }]);
    const event = (await owner.post(events).send(body(me.memberId)).expect(201)).body;
    expect((await owner.get(`${events}/${event.id}`).expect(200)).body).to.deep.equal(event);

    const feed = (await owner.post(`/api/v1/households/${household.id}/calendar-feed`).expect(201)).body;
    const url = new URL(feed.url);
    expect(url.origin).to.equal('http://localhost:8080');
    expect((await owner.get(`/api/v1/households/${household.id}/calendar-feed`).expect(200)).body).to.deep.equal(feed);

    // No cookie, no app-version header: the URL alone.
    const ny = await request(h.app).get(url.pathname).expect(200);
    expect(ny.headers['content-type']).to.equal('text/calendar; charset=utf-8');
    const nyLines = unfolded(ny.text);
    expect(nyLines).to.include.members([
      'TZID:America/New_York',
      'DTSTART;TZID=America/New_York:20261128T183000',
      'DURATION:PT1H',
      `UID:${event.id}@localhost:8080`,
      'SUMMARY:Guests: Thanksgiving leftovers',
      'DESCRIPTION:Cal',
      'SEQUENCE:0',
    ]);
    await request(h.app).get(url.pathname).set('If-None-Match', String(ny.headers.etag)).expect(304);

    // The household moves: the same events, now in Oslo time.
    await owner.patch(`/api/v1/households/${household.id}`).send({ timeZoneId: 'Europe/Oslo' }).expect(200);
    const oslo = await request(h.app).get(url.pathname).set('If-None-Match', String(ny.headers.etag)).expect(200);
    expect(unfolded(oslo.text)).to.include.members(['TZID:Europe/Oslo', 'DTSTART;TZID=Europe/Oslo:20261128T183000']);

    // Deleting the household takes its feed along (the relation cascades): the URL answers 404.
    await h.db.knex('households').where({ id: household.id }).delete();
    expect(await h.db.knex('calendarFeeds').where({ householdId: household.id }).first()).to.equal(undefined);
    expect((await request(h.app).get(url.pathname).expect(404)).body.code).to.equal('not_found');
  });

  it("lists the caller's push devices, newest first", async () => {
    const person = await signUp(h.app, 'phones@example.com', 'Phones');
    await person.put('/api/v1/me/devices').send({ token: 'old-phone', platform: 'ios' }).expect(200);
    h.clock.advance(1000);
    await person.put('/api/v1/me/devices').send({ token: 'new-phone', platform: 'android' }).expect(200);
    const res = await person.get('/api/v1/me/devices').expect(200);
    expect(res.body.items.map((d: { token: string }) => d.token)).to.deep.equal(['new-phone', 'old-phone']);
  });

  it('documents the new operations in the served OpenAPI document', async () => {
    const doc = (await request(h.app).get('/api/v1/openapi.json').expect(200)).body;
    expect(doc.paths['/api/v1/households/{householdId}/calendar-feed']).to.include.keys('post', 'get', 'delete');
    expect(doc.paths['/calendar/{token}.ics']).to.have.key('get');
    expect(doc.paths['/api/v1/households/{householdId}/events/{eventId}']).to.include.keys('get');
    expect(doc.paths['/api/v1/me/devices']).to.include.keys('get', 'put');
  });
});
