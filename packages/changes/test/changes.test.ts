import { randomUUID } from 'node:crypto';
import type { ChangeSource } from '@svc/contracts';
import { BaseModel, declareRead, rollbackMigrations, runMigrations } from '@svc/db';
import { createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import { ChangesStore, type ChangeValueRead, linkMigrations, migrations, sourceMigrations } from '../src/index.js';

class TestHouseholdModel extends BaseModel {
  static override tableName = 'test_households';
}
class TestItemModel extends BaseModel {
  static override tableName = 'test_items';
}
class TestPersonModel extends BaseModel {
  static override tableName = 'test_people';
}
/** The owners' declared reads of one row, and the answers their GETs would make of a row. */
const VALUES: { household: ChangeValueRead; event: ChangeValueRead } = {
  household: {
    read: declareRead({ name: 'test_household', model: TestHouseholdModel, scope: { household: 'id' }, fields: ['id', 'name'] }),
    answer: (row) => ({ ...(row as object), kind: 'household' }),
  },
  event: {
    read: declareRead({
      name: 'test_item',
      model: TestItemModel,
      scope: { household: 'householdId' },
      arg: { column: 'id', format: 'uuid' },
      fields: ['id', 'note'],
    }),
    answer: (row) => ({ ...(row as object), kind: 'item' }),
  },
};

/** Stand-ins for the owning packages' tables: a household table and a table of its items. */
const SOURCES: ChangeSource[] = [
  { resource: 'household', model: TestHouseholdModel, household: 'id' },
  { resource: 'event', model: TestItemModel, household: 'householdId' },
];

describe('changes store and triggers', () => {
  let db: TestDatabase;
  let store: ChangesStore;
  const sources = sourceMigrations(SOURCES);
  const early = randomUUID();
  const earlyItem = randomUUID();

  before(async () => {
    db = await createTestDatabase();
    await db.knex.raw('create table test_households (id uuid primary key, name text)');
    await db.knex.raw('create table test_items (id uuid primary key, household_id uuid not null references test_households on delete cascade, note text)');
    await db.knex('test_households').insert({ id: early, name: 'Before the feed' });
    await db.knex('test_items').insert({ id: earlyItem, household_id: early });
    await runMigrations(db.knex, [migrations, sources]);
    store = new ChangesStore(db.knex);
  });
  after(async () => db?.destroy());

  it('starts with what existed before its migration, as upserts', async () => {
    expect((await store.page(early, '0', 10)).rows.map((r) => [r.resource, r.id, r.change, r.position])).to.deep.equal([
      ['household', early, 'upsert', '1'],
      ['event', earlyItem, 'upsert', '2'],
    ]);
  });

  it('records every statement in its transaction: one row per resource at its latest position; a rollback leaves nothing', async () => {
    const h = randomUUID();
    const [x, y] = [randomUUID(), randomUUID()];
    await db.knex('test_households').insert({ id: h, name: 'H' });
    await db.knex('test_items').insert([
      { id: x, household_id: h },
      { id: y, household_id: h },
    ]);
    await db.knex('test_items').where({ id: x }).update({ note: 'changed' });
    await db.knex
      .transaction(async (trx) => {
        await trx('test_items').where({ id: y }).delete();
        throw new Error('rolled back');
      })
      .catch(() => {});
    const page = await store.page(h, '0', 10);
    expect(page.rows.map((r) => [r.resource, r.id, r.change, r.position])).to.deep.equal([
      ['household', h, 'upsert', '1'],
      // y kept its first position (2 or 3, by id order); x moved to 4.
      ['event', y, 'upsert', page.rows[1]!.position],
      ['event', x, 'upsert', '4'],
    ]);
    expect((await store.counter(h))?.last).to.equal('4');
    await db.knex('test_items').where({ id: y }).delete();
    expect((await store.page(h, '4', 10)).rows.map((r) => [r.id, r.change, r.position])).to.deep.equal([[y, 'delete', '5']]);
  });

  it('gives parallel writers of one household positions in commit order, without gaps', async () => {
    const h = randomUUID();
    await db.knex('test_households').insert({ id: h, name: 'P' });
    // A writer that holds its transaction open: the next one waits for its commit before taking a position.
    const trx = await db.knex.transaction();
    await trx('test_items').insert({ id: randomUUID(), household_id: h });
    let committed = false;
    const waiting = db
      .knex('test_items')
      .insert({ id: randomUUID(), household_id: h })
      .then(() => {
        committed = true;
      });
    // Wait on PostgreSQL's word that the second writer waits for a lock (a signal, not a timer).
    for (;;) {
      const blocked = await db.knex.raw(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`);
      if (blocked.rows[0].n > 0) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(committed, 'the second writer waits for the first').to.equal(false);
    expect((await store.page(h, '1', 10)).rows, 'nothing visible before the first commits').to.deep.equal([]);
    await trx.commit();
    await waiting;
    expect((await store.page(h, '0', 10)).rows.map((r) => r.position)).to.deep.equal(['1', '2', '3']);
    await Promise.all(Array.from({ length: 20 }, () => db.knex('test_items').insert({ id: randomUUID(), household_id: h })));
    expect((await store.page(h, '0', 100)).rows.map((r) => Number(r.position))).to.deep.equal(Array.from({ length: 23 }, (_, i) => i + 1));
  });

  it('purges deletions older than the cutoff and moves purgedThrough; a household deleted takes its feed with it', async () => {
    const h = randomUUID();
    const x = randomUUID();
    await db.knex('test_households').insert({ id: h, name: 'D' });
    await db.knex('test_items').insert({ id: x, household_id: h });
    await db.knex('test_items').where({ id: x }).delete();
    expect(await store.purgeDeletions(new Date(Date.now() + 60_000))).to.be.greaterThan(0);
    const page = await store.page(h, '0', 10);
    expect(page.purgedThrough).to.equal('3');
    expect(page.rows.map((r) => r.resource)).to.deep.equal(['household']);
    await db.knex('test_items').insert({ id: randomUUID(), household_id: h });
    await db.knex('test_households').where({ id: h }).delete();
    expect(await store.all(h)).to.deep.equal([]);
    // Gone at commit, cascades included (they ran after the household's own trigger).
    expect(await store.counter(h)).to.equal(undefined);
  });

  it('reads each upsert’s value in the page’s statement by its owner’s declared read; a deletion has none', async () => {
    const valued = new ChangesStore(db.knex, VALUES);
    const h = randomUUID();
    const [x, y] = [randomUUID(), randomUUID()];
    await db.knex('test_households').insert({ id: h, name: 'Valued' });
    await db.knex('test_items').insert([
      { id: x, household_id: h, note: 'kept' },
      { id: y, household_id: h, note: 'gone' },
    ]);
    await db.knex('test_items').where({ id: y }).delete();
    const page = await valued.page(h, '0', 10);
    expect(page.rows.map((r) => [r.resource, r.id, r.change, r.value])).to.deep.equal([
      ['household', h, 'upsert', { id: h, name: 'Valued', kind: 'household' }],
      ['event', x, 'upsert', { id: x, note: 'kept', kind: 'item' }],
      ['event', y, 'delete', undefined],
    ]);
    // The household's own value is the page's household (the read is bound to it).
    const other = randomUUID();
    await db.knex('test_households').insert({ id: other, name: 'Other' });
    expect((await valued.page(other, '0', 10)).rows.map((r) => r.value)).to.deep.equal([{ id: other, name: 'Other', kind: 'household' }]);
  });

  it('reads the counter’s version (last.purgedThrough) with the page; a page with a value borrowed from another package is not keepable', async () => {
    const h = randomUUID();
    await db.knex('test_households').insert({ id: h, name: 'Versioned' });
    const x = randomUUID();
    await db.knex('test_items').insert({ id: x, household_id: h, note: 'n' });
    const page = await store.page(h, '0', 10);
    expect([page.last, page.purgedThrough, page.version, page.keepable]).to.deep.equal(['2', '0', '2.0', true]);
    expect((await store.counter(h))?.version).to.equal('2.0');
    await db.knex('test_items').where({ id: x }).delete();
    await store.purgeDeletions(new Date(Date.now() + 60_000));
    expect((await store.page(h, '0', 10)).version, 'a purge moves the version').to.equal('3.3');
    expect((await store.page(randomUUID(), '0', 10)).version, 'no change yet').to.equal('0');
    const lent = declareRead({
      name: 'test_item_lent',
      model: TestItemModel,
      scope: { household: 'householdId' },
      arg: { column: 'id', format: 'uuid' },
      fields: ['id', { name: 'householdName', link: { model: TestHouseholdModel, key: 'id', field: 'name' }, by: 'householdId' }],
    });
    const borrowing = new ChangesStore(db.knex, { household: VALUES.household, event: { read: lent, answer: (r) => r } });
    const y = randomUUID();
    await db.knex('test_items').insert({ id: y, household_id: h, note: 'lent' });
    const withLink = await borrowing.page(h, '3', 10);
    expect(withLink.rows.map((r) => r.value)).to.deep.equal([{ id: y, householdName: 'Versioned' }]);
    expect(withLink.keepable).to.equal(false);
    expect((await borrowing.page(h, '4', 10)).keepable, 'no such upsert on the page').to.equal(true);
  });

  it('records a change of a borrowed field as an upsert of each borrower (linkMigrations); its pages are then keepable', async () => {
    await db.knex.raw('create table test_people (id uuid primary key, name text, nickname text)');
    await db.knex.raw('alter table test_items add column person_id uuid');
    const borrowing = declareRead({
      name: 'test_item_person',
      model: TestItemModel,
      scope: { household: 'householdId' },
      arg: { column: 'id', format: 'uuid' },
      fields: ['id', { name: 'personName', link: { model: TestPersonModel, key: 'id', field: 'name' }, by: 'personId' }],
    });
    const links = linkMigrations({ household: VALUES.household, event: { read: borrowing } });
    expect(links.migrations.map((m) => m.name)).to.deep.equal(['20261202150000_changes_link_event_test_people_name']);
    await runMigrations(db.knex, [links]);
    const triggers = await db.knex.raw(`select tgname from pg_trigger where tgrelid = 'test_people'::regclass and not tgisinternal order by tgname`);
    expect(triggers.rows.map((r: { tgname: string }) => r.tgname)).to.deep.equal([
      'household_changes_link_event_test_people_name_insdel',
      'household_changes_link_event_test_people_name_update',
    ]);
    const [h, other] = [randomUUID(), randomUUID()];
    const [person, nobody] = [randomUUID(), randomUUID()];
    const [x, y, z] = [randomUUID(), randomUUID(), randomUUID()];
    await db.knex('test_households').insert([
      { id: h, name: 'Lent' },
      { id: other, name: 'Other' },
    ]);
    await db.knex('test_people').insert([
      { id: person, name: 'Ann' },
      { id: nobody, name: 'Bo' },
    ]);
    await db.knex('test_items').insert([
      { id: x, household_id: h, person_id: person },
      { id: y, household_id: h, person_id: nobody },
      { id: z, household_id: other, person_id: person },
    ]);
    const store = new ChangesStore(db.knex, { event: { read: borrowing, answer: (r) => r } }, { linksRecorded: true });
    const before = await store.page(h, '0', 10);
    expect(before.keepable).to.equal(true);
    expect(before.version).to.equal('3.0');
    await db.knex('test_people').where({ id: person }).update({ nickname: 'A' });
    await db.knex('test_people').where({ id: person }).update({ name: 'Ann' });
    expect((await store.page(h, '0', 10)).version, 'another column, or the same name: nothing recorded').to.equal('3.0');
    await db.knex('test_people').where({ id: person }).update({ name: 'Anna' });
    const after = await store.page(h, before.last, 10);
    expect(after.rows.map((r) => [r.id, r.change, r.value])).to.deep.equal([[x, 'upsert', { id: x, personName: 'Anna' }]]);
    const ofOther = await store.page(other, '2', 10);
    expect(
      ofOther.rows.map((r) => r.id),
      'every household of a borrower',
    ).to.deep.equal([z]);
    await db.knex('test_people').where({ id: nobody }).delete();
    expect((await store.page(h, after.last, 10)).rows.map((r) => [r.id, r.value])).to.deep.equal([[y, { id: y, personName: null }]]);
    await rollbackMigrations(db.knex, [links]);
    await db.knex('test_people').where({ id: person }).update({ name: 'Ann again' });
    expect((await store.page(other, ofOther.last, 10)).rows, 'migrated down: nothing recorded').to.deep.equal([]);
  });

  it("takes a read whose absence is its GET's answer, and reads its values as any other's", async () => {
    const absentIsAnswer = declareRead({ ...VALUES.event.read, name: 'test_item_or_none', absentIsAnswer: true });
    const valued = new ChangesStore(db.knex, { household: VALUES.household, event: { ...VALUES.event, read: absentIsAnswer } });
    const h = randomUUID();
    const x = randomUUID();
    await db.knex('test_households').insert({ id: h, name: 'Absent is an answer' });
    await db.knex('test_items').insert({ id: x, household_id: h, note: 'here' });
    expect((await valued.page(h, '0', 10)).rows.map((r) => [r.resource, r.id, r.value])).to.deep.equal([
      ['household', h, { id: h, name: 'Absent is an answer', kind: 'household' }],
      ['event', x, { id: x, note: 'here', kind: 'item' }],
    ]);
  });

  it('refuses a value read that is not one row of the household by its uuid', () => {
    const list = declareRead({
      name: 'test_items',
      model: TestItemModel,
      scope: { household: 'householdId' },
      fields: ['id'],
      list: { orderBy: [{ column: 'id' }] },
    });
    expect(() => new ChangesStore(db.knex, { event: { read: list, answer: (r) => r } })).to.throw(/must read one row of the household/);
  });

  it('migrates down and up again', async () => {
    await rollbackMigrations(db.knex, [migrations, sources]);
    await runMigrations(db.knex, [migrations, sources]);
    expect((await store.page(early, '0', 10)).rows).to.have.length(2);
  });
});
