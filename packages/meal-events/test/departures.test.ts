import { randomBytes, randomUUID } from 'node:crypto';
import { ManualClock } from '@svc/http-kit';
import { createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import {
  MealEventsMembershipListener,
  type MealEventsService,
  migrations,
  ObjectionCalendarFeedStore,
  ObjectionMealEventStore,
  SeriesExtender,
  SeriesStore,
} from '../src/index.js';
import { FORMER_MEMBER_NAME } from '../src/service/index.js';
import { buildEventsApp, MemoryAccess } from './helpers.js';

describe('departed members (MembershipListener): participants and the calendar feed', () => {
  let db: TestDatabase;
  let app: Express;
  let service: MealEventsService;
  let listener: MealEventsMembershipListener;
  const clock = new ManualClock('2026-11-22T09:00:00.000Z');
  const access = new MemoryAccess();
  const household = randomUUID();
  const owner = randomUUID();
  const ada = randomUUID(); // Ada's member id
  const bo = randomUUID(); // Bo's member id
  const base = `/api/v1/households/${household}`;

  const body = {
    date: '2026-11-28',
    eventType: 'Guests',
    servingTime: '18:30',
    availableCookingMinutes: 90,
    notes: 'Dinner',
    participants: [
      { memberId: ada, name: 'Ada' },
      { memberId: bo, name: 'Bo' },
      { memberId: null, name: 'Grandma' },
    ],
  };

  before(async () => {
    db = await createTestDatabase([migrations]);
    access.set(household, owner, 'Owner').addMember(household, ada).addMember(household, bo);
    const built = buildEventsApp({ knex: db.knex, clock, access });
    app = built.app;
    service = built.service;
    listener = new MealEventsMembershipListener({ events: new ObjectionMealEventStore(db.knex), feeds: new ObjectionCalendarFeedStore(db.knex) });
  });
  afterEach(async () => {
    await db.truncate();
    access.addMember(household, ada).addMember(household, bo);
  });
  after(() => db.destroy());

  const as = (r: request.Test) => r.set('X-Test-User', owner);
  const depart = async (memberId: string, reason: 'left' | 'removed' | 'account_deleted', role: 'Adult' | 'Junior' = 'Adult') => {
    access.memberIdsOf.get(household)!.delete(memberId);
    await db.knex.transaction((trx) => listener.memberDeparted({ householdId: household, memberId, userId: randomUUID(), role, reason, at: clock.now() }, trx));
  };
  const stored = async (id: string) => (await db.knex('mealEvents').where({ id }).first()) as { participants: unknown[]; sequence: number; updatedAt: Date };
  const putBack = async (event: Record<string, unknown>) => {
    const { date, eventType, servingTime, availableCookingMinutes, notes, participants } = event;
    return as(request(app).put(`${base}/events/${event.id}`)).send({ date, eventType, servingTime, availableCookingMinutes, notes, participants });
  };

  it('a member who left keeps their name without the link, in every answer; the event counts as changed', async () => {
    const event = (
      await as(request(app).post(`${base}/events`))
        .send(body)
        .expect(201)
    ).body;
    clock.advance(60_000);
    await depart(ada, 'left');
    const expected = [
      { memberId: null, name: 'Ada' },
      { memberId: bo, name: 'Bo' },
      { memberId: null, name: 'Grandma' },
    ];
    const got = (await as(request(app).get(`${base}/events/${event.id}`)).expect(200)).body;
    expect(got.participants).to.deep.equal(expected);
    expect(got.updatedAt).to.equal(clock.now().toISOString());
    expect((await as(request(app).get(`${base}/events`)).expect(200)).body.items[0].participants).to.deep.equal(expected);
    const exported = [];
    for await (const page of service.exportEvents(household)) exported.push(...page);
    expect(exported[0]!.participants).to.deep.equal(expected);
    // Stored with the member id it held, never answered: an account deletion finds the name by it.
    expect((await stored(event.id)).participants[0]).to.deep.equal({ memberId: null, name: 'Ada', formerMemberId: ada });
    expect((await stored(event.id)).sequence).to.equal(1);
    // GET → PUT of it answers 200, and keeps that link.
    const put = await putBack(got);
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    expect(put.body.participants).to.deep.equal(expected);
    expect((await stored(event.id)).participants[0]).to.deep.equal({ memberId: null, name: 'Ada', formerMemberId: ada });
  });

  it('PUT accepts a departed member id the event still links (a GET before the departure), storing it without the link; POST refuses it', async () => {
    const event = (
      await as(request(app).post(`${base}/events`))
        .send(body)
        .expect(201)
    ).body;
    await depart(ada, 'removed');
    const put = await putBack(event);
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    expect(put.body.participants[0]).to.deep.equal({ memberId: null, name: 'Ada' });
    const posted = await as(request(app).post(`${base}/events`)).send(body);
    expect(posted.status).to.equal(400);
    expect(posted.body.errors).to.deep.equal([{ field: 'participants[0].memberId', message: 'is not a member of this household', in: 'body' }]);
    // A member id the event never named is refused on PUT too.
    const other = await putBack({ ...event, participants: [{ memberId: randomUUID(), name: 'Nobody' }] });
    expect(other.status).to.equal(400);
  });

  it('an erased account leaves a nameless place at the table, found by its current and its former member ids', async () => {
    const first = (
      await as(request(app).post(`${base}/events`))
        .send(body)
        .expect(201)
    ).body;
    await depart(ada, 'left');
    const second = (
      await as(request(app).post(`${base}/events`))
        .send({ ...body, participants: [{ memberId: null, name: 'Ada' }, ...body.participants.slice(1)] })
        .expect(201)
    ).body;
    await depart(bo, 'account_deleted');
    // account_deleted leaves the unlinking to the erasure that follows.
    expect((await stored(first.id)).participants[1]).to.deep.equal({ memberId: bo, name: 'Bo' });
    await db.knex.transaction((trx) =>
      listener.accountErased(
        {
          userId: randomUUID(),
          members: [
            { householdId: household, memberId: ada },
            { householdId: household, memberId: bo },
          ],
          at: clock.now(),
        },
        trx,
      ),
    );
    expect((await as(request(app).get(`${base}/events/${first.id}`)).expect(200)).body.participants).to.deep.equal([
      { memberId: null, name: FORMER_MEMBER_NAME },
      { memberId: null, name: FORMER_MEMBER_NAME },
      { memberId: null, name: 'Grandma' },
    ]);
    // The guest typed by hand as "Ada" in the second event is nobody's link: it stays.
    expect((await as(request(app).get(`${base}/events/${second.id}`)).expect(200)).body.participants[0]).to.deep.equal({ memberId: null, name: 'Ada' });
    expect(JSON.stringify(await db.knex('mealEvents').where({ id: first.id }).first())).to.not.match(/"Ada"|"Bo"/);
  });

  it('a series: its template loses the link of a member who left (later occurrences too), and an erased account’s name', async () => {
    const first = (
      await as(request(app).post(`${base}/events`))
        .send({ ...body, date: '2026-11-28', repeat: { frequency: 'weekly' } })
        .expect(201)
    ).body;
    await depart(ada, 'left');
    const series = async () => (await as(request(app).get(`${base}/series/${first.seriesId}`)).expect(200)).body;
    expect((await series()).template.participants).to.deep.equal([
      { memberId: null, name: 'Ada' },
      { memberId: bo, name: 'Bo' },
      { memberId: null, name: 'Grandma' },
    ]);
    // The window moves on: the occurrences written now do not link Ada either.
    clock.set('2027-01-22T09:00:00.000Z');
    await new SeriesExtender({ series: new SeriesStore(db.knex), clock, profiles: access.profiles, random: randomBytes }).extendAll();
    const rows = await db.knex('mealEvents').where({ seriesId: first.seriesId }).orderBy('date', 'desc').first();
    expect((rows.participants as { memberId: string | null }[])[0]!.memberId).to.equal(null);
    await db.knex.transaction((trx) =>
      listener.accountErased({ userId: randomUUID(), members: [{ householdId: household, memberId: ada }], at: clock.now() }, trx),
    );
    expect((await series()).template.participants[0]).to.deep.equal({ memberId: null, name: FORMER_MEMBER_NAME });
    expect(JSON.stringify(await db.knex('mealEventSeries').where({ id: first.seriesId }).first())).to.not.match(/"Ada"/);
    clock.set('2026-11-22T09:00:00.000Z');
  });

  it('retires the calendar feed when an Owner or Adult departs or is made a Junior, not when a Junior leaves', async () => {
    const feedUrl = async () => new URL((await as(request(app).post(`${base}/calendar-feed`)).expect(201)).body.url).pathname;
    let url = await feedUrl();
    await depart(randomUUID(), 'left', 'Junior');
    await request(app).get(url).expect(200);
    for (const reason of ['left', 'removed', 'account_deleted'] as const) {
      url = await feedUrl();
      await depart(randomUUID(), reason, 'Adult');
      expect((await request(app).get(url).expect(404)).body.code, reason).to.equal('not_found');
    }
    url = await feedUrl();
    await db.knex.transaction((trx) =>
      listener.roleChanged({ householdId: household, memberId: ada, userId: randomUUID(), from: 'Adult', to: 'Owner', at: clock.now() }, trx),
    );
    await request(app).get(url).expect(200);
    await db.knex.transaction((trx) =>
      listener.roleChanged({ householdId: household, memberId: ada, userId: randomUUID(), from: 'Adult', to: 'Junior', at: clock.now() }, trx),
    );
    await request(app).get(url).expect(404);
  });

  it('writes nothing when the transaction of the change rolls back', async () => {
    const event = (
      await as(request(app).post(`${base}/events`))
        .send(body)
        .expect(201)
    ).body;
    const url = new URL((await as(request(app).post(`${base}/calendar-feed`)).expect(201)).body.url).pathname;
    await db.knex
      .transaction(async (trx) => {
        await listener.memberDeparted({ householdId: household, memberId: ada, userId: randomUUID(), role: 'Adult', reason: 'removed', at: clock.now() }, trx);
        throw new Error('rolled back');
      })
      .catch(() => undefined);
    expect((await stored(event.id)).participants[0]).to.deep.equal({ memberId: ada, name: 'Ada' });
    await request(app).get(url).expect(200);
  });
});
