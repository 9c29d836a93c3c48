/**
 * The read kernel (part of `@svc/db`'s public API and its report: a change here is a semver event for
 * every package that declares a read). It compiles declared reads (`ReadDeclaration`) into SQL with aliases of its own
 * making, guards them (household reads by the declared membership, account reads by ownership) and
 * composes the one a request needs with the host's principal query ("who is asking": the cookie
 * session, or a bearer token) into one statement, the keys bound as parameters.
 *
 * A principal query is any statement that takes the batch's principal keys as `$1` (text[]) and the
 * injected clock as `$2` (timestamptz), and answers one row per key that holds, with `batch_index`
 * (1-based position of the key) and the account's id in a column the principal names (and, for a
 * principal that is a session, the session's id in another: a declared read may mark "the session
 * being read" by it, and leave out rows expired by the statement's clock `$2`). The kernel
 * wraps it as a derived table and adds its own parameters after `$2`; the principal never sees a
 * domain table, the domain read never sees a principal column but the account id.
 */
import { createHash } from 'node:crypto';
import { isoTimestampSql } from './model.js';
import { columnOf, type DeclaredReads, type MembershipDeclaration, type PrincipalQuery, type ReadDeclaration } from './reads.js';

export type { MembershipDeclaration, PrincipalQuery, ReadDeclaration };

/** The longest `text` argument a read is loaded ahead for (longer: read by the route as without it). */
export const READ_ARG_MAX = 4096;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function column(property: string): string {
  return `"${columnOf(property)}"`;
}

function table(model: ReadDeclaration['model']): string {
  return `"${model.tableName.replace(/"/g, '')}"`;
}

/** SQL expressions of the composing statement the compiled read is bound to. */
export interface ReadBindings {
  account: string;
  household: string;
  arg: string;
  /** The list version the instance holds (text, null for none). */
  known: string;
  /** The principal's session id (text), when the principal is a session: a `session` field compares with it. */
  session?: string;
  /** The statement's clock (timestamptz), for `unexpired`; without it nothing is unexpired. */
  now?: string;
}

/**
 * The declaration as one scalar subquery of type json: the row (an object, or null; `false` for a
 * read whose absence is an answer) or the rows (an
 * array, `[]` for none), each the model's declared fields under their property names (timestamps
 * as the model holds them), with the ownership guard of an account read. `n` makes its aliases.
 */
export function compileRead(read: ReadDeclaration, b: ReadBindings, n = 0): string {
  const t = `kr${n}_t`;
  const { timestamps, binaries } = read.model;
  const fields = read.fields
    .map((f, i) => {
      if (typeof f !== 'string' && 'session' in f) return `coalesce(${t}.${column(f.session)} = ${b.session ?? 'null'}, false) as "${f.name}"`;
      if (typeof f !== 'string' && 'link' in f) {
        const l = `kr${n}_l${i}`;
        const what = f.link.aggregate === 'count' ? 'count(*)::int' : `${l}.${column(f.link.field)}`;
        return `(select ${what} from ${table(f.link.model)} ${l} where ${l}.${column(f.link.key)} = ${t}.${column(f.by)}) as "${f.name}"`;
      }
      const [name, property] = typeof f === 'string' ? [f, f] : [f.name, f.column];
      const c = `${t}.${column(property)}`;
      return `${timestamps.includes(property) ? isoTimestampSql(c) : binaries.includes(property) ? `encode(${c}, 'hex')` : c} as "${name}"`;
    })
    .join(', ');
  const where = ['household' in read.scope ? `${t}.${column(read.scope.household)} = ${b.household}` : `${t}.${column(read.scope.account)} = ${b.account}`];
  for (const [p, v] of Object.entries(read.filter ?? {})) where.push(`${t}.${column(p)} = '${v}'`);
  if (read.unexpired) where.push(`${t}.${column(read.unexpired)} > ${b.now ?? 'null'}`);
  (read.matches ?? []).forEach((m, i) => {
    const l = `kr${n}_m${i}`;
    // Keyed by the account the read is scoped to: one lookup for the principal, not one per row.
    const by = 'account' in read.scope && m.by === read.scope.account ? b.account : `${t}.${column(m.by)}`;
    const value = m.key === undefined ? `${t}.${column(m.column)}` : `${t}.${column(m.column)}->>'${m.key}'`;
    where.push(`${value} = (select ${l}.${column(m.link.field)} from ${table(m.link.model)} ${l} where ${l}.${column(m.link.key)} = ${by})`);
  });
  if (read.arg) {
    if (read.arg.sha256Column) where.push(`${t}.${column(read.arg.sha256Column)} = sha256(convert_to(${b.arg}, 'UTF8'))`);
    where.push(`${t}.${column(read.arg.column)} = ${read.arg.format === 'uuid' ? `${b.arg}::uuid` : b.arg}`);
  }
  const from = `${table(read.model)} ${t}`;
  if (!read.list) {
    const one = `(select row_to_json(kr${n}_r) from (select ${fields} from ${from} where ${where.join(' and ')} limit 1) kr${n}_r)`;
    return read.absentIsAnswer ? `coalesce(${one}, 'false'::json)` : one;
  }
  const order = read.list.orderBy
    .map((o) => (o.first !== undefined ? `(${t}.${column(o.column)} = '${o.first}') desc` : `${t}.${column(o.column)} ${o.order === 'desc' ? 'desc' : 'asc'}`))
    .join(', ');
  const limit = read.list.limit ? ` limit ${read.list.limit}` : '';
  return `(select coalesce(json_agg(row_to_json(kr${n}_r)), '[]'::json) from (select ${fields} from ${from} where ${where.join(' and ')} order by ${order}${limit}) kr${n}_r)`;
}

