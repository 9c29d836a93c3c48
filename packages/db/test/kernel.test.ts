import { expect } from 'chai';
import { createTestDatabase, type TestDatabase } from '../../test-support/src/index.js';
import { BaseModel, compileValue, declareLink, declareMembership, declareRead, ReadKernel, standaloneRead } from '../src/index.js';

/** Tables of three "packages": people (the principal's), members (the guard), notes (a domain's). */
class Person extends BaseModel {
  static override tableName = 'k_people';
}
class Member extends BaseModel {
  static override tableName = 'k_members';
}
class Note extends BaseModel {
  static override tableName = 'k_notes';
  static override timestamps = ['createdAt'];
  static override binaries = ['blob'];
  declare blob: Buffer;
}
class NoteVersion extends BaseModel {
  static override tableName = 'k_note_versions';
}
/** A session table of the principal's package: a declared read of it names "the session being read". */
class Session extends BaseModel {
  static override tableName = 'k_sessions';
  static override timestamps = ['expire'];
}

const H1 = '00000000-0000-4000-8000-000000000001';
const H2 = '00000000-0000-4000-8000-000000000002';
const ALICE = '00000000-0000-4000-8000-00000000000a';
const BOB = '00000000-0000-4000-8000-00000000000b';
const N1 = '00000000-0000-4000-8000-0000000000f1';

const membership = declareMembership({ model: Member, account: 'personId', household: 'householdId' });
const personName = declareLink({ model: Person, key: 'id', field: 'name' });
const noteRead = declareRead({
  name: 'k_note',
  model: Note,
  scope: { household: 'householdId' },
  arg: { column: 'id', format: 'uuid' },
  fields: ['id', 'title', 'createdAt', 'blob', { name: 'author', link: personName, by: 'authorId' }],
  absentIsAnswer: true,
});
const notesRead = declareRead({
  name: 'k_notes',
  model: Note,
  scope: { household: 'householdId' },
  fields: [{ name: 'noteId', column: 'id' }, 'title'],
  list: {
    orderBy: [
      { column: 'title', first: 'Pinned' },
      { column: 'title', order: 'desc' },
    ],
    limit: 2,
  },
  version: { model: NoteVersion, household: 'householdId', column: 'version' },
});
const personStamp = declareLink({ model: Person, key: 'id', field: 'stamp' });
const mySessionsRead = declareRead({
  name: 'k_my_sessions',
  model: Session,
  scope: { account: 'personId' },
  fields: ['handle', 'expire', { name: 'current', session: 'sid' }],
  unexpired: 'expire',
  matches: [{ column: 'sess', key: 'stamp', link: personStamp, by: 'personId' }],
  list: { orderBy: [{ column: 'handle' }] },
});
const myNotesRead = declareRead({
  name: 'k_my_notes',
  model: Note,
  scope: { account: 'authorId' },
  fields: ['title'],
  list: { orderBy: [{ column: 'title' }] },
});

/** Another package's fields of the caller's account, lent to an account read: a count of its rows and one row's field. */
const myNoteCount = declareLink({ model: Note, key: 'authorId', field: 'id', aggregate: 'count' });
const myStamp = declareLink({ model: Person, key: 'id', field: 'stamp' });
const myNotesWithAccount = declareRead({
  name: 'k_my_notes_lent',
  model: Note,
  scope: { account: 'authorId' },
  fields: ['title'],
  list: { orderBy: [{ column: 'title' }], limit: 1 },
  withAccount: { notes: myNoteCount, stamp: myStamp },
});

