/**
 * Issue 30 items 5 and 6 through the composed service: the host passes SESSION_MAX_AGE_DAYS on, and
 * every package refuses control characters in the names it accepts (400 validation_failed naming
 * the field), while notes keep their line breaks.
 */
import { expect } from 'chai';
import { type Harness, signUp, startHarness } from './harness.js';

describe('names without control characters, and the absolute session lifetime, in the composed service (issue 30)', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ SESSION_MAX_AGE_DAYS: '2', AUTH_RATE_LIMIT: '1000000', CORS_ORIGINS: 'https://web.example.test' });
  });
  after(async () => h?.close());

  it('refuses CR/LF, other controls and bidi overrides in household, loyalty-programme and participant names; notes keep line breaks', async () => {
    const owner = await signUp(h.app, 'names@example.test');
    const field = (res: { body: { code: string; errors: { field: string }[] } }) => [res.body.code, res.body.errors.map((e) => e.field)];
    const badHousehold = await owner.post('/api/v1/households').send({ name: 'Home\r\nBcc: x', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' });
    expect(badHousehold.status).to.equal(400);
    expect(field(badHousehold)).to.deep.equal(['validation_failed', ['name']]);
    const created = await owner.post('/api/v1/households').send({ name: 'Home', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const household = created.body;
    const patched = await owner.patch(`/api/v1/households/${household.id}`).send({ loyaltyPrograms: ['Trumf\u202E'] });
    expect(field(patched)).to.deep.equal(['validation_failed', ['loyaltyPrograms[0]']]);
    const event = (participantName: string, notes: string) => ({
      date: '2026-11-28',
      eventType: 'Guests',
      servingTime: '18:30',
      availableCookingMinutes: 60,
      notes,
      participants: [{ memberId: null, name: participantName }],
    });
    const badEvent = await owner.post(`/api/v1/households/${household.id}/events`).send(event('Grandma\nX', 'fine'));
    expect(field(badEvent)).to.deep.equal(['validation_failed', ['participants[0].name']]);
    const badNotes = await owner.post(`/api/v1/households/${household.id}/events`).send(event('Grandma', 'ring \u0007 the bell'));
    expect(field(badNotes)).to.deep.equal(['validation_failed', ['notes']]);
    const good = await owner.post(`/api/v1/households/${household.id}/events`).send(event('Grandma', 'first line\nsecond line'));
    expect(good.status, JSON.stringify(good.body)).to.equal(201);
    expect(good.body.notes).to.equal('first line\nsecond line');
  });

  it('a session signed in longer ago than SESSION_MAX_AGE_DAYS answers 401, however recently it was used', async () => {
    const agent = await signUp(h.app, 'lifetime@example.test');
    for (let i = 0; i < 4; i++) {
      h.clock.advance(11 * 3600_000);
      expect((await agent.get('/api/v1/me')).status).to.equal(200);
    }
    h.clock.advance(5 * 3600_000);
    expect((await agent.get('/api/v1/me')).status).to.equal(401);
  });

  it('GET /me/export: the fetch of a listed web client (its Origin, cross-site) is served; a cross-site navigation (no Origin) and an unlisted Origin get 403 (issue 30.7 with CORS_ORIGINS)', async () => {
    const agent = await signUp(h.app, 'export-cors@example.test');
    const navigation = await agent.get('/api/v1/me/export').set('Sec-Fetch-Site', 'cross-site').set('Sec-Fetch-Mode', 'navigate');
    expect(navigation.status).to.equal(403);
    const unlisted = await agent
      .get('/api/v1/me/export')
      .set('Origin', 'https://evil.example.test')
      .set('Sec-Fetch-Site', 'cross-site')
      .set('Sec-Fetch-Mode', 'cors');
    expect(unlisted.status).to.equal(403);
    const listed = await agent
      .get('/api/v1/me/export')
      .set('Origin', 'https://web.example.test')
      .set('Sec-Fetch-Site', 'cross-site')
      .set('Sec-Fetch-Mode', 'cors');
    expect(listed.status).to.equal(200);
    expect(listed.headers['access-control-allow-origin']).to.equal('https://web.example.test');
  });
});
