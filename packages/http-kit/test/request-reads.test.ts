import { expect } from 'chai';
import { BaseModel, declareMembership, declareRead, ReadKernel } from '../../db/src/index.js';
import { createTestDatabase, type TestDatabase } from '../../test-support/src/index.js';
import { ManualClock, newRequestContext, pathMatcher, type ReadingRequest, RequestReads, runWithContext } from '../src/index.js';

class Member extends BaseModel {
  static override tableName = 'rr_members';
}
class Note extends BaseModel {
  static override tableName = 'rr_notes';
}

const H = '00000000-0000-4000-8000-0000000000b1';
const ALICE = '00000000-0000-4000-8000-0000000000c1';
const BOB = '00000000-0000-4000-8000-0000000000c2';
const membership = declareMembership({ model: Member, account: 'accountId', household: 'householdId' });
const notesRead = declareRead({
  name: 'test_notes',
  model: Note,
  scope: { household: 'householdId' },
  fields: ['text'],
  list: { orderBy: [{ column: 'text' }] },
});
const myHouseholds = declareRead({
  name: 'test_my_households',
  model: Member,
  scope: { account: 'accountId' },
  fields: ['householdId'],
  list: { orderBy: [{ column: 'householdId' }] },
});

interface PassRow {
  account_id: string;
  revoked: boolean;
}

/** A credential of the test's own: a pass (its key) names an account; a revoked pass is found but not accepted. */
const lookup = {
  name: 'test_pass',
  text: `select q.batch_index::int as batch_index, p.account_id, p.revoked
           from unnest($1::text[]) with ordinality as q(key, batch_index)
           join rr_passes p on p.key = q.key and p.expires > $2::timestamptz`,
  accountColumn: 'account_id',
  accepts: (row: PassRow) => !row.revoked,
};

describe('RequestReads: the kernel runs each principal statement with its reads', () => {
  let db: TestDatabase;
  const clock = new ManualClock(new Date('2026-03-01T12:00:00Z'));
  let kernel: ReadKernel;
  let statements = 0;

  before(async () => {
    db = await createTestDatabase();
    await db.knex.raw(`create table rr_passes (key text primary key, account_id uuid not null, revoked boolean not null, expires timestamptz not null);
      create table rr_members (household_id uuid not null, account_id uuid not null);
      create table rr_notes (household_id uuid not null, text text not null)`);
    await db.knex('rr_passes').insert([
      { key: 'alice', account_id: ALICE, revoked: false, expires: '2026-03-02T00:00:00Z' },
      { key: 'bob', account_id: BOB, revoked: false, expires: '2026-03-02T00:00:00Z' },
      { key: 'alice-revoked', account_id: ALICE, revoked: true, expires: '2026-03-02T00:00:00Z' },
      // Expired by the injected clock (PostgreSQL's own is never asked).
      { key: 'alice-expired', account_id: ALICE, revoked: false, expires: '2026-03-01T11:59:59Z' },
    ]);
    await db.knex('rr_members').insert({ household_id: H, account_id: ALICE });
    await db.knex('rr_notes').insert([
      { household_id: H, text: 'b' },
      { household_id: H, text: 'a' },
    ]);
    kernel = new ReadKernel({ matcher: pathMatcher, membership, principalReads: [{ column: 'memberships', read: myHouseholds }] });
    kernel.add(notesRead, '/api/v1/households/{householdId}/notes');
    // Count the statements: each takes one connection of the pool.
    const pool = db.knex.client as unknown as { acquireConnection(): Promise<unknown> };
    const acquire = pool.acquireConnection.bind(pool);
    pool.acquireConnection = () => {
      statements++;
      return acquire();
    };
  });
  after(() => db.destroy());

  const get = (path: string, method = 'GET') => ({ method, path }) as ReadingRequest;

  it("loads the principal, its memberships and a GET's declared read in one statement, and hands the read to the request, not to the lookup's owner", async () => {
    const reader = new RequestReads({ knex: db.knex, clock, kernel }).principal(lookup);
    const req = get(`/api/v1/households/${H}/notes`);
    const ctx = newRequestContext('test');
    statements = 0;
    const row = await runWithContext(ctx, () => reader.load('alice', req));
    expect(statements).to.equal(1);
    expect(ctx.db.queries).to.equal(1);
    expect(row).to.include({ account_id: ALICE, revoked: false });
    expect(row?.memberships).to.deep.equal([{ householdId: H }]);
    expect((row as { read_value?: unknown } | undefined)?.read_value).to.equal(undefined);
    expect(req.lent).to.deep.equal({ name: 'test_notes', value: [{ text: 'a' }, { text: 'b' }] });
  });

  it('hands nothing on for a row its owner does not accept, for a non-member, for a write, or for a path no read serves', async () => {
    const reader = new RequestReads({ knex: db.knex, clock, kernel }).principal(lookup);
    const path = `/api/v1/households/${H}/notes`;
    const revoked = get(path);
    expect(await reader.load('alice-revoked', revoked)).to.include({ revoked: true });
    expect(revoked.lent).to.equal(undefined);
    const stranger = get(path);
    expect(await reader.load('bob', stranger)).to.include({ account_id: BOB });
    expect(stranger.lent).to.equal(undefined);
    const write = get(path, 'POST');
    expect(await reader.load('alice', write)).to.include({ account_id: ALICE });
    expect(write.lent).to.equal(undefined);
    const other = get(`/api/v1/households/${H}/elsewhere`);
    expect(await reader.load('alice', other)).to.include({ account_id: ALICE });
    expect(other.lent).to.equal(undefined);
    expect(await reader.load('alice-expired', get(path))).to.equal(undefined);
    expect(await reader.load('nobody', get(path))).to.equal(undefined);
  });

  it('runs the lookups of one turn as one statement per variant, each answered with its own row', async () => {
    const reader = new RequestReads({ knex: db.knex, clock, kernel }).principal(lookup);
    const path = `/api/v1/households/${H}/notes`;
    const reqs = [get(path), get(path), get(path)];
    statements = 0;
    const [a, b, c, plainA, plainB] = await Promise.all([
      reader.load('alice', reqs[0]),
      reader.load('bob', reqs[1]),
      reader.load('nobody', reqs[2]),
      reader.load('alice'),
      reader.load('bob'),
    ]);
    expect(statements).to.equal(2);
    expect([a?.account_id, b?.account_id, c, plainA?.account_id, plainB?.account_id]).to.deep.equal([ALICE, BOB, undefined, ALICE, BOB]);
    expect(reqs.map((r) => r.lent?.name)).to.deep.equal(['test_notes', undefined, undefined]);
    expect(plainB?.memberships).to.deep.equal([]);
  });

  it("without a kernel, runs the lookup's statement alone: no memberships, no read", async () => {
    const reader = new RequestReads({ knex: db.knex, clock }).principal(lookup);
    const req = get(`/api/v1/households/${H}/notes`);
    const row = await reader.load('alice', req);
    expect(row).to.deep.equal({ batch_index: 1, account_id: ALICE, revoked: false });
    expect(req.lent).to.equal(undefined);
  });

  it('refuses a principal name its statements cannot be named by', () => {
    expect(() => new RequestReads({ knex: db.knex, clock }).principal({ ...lookup, name: 'Pass-1' })).to.throw(/a name of/);
  });
});