/**
 * The value a declared read loads (without the membership guard): `compileRead`'s, or for a read
 * with a list version `{ version }` when `b.known` is that version, else `{ version, value }`.
 */
export function compileValue(read: ReadDeclaration, b: ReadBindings): string {
  let value = read.fields.length ? compileRead(read, b) : undefined;
  const lent = [
    ...Object.entries(read.withHousehold ?? {}).map(([name, link]) => ({ name, link, by: b.household })),
    ...Object.entries(read.withAccount ?? {}).map(([name, link]) => ({ name, link, by: b.account })),
  ];
  if (value && lent.length) {
    const parts = lent.map(({ name, link, by }, i) => {
      const what = link.aggregate === 'count' ? 'count(*)::int' : `kh${i}.${column(link.field)}`;
      return `'${name}', (select ${what} from ${table(link.model)} kh${i} where kh${i}.${column(link.key)} = ${by}${link.aggregate ? '' : ' limit 1'})`;
    });
    value = `json_build_object('rows', ${value}, ${parts.join(', ')})`;
  }
  if (!read.version) return value!;
  const v = read.version;
  const version = `coalesce((select kv.${column(v.column)}::text from ${table(v.model)} kv where kv.${column(v.household)} = ${b.household}), '0')`;
  if (!value) return `json_build_object('version', ${version})`;
  return `(select case when kvv.version = ${b.known} then json_build_object('version', kvv.version) else json_build_object('version', kvv.version, 'value', ${value}) end from (select ${version} as version) kvv)`;
}

/** The membership test as a boolean SQL expression. */
export function compileMembership(m: MembershipDeclaration, account: string, household: string): string {
  return `exists (select 1 from ${table(m.model)} km where km.${column(m.household)} = ${household} and km.${column(m.account)} = ${account})`;
}

/** One declared read a request asks for: which, and its bound keys. */
export interface ReadRequest {
  read: ReadDeclaration;
  /** The household id (lower-case uuid) of a household read. */
  household?: string;
  /** The path's other parameter, in the declared format. */
  arg?: string;
  /** The list version this instance holds the answer of (the route's `heldVersion`). */
  known?: string;
}

/** What the kernel hands the request: the declared read's name and its value (never null). */
export interface LentRead {
  name: string;
  value: unknown;
}

/** A read the kernel serves for GETs of a path. */
interface ServedRead {
  read: ReadDeclaration;
  household: boolean;
  match: (path: string) => Record<string, string> | undefined;
  held?: (household: string) => string | undefined;
  /** The path's last segment in lower case when it is literal (not a parameter). */
  last?: string;
}