describe('the read kernel (ReadKernel of @svc/db)', () => {
  let db: TestDatabase;
  let kernel: ReadKernel;
  /** A principal query of the test's own: `$1` person ids, `$2` now (unused). */
  const principal = {
    text: 'select q.batch_index::int as batch_index, p.id as person_id from unnest($1::text[]) with ordinality as q(pid, batch_index) join k_people p on p.id = q.pid::uuid where $2::timestamptz is not null',
    accountColumn: 'person_id',
  };
  /** A session principal: `$1` session ids; the session's id in `session_id`, `$2` the clock it is read by. */
  const sessionPrincipal = {
    text: 'select q.batch_index::int as batch_index, s.person_id, s.sid as session_id from unnest($1::text[]) with ordinality as q(sid, batch_index) join k_sessions s on s.sid = q.sid and s.expire > $2',
    accountColumn: 'person_id',
    sessionColumn: 'session_id',
  };
  const NOW = new Date('2026-06-01T12:00:00Z');
  const load = async (
    key: string,
    path: string,
    by: { text: string; accountColumn: string; sessionColumn?: string } = principal,
  ): Promise<Record<string, unknown> | undefined> => {
    const request = kernel.match(path);
    const text = request ? kernel.compose(by, request) : kernel.compose(by);
    const values = [[key], NOW, ...(request ? kernel.values([request]) : [])];
    // `$n` as knex's `?`, one binding per occurrence (a parameter may occur more than once).
    const bindings: unknown[] = [];
    const sql = text.replace(/\$(\d+)/g, (_m, n: string) => {
      bindings.push(values[Number(n) - 1]);
      return '?';
    });
    const { rows } = await db.knex.raw(sql, bindings as never);
    return rows[0];
  };

  before(async () => {
    db = await createTestDatabase();
    await db.knex.raw(`create table k_people (id uuid primary key, name text, stamp text);
      create table k_sessions (sid text primary key, person_id uuid, handle text, expire timestamptz, sess json);
      create table k_members (person_id uuid, household_id uuid);
      create table k_notes (id uuid primary key, household_id uuid, author_id uuid, title text, blob bytea, created_at timestamptz);
      create table k_note_versions (household_id uuid primary key, version bigint)`);
    await db.knex('k_people').insert([
      { id: ALICE, name: 'Alice', stamp: 'a2' },
      { id: BOB, name: 'Bob', stamp: 'b1' },
    ]);
    const live = '2026-06-02T00:00:00.5Z';
    await db.knex('k_sessions').insert([
      { sid: 's1', personId: ALICE, handle: 'a', expire: live, sess: { stamp: 'a2' } },
      { sid: 's2', personId: ALICE, handle: 'b', expire: live, sess: { stamp: 'a2' } },
      // Expired by the statement's clock (not PostgreSQL's: it is later than NOW by the wall clock too).
      { sid: 's3', personId: ALICE, handle: 'c', expire: '2026-06-01T11:59:59Z', sess: { stamp: 'a2' } },
      // Signed in before the account's stamp moved on: over.
      { sid: 's4', personId: ALICE, handle: 'd', expire: live, sess: { stamp: 'a1' } },
      { sid: 's5', personId: BOB, handle: 'e', expire: live, sess: { stamp: 'b1' } },
    ]);
    await db.knex('k_members').insert([{ personId: ALICE, householdId: H1 }]);
    await db.knex('k_notes').insert([
      { id: N1, householdId: H1, authorId: ALICE, title: 'Pinned', blob: Buffer.from([0, 255]), createdAt: '2026-01-02T03:04:05.678Z' },
      { id: '00000000-0000-4000-8000-0000000000f2', householdId: H1, authorId: BOB, title: 'b', createdAt: '2026-01-02T03:04:05Z' },
      { id: '00000000-0000-4000-8000-0000000000f3', householdId: H1, authorId: ALICE, title: 'c', createdAt: '2026-01-02T03:04:05Z' },
      { id: '00000000-0000-4000-8000-0000000000f4', householdId: H2, authorId: BOB, title: 'other', createdAt: '2026-01-02T03:04:05Z' },
    ]);
    await db.knex('k_note_versions').insert({ householdId: H1, version: 7 });
    kernel = new ReadKernel({
      membership,
      matcher: (path) => {
        const re = new RegExp(`^${path.replace(/\{[A-Za-z]+\}/g, '([^/]+)')}$`);
        return (p) => {
          const m = re.exec(p);
          return m ? Object.fromEntries(m.slice(1).map((v, i) => [`p${i}`, v])) : undefined;
        };
      },
      principalReads: [{ column: 'mine', read: myNotesRead }],
    });
    kernel.add(noteRead, '/h/{householdId}/notes/{noteId}');
    kernel.add(notesRead, '/h/{householdId}/notes', (h) => (h === H1 ? '7' : undefined));
    kernel.add(mySessionsRead, '/me/sessions');
    kernel.add(myNotesWithAccount, '/me/notes');
  });
  after(() => db.destroy());

  it('loads a household read for a member only, with its own aliases, timestamps as ISO, bytea as hex and a linked field', async () => {
    const row = await load(ALICE, `/h/${H1}/notes/${N1.toUpperCase()}`);
    expect(row?.read_value).to.deep.equal({ id: N1, title: 'Pinned', createdAt: '2026-01-02T03:04:05.678Z', blob: '00ff', author: 'Alice' });
    expect(Note.fromDatabaseJson(row?.read_value as never).blob).to.deep.equal(Buffer.from([0, 255]));
    // Bob is no member of H1: nothing is loaded (the route reads itself and answers 404).
    expect((await load(BOB, `/h/${H1}/notes/${N1}`))?.read_value).to.equal(null);
    // A note of another household, for a member: its absence is the answer.
    expect((await load(ALICE, `/h/${H1}/notes/00000000-0000-4000-8000-0000000000f4`))?.read_value).to.equal(false);
  });

  it("loads the principal reads with every statement: the account's own rows only", async () => {
    expect((await load(BOB, '/nothing'))?.mine).to.deep.equal([{ title: 'b' }, { title: 'other' }]);
    const alice = (await load(ALICE, `/h/${H1}/notes/${N1}`))?.mine as { title: string }[];
    expect(alice.map((n) => n.title).sort()).to.deep.equal(['Pinned', 'c']);
  });

  it('lists in the declared order and limit, with the version, and the version alone while the instance holds it', async () => {
    // The route says this instance holds H1's answer at version 7.
    expect((await load(ALICE, `/h/${H1}/notes`))?.read_value).to.deep.equal({ version: '7' });
    const b = { account: 'null', household: `'${H1}'::uuid`, arg: 'null', known: 'null' };
    const { rows } = await db.knex.raw(`select ${compileValue(notesRead, b)} as v`);
    expect(rows[0].v).to.deep.equal({
      version: '7',
      value: [
        { noteId: N1, title: 'Pinned' },
        { noteId: '00000000-0000-4000-8000-0000000000f3', title: 'c' },
      ],
    });
  });

  it('compiles a declared read as a statement of its own (standaloneRead): the value the kernel composes, without the principal', async () => {
    const notes = standaloneRead(notesRead);
    const { rows } = await db.knex.raw(notes.text.replace(/\$(\d)/g, '?'), notes.values({ household: H1 }) as never[]);
    expect(rows[0].value).to.deep.equal({
      version: '7',
      value: [
        { noteId: N1, title: 'Pinned' },
        { noteId: '00000000-0000-4000-8000-0000000000f3', title: 'c' },
      ],
    });
    // The same text every time (prepared once per connection), named after the read and its text:
    // another declaration of the same name (fewer fields, say) is another statement.
    expect(standaloneRead(notesRead)).to.include({ name: notes.name, text: notes.text });
    expect(notes.name).to.match(new RegExp(`^kernel_${notesRead.name}_[0-9a-f]{12}$`));
    const fewer = standaloneRead(declareRead({ ...notesRead, fields: notesRead.fields.slice(0, 1) }));
    expect(fewer.text).to.not.equal(notes.text);
    expect(fewer.name).to.not.equal(notes.name);
  });

  it('marks the session being read, and leaves out rows expired by the statement clock or not matching a linked field', async () => {
    const expire = '2026-06-02T00:00:00.500Z';
    expect((await load('s2', '/me/sessions', sessionPrincipal))?.read_value).to.deep.equal([
      { handle: 'a', expire, current: false },
      { handle: 'b', expire, current: true },
    ]);
    expect((await load('s5', '/me/sessions', sessionPrincipal))?.read_value).to.deep.equal([{ handle: 'e', expire, current: true }]);
    // A principal that is no session (a token, say): no row is its session.
    expect((await load(ALICE, '/me/sessions'))?.read_value).to.deep.equal([
      { handle: 'a', expire, current: false },
      { handle: 'b', expire, current: false },
    ]);
    expect(() =>
      declareRead({
        name: 'k_bad',
        model: Session,
        scope: { account: 'personId' },
        fields: ['handle'],
        matches: [{ column: 'sess', key: "x' or '1", link: personStamp, by: 'personId' }],
      }),
    ).to.throw();
    expect(() => declareRead({ name: 'k_bad', model: Session, scope: { account: 'personId' }, fields: [{ name: 'current', session: 'sid; --' }] })).to.throw();
  });

  it('marks the session being read in a statement of its own too (standaloneRead with `session`), by the clock it is given', async () => {
    const sessions = standaloneRead(mySessionsRead);
    const run = async (keys: Parameters<typeof sessions.values>[0]) =>
      (await db.knex.raw(sessions.text.replace(/\$(\d)/g, '?'), sessions.values(keys) as never[])).rows[0].value;
    // The answer the kernel composes with the session principal, for the same account, session and clock.
    expect(await run({ account: ALICE, now: NOW, session: 's2' })).to.deep.equal((await load('s2', '/me/sessions', sessionPrincipal))?.read_value);
    // No session given: no row is the one being read (as for a principal that is no session).
    expect(await run({ account: ALICE, now: NOW })).to.deep.equal((await load(ALICE, '/me/sessions'))?.read_value);
    // Without a clock nothing is unexpired.
    expect(await run({ account: ALICE, session: 's2' })).to.deep.equal([]);
  });

  it("lends other packages' fields of the caller's account to an account read: a field and a count, 0 when there are none", async () => {
    expect((await load(ALICE, '/me/notes'))?.read_value).to.deep.equal({ rows: [{ title: 'Pinned' }], notes: 2, stamp: 'a2' });
    expect((await load(BOB, '/me/notes'))?.read_value).to.deep.equal({ rows: [{ title: 'b' }], notes: 2, stamp: 'b1' });
    await db.knex('k_people').insert({ id: '00000000-0000-4000-8000-00000000000c', name: 'Carol', stamp: null });
    expect((await load('00000000-0000-4000-8000-00000000000c', '/me/notes'))?.read_value).to.deep.equal({ rows: [], notes: 0, stamp: null });
    // Only an account read takes them, under names that cannot hide its rows.
    expect(() =>
      declareRead({ name: 'k_bad', model: Note, scope: { household: 'householdId' }, fields: ['title'], withAccount: { notes: myNoteCount } }),
    ).to.throw();
    expect(() => declareRead({ name: 'k_bad', model: Note, scope: { account: 'authorId' }, fields: ['title'], withAccount: { rows: myNoteCount } })).to.throw();
    expect(() => declareLink({ model: Note, key: 'authorId', field: 'id', aggregate: 'sum' as 'count' })).to.throw();
  });

  it('matches a path as the host matches it, trying only the patterns of as many segments (and the same literal last segment)', () => {
    // A host that matches as Express does: letter case aside, one trailing slash allowed.
    const tried: string[] = [];
    const k = new ReadKernel({
      membership,
      matcher: (pattern) => {
        const re = new RegExp(`^${pattern.replace(/\{[A-Za-z]+\}/g, '([^/]+)')}/?$`, 'i');
        return (p) => {
          tried.push(pattern);
          const m = re.exec(p);
          return m ? Object.fromEntries(m.slice(1).map((v, i) => [`p${i}`, v])) : undefined;
        };
      },
    });
    k.add(notesRead, '/h/{householdId}/notes/latest');
    k.add(noteRead, '/h/{householdId}/notes/{noteId}');
    k.add(notesRead, '/h/{householdId}/notes');
    k.add(mySessionsRead, '/me/sessions');
    const found = (path: string) => {
      tried.length = 0;
      const r = k.match(path);
      return { read: r?.read.name, arg: r?.arg, tried: [...tried] };
    };
    expect(found(`/h/${H1}/notes/latest`)).to.deep.equal({ read: 'k_notes', arg: undefined, tried: ['/h/{householdId}/notes/latest'] });
    expect(found(`/h/${H1}/NOTES/Latest/`).read, 'letter case and a trailing slash, as the host allows').to.equal('k_notes');
    expect(found(`/h/${H1}/notes/${N1}`)).to.deep.equal({ read: 'k_note', arg: N1, tried: ['/h/{householdId}/notes/{noteId}'] });
    expect(found(`/h/${H1}/notes`)).to.deep.equal({ read: 'k_notes', arg: undefined, tried: ['/h/{householdId}/notes'] });
    expect(found(`/h/${H1}/notes/`).read).to.equal('k_notes');
    expect(found('/me/sessions').tried).to.deep.equal(['/me/sessions']);
    expect(found(`/h/${H1}/notes/${N1}/more`)).to.deep.equal({ read: undefined, arg: undefined, tried: [] });
    expect(found(`/h/${H1}/notes//`).read, 'two trailing slashes: no pattern of as many segments').to.equal(undefined);
  });

  it('matches only keys of the declared formats, and refuses declarations it cannot compile safely', () => {
    expect(kernel.match(`/h/not-a-uuid/notes/${N1}`)).to.equal(undefined);
    expect(kernel.match(`/h/${H1}/notes/nope`)).to.equal(undefined);
    expect(() => declareRead({ name: 'Bad-Name', model: Note, scope: { account: 'authorId' }, fields: ['title'] })).to.throw();
    expect(() => declareRead({ name: 'k_bad', model: Note, scope: { account: 'authorId' }, fields: ['title; drop table x'] })).to.throw();
    expect(() => declareRead({ name: 'k_bad', model: Note, scope: { account: 'authorId' }, fields: ['title'], filter: { title: "x' or '1" } })).to.throw();
    expect(() => kernel.add(noteRead, '/h/{householdId}/notes')).to.throw();
    expect(() => new ReadKernel({ matcher: () => () => undefined }).add(notesRead, '/h/{householdId}/notes')).to.throw(/membership/);
  });
});
