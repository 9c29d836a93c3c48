import { randomUUID } from 'node:crypto';
import { ManualClock } from '@svc/http-kit';
import { createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { migrations } from '../src/index.js';
import { buildEventsApp, MemoryAccess } from './helpers.js';

describe('meal event writes (POST, PUT, DELETE)', () => {
  let db: TestDatabase;
  let app: Express;
  const clock = new ManualClock('2026-11-22T09:00:00.000Z');
  const access = new MemoryAccess();
  const household = randomUUID();
  const other = randomUUID();
  const owner = randomUUID();
  const adult = randomUUID();
  const junior = randomUUID();
  const stranger = randomUUID();
  const base = `/api/v1/households/${household}/events`;
  const member = randomUUID();

  const body = (over: Record<string, unknown> = {}) => ({
    date: '2026-11-28',
    eventType: 'Guests',
    servingTime: '18:30',
    availableCookingMinutes: 90,
    notes: 'Grandparents visit',
    participants: [
      { memberId: member, name: 'Ada' },
      { memberId: null, name: 'Grandma' },
    ],
    ...over,
  });

  before(async () => {
    db = await createTestDatabase([migrations]);
    access
      .set(household, owner, 'Owner')
      .set(household, adult, 'Adult')
      .set(household, junior, 'Junior')
      .set(other, owner, 'Owner')
      .addMember(household, member);
    app = buildEventsApp({ knex: db.knex, clock, access }).app;
  });
  afterEach(() => db.truncate());
  after(() => db.destroy());

  const post = (b: unknown, user = owner, path = base) =>
    request(app)
      .post(path)
      .set('X-Test-User', user)
      .send(b as object);
  const put = (id: string, b: unknown, user = owner, path = base) =>
    request(app)
      .put(`${path}/${id}`)
      .set('X-Test-User', user)
      .send(b as object);
  const del = (id: string, user = owner, path = base) => request(app).delete(`${path}/${id}`).set('X-Test-User', user);
  const list = (user = owner, path = base) => request(app).get(path).set('X-Test-User', user).expect(200);

  it('creates an event: 201 with every field, and it is listed', async () => {
    const res = await post(body()).expect(201);
    expect(res.body).to.deep.equal({
      id: res.body.id,
      householdId: household,
      ...body(),
      createdAt: '2026-11-22T09:00:00.000Z',
      updatedAt: '2026-11-22T09:00:00.000Z',
      seriesId: null,
      reminderMinutes: null,
    });
    expect(res.body.id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect((await list()).body.items).to.deep.equal([res.body]);
  });

  it('lets an Adult create, replace and delete', async () => {
    const { id } = (await post(body(), adult).expect(201)).body;
    await put(id, body({ notes: '' }), adult).expect(200);
    await del(id, adult).expect(204);
  });

  it('accepts HH:mm:ss and answers HH:mm, dropping the seconds', async () => {
    const res = await post(body({ servingTime: '07:05:59' })).expect(201);
    expect(res.body.servingTime).to.equal('07:05');
    expect((await list()).body.items[0].servingTime).to.equal('07:05');
  });

  it('takes an empty notes string and an empty participants list', async () => {
    const res = await post(body({ notes: '', participants: [] })).expect(201);
    expect(res.body).to.include({ notes: '' });
    expect(res.body.participants).to.deep.equal([]);
  });

  it('accepts each event type and the cooking-minute bounds 0 and 1440', async () => {
    for (const eventType of ['Guests', 'EatingOut', 'Away', 'Activity']) await post(body({ eventType })).expect(201);
    await post(body({ availableCookingMinutes: 0 })).expect(201);
    await post(body({ availableCookingMinutes: 1440 })).expect(201);
  });

  it('stores only memberId and name of a participant (extra members are ignored)', async () => {
    const res = await post(body({ participants: [{ memberId: null, name: 'Bo', age: 7 }], extra: true })).expect(201);
    expect(res.body.participants).to.deep.equal([{ memberId: null, name: 'Bo' }]);
    expect(res.body).not.to.have.property('extra');
    expect((await list()).body.items[0].participants).to.deep.equal([{ memberId: null, name: 'Bo' }]);
  });

  it('takes 2000 characters of notes and 50 participants, and no more', async () => {
    await post(
      body({ notes: 'n'.repeat(2000), participants: Array.from({ length: 50 }, (_, i) => ({ memberId: null, name: `p${i}`.padEnd(100, 'x') })) }),
    ).expect(201);
    expect((await post(body({ notes: 'n'.repeat(2001) })).expect(400)).body.code).to.equal('value_too_long');
    expect((await post(body({ participants: [{ memberId: null, name: 'x'.repeat(101) }] })).expect(400)).body.code).to.equal('value_too_long');
    expect((await post(body({ participants: Array.from({ length: 51 }, () => ({ memberId: null, name: 'p' })) })).expect(400)).body.code).to.equal(
      'validation_failed',
    );
  });

  const invalid: [string, Record<string, unknown>][] = [
    ['an unknown eventType', { eventType: 'Party' }],
    ['a lower-case eventType', { eventType: 'guests' }],
    ['servingTime 24:00', { servingTime: '24:00' }],
    ['servingTime 7:30', { servingTime: '7:30' }],
    ['servingTime 18:60', { servingTime: '18:60' }],
    ['servingTime with a zone', { servingTime: '18:30Z' }],
    ['minutes -1', { availableCookingMinutes: -1 }],
    ['minutes 1441', { availableCookingMinutes: 1441 }],
    ['minutes 1.5', { availableCookingMinutes: 1.5 }],
    ['minutes as a string', { availableCookingMinutes: '30' }],
    ['notes null', { notes: null }],
    ['participants null', { participants: null }],
    ['a participant without memberId', { participants: [{ name: 'Bo' }] }],
    ['a participant memberId that is not a uuid', { participants: [{ memberId: 'bo', name: 'Bo' }] }],
    ['a participant with an empty name', { participants: [{ memberId: null, name: '' }] }],
    ['a date that does not exist', { date: '2026-02-29' }],
    ['a date-time as date', { date: '2026-11-28T00:00:00Z' }],
    ['date null', { date: null }],
  ];
  for (const [name, over] of invalid) {
    it(`answers 400 validation_failed for ${name}`, async () => {
      const res = await post(body(over)).expect(400);
      expect(res.body.code).to.equal('validation_failed');
    });
  }
  const outOfRange: [string, Record<string, unknown>][] = [
    ['date', { date: '0000-01-01' }],
    ['date', { date: '1899-12-31' }],
    ['date', { date: '2026-02-30' }],
    ['date', { date: '2027-02-29' }],
    ['date', { date: '99999-01-01' }],
    ['date', { date: '10000-01-01' }],
    ['date', { date: '+02026-01-01' }],
    ['servingTime', { servingTime: '24:00' }],
    ['servingTime', { servingTime: '24:00:00' }],
    ['servingTime', { servingTime: '23:59:60' }],
    ['servingTime', { servingTime: '99:99' }],
  ];
  for (const [field, over] of outOfRange) {
    it(`answers 400 validation_failed naming ${field} for ${JSON.stringify(over[field])}, on POST and on PUT, and stores nothing`, async () => {
      const res = await post(body(over)).expect(400);
      expect(res.body.code).to.equal('validation_failed');
      expect([...new Set(res.body.errors.map((e: { field: string }) => e.field))]).to.deep.equal([field]);
      const created = (await post(body()).expect(201)).body;
      const again = await put(created.id, body(over)).expect(400);
      expect(again.body.code).to.equal('validation_failed');
      expect([...new Set(again.body.errors.map((e: { field: string }) => e.field))]).to.deep.equal([field]);
      expect((await list()).body.items).to.deep.equal([created]);
    });
  }
  it('accepts the date edges 1900-01-01 and 9999-12-31 and the time edges 00:00 and 23:59:59', async () => {
    const early = (await post(body({ date: '1900-01-01', servingTime: '00:00' })).expect(201)).body;
    const late = (await post(body({ date: '9999-12-31', servingTime: '23:59:59' })).expect(201)).body;
    expect([early.date, early.servingTime, late.date, late.servingTime]).to.deep.equal(['1900-01-01', '00:00', '9999-12-31', '23:59']);
    expect((await list()).body.items).to.deep.equal([early, late]);
  });

  for (const field of ['date', 'eventType', 'servingTime', 'availableCookingMinutes', 'notes', 'participants']) {
    it(`answers 400 validation_failed naming ${field} when it is left out, on POST and on PUT`, async () => {
      const b: Record<string, unknown> = body();
      delete b[field];
      const res = await post(b).expect(400);
      expect(res.body.code).to.equal('validation_failed');
      expect(res.body.errors.map((e: { field: string }) => e.field)).to.include(field);
      const { id } = (await post(body()).expect(201)).body;
      expect((await put(id, b).expect(400)).body.code).to.equal('validation_failed');
    });
  }
  it('answers 400 validation_failed for a body that is not JSON', async () => {
    const res = await request(app).post(base).set('X-Test-User', owner).set('Content-Type', 'text/plain').send('hello').expect(400);
    expect(res.body.code).to.equal('validation_failed');
  });

  it('replaces every field on PUT, keeps createdAt and moves updatedAt', async () => {
    const created = (await post(body()).expect(201)).body;
    clock.advanceSeconds(60);
    const replacement = body({ date: '2026-12-24', eventType: 'Away', servingTime: '17:00:00', availableCookingMinutes: 0, notes: '', participants: [] });
    const res = await put(created.id, replacement).expect(200);
    expect(res.body).to.deep.equal({
      id: created.id,
      householdId: household,
      ...replacement,
      servingTime: '17:00',
      createdAt: '2026-11-22T09:00:00.000Z',
      updatedAt: '2026-11-22T09:01:00.000Z',
      seriesId: null,
      reminderMinutes: null,
    });
    expect((await list()).body.items).to.deep.equal([res.body]);
    clock.set('2026-11-22T09:00:00.000Z');
  });

  it('deletes with 204; the event is gone and a second delete answers 404', async () => {
    const { id } = (await post(body()).expect(201)).body;
    await post(body({ date: '2026-11-29' })).expect(201);
    const res = await del(id).expect(204);
    expect(res.text).to.equal('');
    const items = (await list()).body.items;
    expect(items.map((e: { id: string }) => e.id)).not.to.include(id);
    expect(items).to.have.length(1);
    expect((await del(id).expect(404)).body.code).to.equal('not_found');
  });

  it('ten parallel DELETEs of one event: one 204, nine 404; an occurrence beside it stays', async () => {
    const { id } = (await post(body()).expect(201)).body;
    const kept = (await post(body({ date: '2026-11-29' })).expect(201)).body;
    const statuses = (await Promise.all(Array.from({ length: 10 }, () => del(id)))).map((r) => r.status);
    expect(statuses.filter((s) => s === 204)).to.have.length(1);
    expect(statuses.filter((s) => s === 404)).to.have.length(9);
    expect((await list()).body.items.map((e: { id: string }) => e.id)).to.deep.equal([kept.id]);
  });

  it('answers 404 for an unknown event on PUT and DELETE', async () => {
    expect((await put(randomUUID(), body()).expect(404)).body.code).to.equal('not_found');
    expect((await del(randomUUID()).expect(404)).body.code).to.equal('not_found');
  });

  it("answers 404 for another household's event, and leaves it alone", async () => {
    const theirs = (await post(body({ participants: [] }), owner, `/api/v1/households/${other}/events`).expect(201)).body;
    await put(theirs.id, body({ notes: 'hijack' })).expect(404);
    await del(theirs.id).expect(404);
    expect((await list(owner, `/api/v1/households/${other}/events`)).body.items).to.deep.equal([theirs]);
  });

  describe('participants must be members', () => {
    it('answers 400 validation_failed naming each participant whose memberId is not a member, on POST and PUT, and writes nothing', async () => {
      const outsider = randomUUID();
      const b = body({
        participants: [
          { memberId: member, name: 'Ada' },
          { memberId: null, name: 'Guest' },
          { memberId: outsider, name: 'Eve' },
          { memberId: randomUUID(), name: 'Mallory' },
        ],
      });
      const res = await post(b).expect(400);
      expect(res.body.code).to.equal('validation_failed');
      expect(res.body.errors).to.deep.equal([
        { field: 'participants[2].memberId', message: 'is not a member of this household', in: 'body' },
        { field: 'participants[3].memberId', message: 'is not a member of this household', in: 'body' },
      ]);
      expect((await list()).body.items).to.deep.equal([]);
      const { id } = (await post(body()).expect(201)).body;
      const put400 = await put(id, b).expect(400);
      expect(put400.body.errors.map((e: { field: string }) => e.field)).to.deep.equal(['participants[2].memberId', 'participants[3].memberId']);
      expect((await list()).body.items[0].participants).to.deep.equal(body().participants);
    });

    it("refuses a member of another household, and accepts this household's member in any letter case", async () => {
      const theirs = randomUUID();
      access.addMember(other, theirs);
      await post(body({ participants: [{ memberId: theirs, name: 'Neighbour' }] })).expect(400);
      const res = await post(body({ participants: [{ memberId: member.toUpperCase(), name: 'Ada' }] })).expect(201);
      expect(res.body.participants).to.deep.equal([{ memberId: member, name: 'Ada' }]);
    });

    it('accepts guests alone (memberId null) without asking for the members', async () => {
      let asked = 0;
      const counting = new MemoryAccess().set(household, owner, 'Owner');
      const original = counting.memberIds;
      Object.defineProperty(counting, 'memberIds', {
        value: (id: string) => {
          asked++;
          return original(id);
        },
      });
      const counted = buildEventsApp({ knex: db.knex, clock, access: counting }).app;
      await request(counted)
        .post(base)
        .set('X-Test-User', owner)
        .send(body({ participants: [{ memberId: null, name: 'Grandma' }] }))
        .expect(201);
      expect(asked).to.equal(0);
      await request(counted).post(base).set('X-Test-User', owner).send(body()).expect(400);
      expect(asked).to.equal(1);
    });
  });

  describe('GET one event', () => {
    const getOne = (id: string, user = owner, path = base) => request(app).get(`${path}/${id}`).set('X-Test-User', user);

    it('answers the event to any member, a Junior too, exactly as the list shows it', async () => {
      const created = (await post(body()).expect(201)).body;
      expect((await getOne(created.id).expect(200)).body).to.deep.equal(created);
      expect((await getOne(created.id.toUpperCase(), junior).expect(200)).body).to.deep.equal(created);
      expect((await list()).body.items).to.deep.equal([created]);
    });

    it("answers 404 not_found for an unknown event, for another household's, and to a non-member", async () => {
      const created = (await post(body()).expect(201)).body;
      const theirs = (await post(body({ participants: [] }), owner, `/api/v1/households/${other}/events`).expect(201)).body;
      expect((await getOne(randomUUID()).expect(404)).body.code).to.equal('not_found');
      expect((await getOne(theirs.id).expect(404)).body.code).to.equal('not_found');
      expect((await getOne(created.id, stranger).expect(404)).body.code).to.equal('not_found');
    });

    it('answers 400 for an id that is not a uuid, and 401 without a session', async () => {
      expect((await getOne('nope').expect(400)).body.code).to.equal('validation_failed');
      expect((await request(app).get(`${base}/${randomUUID()}`).expect(401)).body.code).to.equal('unauthenticated');
    });
  });

  it('answers 400 validation_failed for an eventId that is not a uuid', async () => {
    expect((await put('nope', body()).expect(400)).body.code).to.equal('validation_failed');
    expect((await del('nope').expect(400)).body.code).to.equal('validation_failed');
  });

  it('answers 403 forbidden to a Junior on POST, PUT and DELETE, and changes nothing', async () => {
    const created = (await post(body()).expect(201)).body;
    expect((await post(body(), junior).expect(403)).body.code).to.equal('forbidden');
    expect((await put(created.id, body({ notes: 'x' }), junior).expect(403)).body.code).to.equal('forbidden');
    expect((await del(created.id, junior).expect(403)).body.code).to.equal('forbidden');
    expect((await list(junior)).body.items).to.deep.equal([created]);
  });

  it('answers 404 not_found to a non-member on POST, PUT and DELETE', async () => {
    const created = (await post(body()).expect(201)).body;
    expect((await post(body(), stranger).expect(404)).body.code).to.equal('not_found');
    expect((await put(created.id, body(), stranger).expect(404)).body.code).to.equal('not_found');
    expect((await del(created.id, stranger).expect(404)).body.code).to.equal('not_found');
    expect((await list()).body.items).to.have.length(1);
  });

  it('answers 401 without a session', async () => {
    await request(app).post(base).send(body()).expect(401);
    await request(app).delete(`${base}/${randomUUID()}`).expect(401);
  });
});