/**
 * The reads the routes serve, by path: `match` finds the read for a GET's path and checks its keys;
 * `compose` makes the statement of a principal query with that read. Made by the host from its
 * routes' `read` (each route path names one read).
 */
export class ReadKernel implements DeclaredReads {
  private served = 0;
  /** The reads by their path's number of segments, in the order they were added: `match` runs the host's matcher only on these. */
  private readonly bySegments = new Map<number, ServedRead[]>();
  private readonly byName = new Map<string, ReadDeclaration>();

  constructor(
    private readonly options: {
      membership?: MembershipDeclaration;
      /**
       * Account reads loaded with every principal, each as a column of the lookup's row (the
       * caller's memberships, in `memberships`: household routes take the caller's role from it).
       */
      principalReads?: readonly { column: string; read: ReadDeclaration }[];
      /** The host's path matcher (as its router matches: case, trailing slash, decoding). */
      matcher: (path: string) => (requestPath: string) => Record<string, string> | undefined;
    },
  ) {
    for (const p of options.principalReads ?? []) {
      if (!('account' in p.read.scope) || p.read.arg || p.read.version)
        throw new Error(`principal read ${p.read.name}: an account read without a path argument`);
      if (!/^[a-z_]+$/.test(p.column)) throw new Error(`principal read ${p.read.name}: column ${p.column}`);
    }
  }

  /** Serves `read` for GETs of `path` (OpenAPI style: its first parameter the household of a household read, then the read's `arg`). */
  add(read: ReadDeclaration, path: string, held?: (household: string) => string | undefined): void {
    const existing = this.byName.get(read.name);
    if (existing && existing !== read) throw new Error(`declared read ${read.name}: two declarations of one name`);
    const params = (path.match(/\{[A-Za-z0-9_]+\}/g) ?? []).length;
    const household = 'household' in read.scope;
    if (params !== (household ? 1 : 0) + (read.arg ? 1 : 0)) throw new Error(`declared read ${read.name}: ${path} has not the parameters the read keys on`);
    if (household && !this.options.membership) throw new Error(`declared read ${read.name}: a household read needs the membership declaration`);
    this.byName.set(read.name, read);
    const shape = pathShape(path);
    const entry = { read, household, match: this.options.matcher(path), held, last: shape.last.includes('{') ? undefined : shape.last };
    this.served++;
    const same = this.bySegments.get(shape.segments) ?? [];
    same.push(entry);
    this.bySegments.set(shape.segments, same);
  }

  get size(): number {
    return this.served;
  }

  /** The read for a GET of `path`, when its keys have the declared formats (else none: the route reads itself). */
  match(path: string): ReadRequest | undefined {
    // A path matches a pattern of as many segments only (a parameter is one non-empty segment), and
    // one whose last segment is literal only when it is that literal, letter case aside (the host's
    // matcher decides, on these alone).
    const shape = pathShape(path);
    for (const r of this.bySegments.get(shape.segments) ?? []) {
      if (r.last !== undefined && r.last !== shape.last) continue;
      const params = r.match(path);
      if (!params) continue;
      const values = Object.values(params);
      let household: string | undefined;
      if (r.household) {
        if (values[0] === undefined || !UUID.test(values[0])) return undefined;
        household = values[0].toLowerCase();
      }
      let arg = r.read.arg ? values[r.household ? 1 : 0] : undefined;
      if (arg !== undefined) {
        // PostgreSQL's text holds no NUL: such a value would fail the whole batch's statement.
        if (r.read.arg?.format === 'text' ? arg.length > READ_ARG_MAX || arg.includes('\0') : !UUID.test(arg)) return undefined;
        if (r.read.arg?.format === 'uuid') arg = arg.toLowerCase();
      }
      return { read: r.read, household, arg, known: household !== undefined && r.read.version ? r.held?.(household) : undefined };
    }
    return undefined;
  }

