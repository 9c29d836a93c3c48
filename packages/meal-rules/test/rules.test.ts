import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import { type Harness, KINDS, SAMPLES, sample, startHarness } from './helpers.js';

const rulesPath = (householdId: string) => `/api/v1/households/${householdId}/rules`;

describe('meal rules CRUD', () => {
  let h: Harness;
  let householdId: string;
  let owner: string;
  let adult: string;

  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.db.destroy();
  });
  beforeEach(async () => {
    await h.db.truncate();
    h.clock.set('2026-11-22T09:00:00.000Z');
    householdId = h.households.household();
    owner = h.households.member(householdId, 'Owner');
    adult = h.households.member(householdId, 'Adult');
  });

  async function create(body: unknown, as = owner) {
    return request(h.app)
      .post(rulesPath(householdId))
      .set('X-Test-User', as)
      .send(body as object);
  }

  for (const kind of KINDS) {
    it(`creates, lists, replaces and deletes a ${kind} rule`, async () => {
      const created = await create(SAMPLES[kind]);
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      expect(created.body).to.deep.equal({
        id: created.body.id,
        householdId,
        kind,
        strength: SAMPLES[kind].strength,
        scope: SAMPLES[kind].scope,
        startDate: SAMPLES[kind].startDate,
        endDate: SAMPLES[kind].endDate,
        source: 'UserDeclared',
        payload: SAMPLES[kind].payload,
        createdAt: '2026-11-22T09:00:00.000Z',
        updatedAt: '2026-11-22T09:00:00.000Z',
      });
      expect(created.body.id).to.match(/^[0-9a-f-]{36}$/);
      expect(Object.keys(created.body.payload)).to.deep.equal(Object.keys(SAMPLES[kind].payload));

      const listed = await request(h.app).get(rulesPath(householdId)).set('X-Test-User', adult);
      expect(listed.status).to.equal(200);
      expect(listed.body).to.deep.equal([created.body]);

      h.clock.advanceSeconds(60);
      const other = KINDS[(KINDS.indexOf(kind) + 1) % KINDS.length] as (typeof KINDS)[number];
      const replaced = await request(h.app)
        .patch(`${rulesPath(householdId)}/${created.body.id}`)
        .set('X-Test-User', adult)
        .send(SAMPLES[other]);
      expect(replaced.status, JSON.stringify(replaced.body)).to.equal(200);
      expect(replaced.body).to.include({
        id: created.body.id,
        kind: other,
        scope: SAMPLES[other].scope,
        createdAt: '2026-11-22T09:00:00.000Z',
        updatedAt: '2026-11-22T09:01:00.000Z',
      });
      expect(replaced.body.payload).to.deep.equal(SAMPLES[other].payload);
      expect(replaced.body.startDate).to.equal(SAMPLES[other].startDate);
      expect(replaced.body.endDate).to.equal(SAMPLES[other].endDate);

      const relisted = await request(h.app).get(rulesPath(householdId)).set('X-Test-User', owner);
      expect(relisted.body).to.deep.equal([replaced.body]);

      const deleted = await request(h.app)
        .delete(`${rulesPath(householdId)}/${created.body.id}`)
        .set('X-Test-User', owner);
      expect(deleted.status).to.equal(204);
      expect(deleted.text).to.equal('');
      const empty = await request(h.app).get(rulesPath(householdId)).set('X-Test-User', owner);
      expect(empty.body).to.deep.equal([]);
      const again = await request(h.app)
        .delete(`${rulesPath(householdId)}/${created.body.id}`)
        .set('X-Test-User', owner);
      expect(again.status).to.equal(404);
      expect(again.body.code).to.equal('not_found');
    });
  }

  it('lists oldest first, then by id, and only the household’s own rules', async () => {
    const first = await create(SAMPLES.RepeatAfterDays);
    h.clock.advanceSeconds(1);
    const second = await create(SAMPLES.CategoryFrequency);
    const third = await create(SAMPLES.PriceClassOnDays); // same createdAt as the second: id decides
    const elsewhere = h.households.household();
    const stranger = h.households.member(elsewhere, 'Owner');
    await request(h.app).post(rulesPath(elsewhere)).set('X-Test-User', stranger).send(SAMPLES.CategoryOnDay).expect(201);

    const listed = await request(h.app).get(rulesPath(householdId)).set('X-Test-User', owner);
    const tied = [second.body.id, third.body.id].sort();
    expect(listed.body.map((r: { id: string }) => r.id)).to.deep.equal([first.body.id, ...tied]);
  });

  it('answers the time as HH:mm when HH:mm:ss was sent', async () => {
    const body = sample('DinnerTimeOnWeekday');
    body.payload.time = '18:05:30';
    const res = await create(body);
    expect(res.status).to.equal(201);
    expect(res.body.payload.time).to.equal('18:05');
  });

  it('ignores members the kind does not have', async () => {
    const body = sample('RepeatAfterDays');
    body.payload.category = 'Fish';
    body.kind = 'CategoryFrequency';
    body.source = 'Learned';
    const res = await create(body);
    expect(res.status).to.equal(201);
    expect(res.body.payload).to.deep.equal({ kind: 'RepeatAfterDays', days: 14 });
    expect(res.body.kind).to.equal('RepeatAfterDays');
    expect(res.body.source).to.equal('UserDeclared');
  });

  it('accepts a CategoryOnDay rule on one date with scope SpecificDate on that date', async () => {
    const res = await create({
      payload: { kind: 'CategoryOnDay', category: 'Taco', weekday: null, specificDate: '2027-12-24' },
      strength: 'Hard',
      scope: 'SpecificDate',
      startDate: '2027-12-24',
      endDate: '2027-12-24',
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body).to.include({ scope: 'SpecificDate', startDate: '2027-12-24', endDate: '2027-12-24' });
  });

  it('answers 404 not_found for a rule id of another household, and changes nothing there', async () => {
    const elsewhere = h.households.household();
    const theirOwner = h.households.member(elsewhere, 'Owner');
    const theirs = await request(h.app).post(rulesPath(elsewhere)).set('X-Test-User', theirOwner).send(SAMPLES.CategoryFrequency).expect(201);

    const patch = await request(h.app)
      .patch(`${rulesPath(householdId)}/${theirs.body.id}`)
      .set('X-Test-User', owner)
      .send(SAMPLES.RepeatAfterDays);
    expect(patch.status).to.equal(404);
    expect(patch.body.code).to.equal('not_found');
    const del = await request(h.app)
      .delete(`${rulesPath(householdId)}/${theirs.body.id}`)
      .set('X-Test-User', owner);
    expect(del.status).to.equal(404);
    expect(del.body.code).to.equal('not_found');

    const still = await request(h.app).get(rulesPath(elsewhere)).set('X-Test-User', theirOwner);
    expect(still.body).to.deep.equal([theirs.body]);
  });

  it('answers 404 not_found for a rule id that does not exist, and 400 for one that is not a uuid', async () => {
    const missing = await request(h.app)
      .patch(`${rulesPath(householdId)}/${randomUUID()}`)
      .set('X-Test-User', owner)
      .send(SAMPLES.RepeatAfterDays);
    expect(missing.status).to.equal(404);
    const bad = await request(h.app)
      .delete(`${rulesPath(householdId)}/not-a-uuid`)
      .set('X-Test-User', owner);
    expect(bad.status).to.equal(400);
    expect(bad.body.code).to.equal('validation_failed');
  });

  it('counts its queries: one per list, one per create', async () => {
    const created = await create(SAMPLES.CategoryFrequency);
    expect(created.headers['server-timing']).to.match(/db;dur=[\d.]+;desc="1 queries"/);
    const listed = await request(h.app).get(rulesPath(householdId)).set('X-Test-User', owner);
    expect(listed.headers['server-timing']).to.match(/db;dur=[\d.]+;desc="1 queries"/);
  });
});
