import { randomUUID } from 'node:crypto';
import { compileValue } from '@svc/db';
import { newRequestContext, runWithContext } from '@svc/http-kit';
import { createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import { MealRuleListVersionModel, migrations, ObjectionMealRuleStore, rulesRead } from '../src/index.js';
import { SAMPLES } from './helpers.js';

/**
 * The rules answer cache of ObjectionMealRuleStore against a real PostgreSQL: the version
 * triggers, the declared read as the kernel compiles it (`rulesRead`), and `list` answering from
 * what it holds only under the version the request's read saw.
 */
describe('the rules store: list version and answer cache', () => {
  let db: TestDatabase;
  let store: ObjectionMealRuleStore;
  const now = new Date('2026-11-26T10:00:00.000Z');

  before(async () => {
    db = await createTestDatabase([migrations]);
  });
  after(async () => {
    await db.destroy();
  });
  beforeEach(async () => {
    await db.truncate();
    store = new ObjectionMealRuleStore(db.knex);
  });

  const version = async (hh: string) => (await MealRuleListVersionModel.query(db.knex).findById(hh))?.version ?? '0';

  /** What the kernel loads of `rulesRead` for `hh` when the instance says it holds `known`. */
  const lent = async (_on: ObjectionMealRuleStore, hh: string, known: string | null) => {
    const { rows } = await db.knex.raw(
      `select ${compileValue(rulesRead, { account: 'null', household: 'p.id', arg: 'null', known: 'p.known' })} as v from (select ?::uuid as id, ?::text as known) p`,
      [hh, known],
    );
    return rows[0].v as NonNullable<typeof rulesRead.loads>;
  };

  /** `list` as a request whose read loaded `value` (none: undefined), as the route writes it, and the statements it ran. */
  const readAs = async (on: ObjectionMealRuleStore, hh: string, value: NonNullable<typeof rulesRead.loads> | undefined) => {
    const ctx = newRequestContext('test');
    const text = await runWithContext(ctx, async () => JSON.stringify(await on.list(hh, undefined, value)));
    return { text, statements: ctx.db.queries };
  };

  it("moves the version with every statement that changes the household's rules, whoever writes, and keeps none for no rules", async () => {
    const hh = randomUUID();
    const other = randomUUID();
    expect(await version(hh)).to.equal('0');
    const rule = await store.create(hh, SAMPLES.CategoryFrequency as never, 'UserDeclared', now);
    await store.create(other, SAMPLES.RepeatAfterDays as never, 'UserDeclared', now);
    const v1 = await version(hh);
    expect(Number(v1)).to.be.greaterThan(0);
    await store.replace(hh, rule.id, SAMPLES.RepeatAfterDays as never, 'UserDeclared', now);
    const v2 = await version(hh);
    expect(Number(v2)).to.be.greaterThan(Number(v1));
    await db.knex('meal_rules').where({ household_id: hh }).update({ strength: 'Soft' });
    const v3 = await version(hh);
    expect(Number(v3)).to.be.greaterThan(Number(v2));
    await db.knex('meal_rules').where({ household_id: randomUUID() }).update({ strength: 'Soft' });
    expect(await version(hh)).to.equal(v3);
    expect(await store.remove(hh, rule.id)).to.equal(true);
    expect(await db.knex('meal_rule_list_versions').where({ household_id: hh })).to.deep.equal([]);
    expect(Number(await version(other))).to.be.greaterThan(0);
    await db.knex.raw('truncate meal_rules');
    expect(await db.knex('meal_rule_list_versions')).to.deep.equal([]);
  });

  it('lends the version alone when the instance holds that answer, else the version and the rows', async () => {
    const hh = randomUUID();
    const empty = await lent(store, hh, null);
    expect(empty).to.deep.equal({ version: '0', value: [] });
    await store.create(hh, SAMPLES.DinnerTimeOnWeekday as never, 'UserDeclared', now);
    const ver = await version(hh);
    const full = await lent(store, hh, null);
    expect(full).to.have.property('version', ver);
    expect(full.value).to.have.length(1);
    expect(await lent(store, hh, ver)).to.deep.equal({ version: ver });
    expect(await lent(store, hh, '1')).to.deep.equal(full);
    // `heldVersion` says what the store holds: nothing before a read, the version of the answer after one.
    expect(store.heldVersion(hh)).to.equal(undefined);
    await readAs(store, hh, full);
    expect(store.heldVersion(hh)).to.equal(ver);
  });

  it("answers from what it holds only under the version the request's session read lent, and what it answers is what the list reads", async () => {
    const hh = randomUUID();
    await store.create(hh, SAMPLES.CategoryFrequency as never, 'UserDeclared', now);
    await store.create(hh, SAMPLES.MaximumActiveCookingTime as never, 'UserDeclared', now);
    const v1 = await version(hh);
    const listed = JSON.stringify(await store.list(hh));

    // Nothing lent (outside a request, or a session read that lent nothing): one statement.
    const own = await readAs(store, hh, undefined);
    expect(own.text).to.equal(listed);
    expect(own.statements).to.equal(1);
    // The rows lent: no statement, and the answer is kept under their version.
    const fromRows = await readAs(store, hh, await lent(store, hh, null));
    expect(fromRows.text).to.equal(listed);
    expect(fromRows.statements).to.equal(0);
    // The version alone, the one held: the same text, no statement.
    const held = await readAs(store, hh, { version: v1 });
    expect(held.text).to.equal(listed);
    expect(held.statements).to.equal(0);
    // A version it does not hold (the request's snapshot saw another): its own statement.
    expect((await readAs(store, hh, { version: '1' })).statements).to.equal(1);

    // A change by hand (a script, another instance): the lent value carries the new rows.
    await db.knex('meal_rules').where({ household_id: hh, kind: 'CategoryFrequency' }).update({ strength: 'Soft' });
    const v2 = await version(hh);
    const changedLent = await lent(store, hh, v1);
    expect(changedLent).to.have.property('version', v2);
    const changed = await readAs(store, hh, changedLent);
    expect(changed.text).to.equal(JSON.stringify(await store.list(hh)));
    expect(JSON.parse(changed.text).find((r: { kind: string }) => r.kind === 'CategoryFrequency').strength).to.equal('Soft');
    expect((await readAs(store, hh, { version: v2 })).text).to.equal(changed.text);
  });

  it('keeps no more than its budget of answers, and none with a budget of 0', async () => {
    const hh = randomUUID();
    await store.create(hh, SAMPLES.CategoryFrequency as never, 'UserDeclared', now);
    const v = await version(hh);
    for (const [budget, held] of [
      [0, false],
      [100, false],
      [1_000_000, true],
    ] as const) {
      const small = new ObjectionMealRuleStore(db.knex, { answerCacheBytes: budget });
      await readAs(small, hh, await lent(small, hh, null));
      expect(small.heldVersion(hh), `budget ${budget}`).to.equal(held ? v : undefined);
      expect((await readAs(small, hh, { version: v })).statements, `budget ${budget}`).to.equal(held ? 0 : 1);
    }
  });

  it('parallel reads and writes: once they are done, the answer is what the table holds', async () => {
    const hh = randomUUID();
    await Promise.all([
      ...Array.from({ length: 6 }, () => store.create(hh, SAMPLES.RepeatAfterDays as never, 'UserDeclared', now)),
      ...Array.from({ length: 6 }, async () => readAs(store, hh, await lent(store, hh, store.heldVersion(hh) ?? null))),
    ]);
    const final = await lent(store, hh, store.heldVersion(hh) ?? null);
    const answer = await readAs(store, hh, final);
    expect(JSON.parse(answer.text)).to.have.length(6);
    expect(answer.text).to.equal(JSON.stringify(await store.list(hh)));
  });
});
