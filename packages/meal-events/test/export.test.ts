import { randomUUID } from 'node:crypto';
import { ManualClock } from '@svc/http-kit';
import { createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import request from 'supertest';
import { type MealEvent, migrations } from '../src/index.js';
import { EXPORT_PAGE } from '../src/service/events.js';
import { buildEventsApp, MemoryAccess, seed, sortKey, spread } from './helpers.js';

describe('exportEvents (the data export part of @svc/meal-events)', () => {
  let db: TestDatabase;
  const access = new MemoryAccess();
  const household = randomUUID();
  const other = randomUUID();
  const owner = randomUUID();

  before(async () => {
    db = await createTestDatabase([migrations]);
    access.set(household, owner, 'Owner').set(other, owner, 'Owner');
  });
  after(() => db.destroy());

  it('yields every event of the household in list order, in pages of EXPORT_PAGE, each as GET answers it', async () => {
    await seed(db.knex, household, spread(250));
    await seed(db.knex, other, spread(3));
    const { app, service } = buildEventsApp({ knex: db.knex, clock: new ManualClock(), access });
    const pages: MealEvent[][] = [];
    for await (const page of service.exportEvents(household)) pages.push(page);
    expect(EXPORT_PAGE).to.be.within(2, 20);
    const full = Math.floor(250 / EXPORT_PAGE);
    expect(pages.map((p) => p.length)).to.deep.equal([...Array(full).fill(EXPORT_PAGE), ...(250 % EXPORT_PAGE ? [250 % EXPORT_PAGE] : [])]);
    // The same pages as JSON text (what the export writes through): the bytes of the records' JSON.stringify.
    const texts: string[] = [];
    for await (const page of service.exportEventPages(household)) texts.push(page.json);
    expect(texts).to.deep.equal(pages.map((p) => JSON.stringify(p)));
    const all = pages.flat();
    expect(all.map(sortKey)).to.deep.equal(all.map(sortKey).sort());
    expect(new Set(all.map((e) => e.id)).size).to.equal(250);
    expect(all.every((e) => e.householdId === household)).to.equal(true);
    const one = all[137]!;
    expect((await request(app).get(`/api/v1/households/${household}/events/${one.id}`).set('X-Test-User', owner).expect(200)).body).to.deep.equal(one);
  });

  it('yields nothing for a household without events, and reads lazily (one page per step)', async () => {
    const { service } = buildEventsApp({ knex: db.knex, clock: new ManualClock(), access });
    const none: MealEvent[][] = [];
    for await (const page of service.exportEvents(randomUUID())) none.push(page);
    for await (const page of service.exportEventPages(randomUUID())) none.push(JSON.parse(page.json));
    expect(none).to.deep.equal([]);
    const iterator = service.exportEvents(household)[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.value).to.have.length(EXPORT_PAGE);
    await iterator.return?.();
    const texts = service.exportEventPages(household)[Symbol.asyncIterator]();
    expect(JSON.parse(((await texts.next()).value as { json: string }).json)).to.have.length(EXPORT_PAGE);
    await texts.return?.();
  });
});