  /**
   * The statement of `principal` with `read` as one more column, `read_value`: its own parameters
   * `$3` (uuid[]: household per key), `$4` (text[]: arg per key) and `$5` (text[]: the list version
   * held per key) follow the principal's. A
   * household read is evaluated only for a member. The same text for the same pair, so it can be
   * prepared once per connection.
   */
  compose(principal: PrincipalQuery, request?: ReadRequest): string {
    const account = `kp.${principal.accountColumn}`;
    // The principal as a declared read may name it: its session (when it is one) and the statement's clock.
    const session = principal.sessionColumn ? `kp.${principal.sessionColumn}` : undefined;
    const now = '$2::timestamptz';
    const always = (this.options.principalReads ?? []).map(
      (p, i) => `, ${compileRead(p.read, { account, household: 'null', arg: 'null', known: 'null', session, now }, i + 1)} as "${p.column}"`,
    );
    if (!request) return always.length ? `select kp.*${always.join('')} from (${principal.text}) kp` : principal.text;
    const read = request.read;
    const b = { account, household: 'kk.household', arg: 'kk.arg', known: 'kk.known', session, now };
    let value = compileValue(read, b);
    if ('household' in read.scope) value = `case when ${compileMembership(this.options.membership!, account, b.household)} then ${value} end`;
    return `select kp.*${always.join('')}, ${value} as read_value
  from (${principal.text}) kp
  join unnest($3::uuid[], $4::text[], $5::text[]) with ordinality as kk(household, arg, known, i) on kk.i = kp.batch_index`;
  }

  /** The values of `compose`'s own parameters for a batch of requests. */
  values(requests: readonly (ReadRequest | undefined)[]): unknown[] {
    return [requests.map((r) => r?.household ?? null), requests.map((r) => r?.arg ?? null), requests.map((r) => r?.known ?? null)];
  }
}

/**
 * A path's number of segments and its last segment in lower case, one trailing slash aside (the
 * host's router allows one): what `match` sorts the reads by before any pattern is tried, and
 * http-kit's route table its routes.
 */
export function pathShape(path: string): { segments: number; last: string } {
  let end = path.length;
  if (end > 1 && path.charCodeAt(end - 1) === 47) end--;
  let segments = 0;
  let lastStart = 0;
  for (let i = 0; i < end; i++) {
    if (path.charCodeAt(i) === 47) {
      segments++;
      lastStart = i + 1;
    }
  }
  return { segments, last: path.slice(lastStart, end).toLowerCase() };
}

/** A declared read as a statement of its own (`standaloneRead`). */
export interface StandaloneRead {
  /** The statement's name (prepared once per connection). */
  readonly name: string;
  /**
   * Its text: `$1` the household (uuid), `$2` the path's argument (text), `$3` the account (uuid), `$4` the clock (timestamptz),
   * `$5` the session being read (text: a `session` field is true for the row of that id); one row, `value`.
   */
  readonly text: string;
  /** The values of its parameters (missing keys bound as null: without `session`, every `session` field is false). */
  values(keys: { household?: string; arg?: string; account?: string; now?: Date; session?: string }): unknown[];
}

/**
 * The same compiled read as the kernel composes with a principal, as a statement of its own, for a
 * caller that has already checked who may read it (a transaction, a route the kernel did not serve):
 * the value is `compileValue`'s (for a read with a list version `{ version, value }`), so a read has
 * one SQL however it is loaded. Without the membership guard: the caller's check stands in for it.
 */
export function standaloneRead(read: ReadDeclaration): StandaloneRead {
  let statement = standalone.get(read);
  if (!statement) {
    const b: ReadBindings = { household: 'kb.household', arg: 'kb.arg', account: 'kb.account', known: 'null::text', session: 'kb.session', now: 'kb.now' };
    const text = `select ${compileValue(read, b)} as value from (select $1::uuid as household, $2::text as arg, $3::uuid as account, $4::timestamptz as now, $5::text as session) kb`;
    statement = {
      // Named after its text too: two declarations of one name (a read with and without lent fields) are two statements.
      name: `kernel_${read.name}_${createHash('sha256').update(text).digest('hex').slice(0, 12)}`,
      text,
      values: (k) => [k.household ?? null, k.arg ?? null, k.account ?? null, k.now ?? null, k.session ?? null],
    };
    standalone.set(read, statement);
  }
  return statement;
}

/** `standaloneRead`'s statements, compiled once per declaration (a read a host makes at start-up, say). */
const standalone = new WeakMap<ReadDeclaration, StandaloneRead>();
