import type { BaseModel } from './model.js';

/**
 * A fast read, declared as data next to the model it reads: which model, whose it is (a
 * household's or an account's), what the path's argument selects, which of the model's fields the
 * answer carries, and for a list its order and limit. The package writes no SQL for it: the kernel
 * (`ReadKernel` of `@svc/db`, composed by the host) compiles the declaration with aliases of its own and
 * bound keys, guards it (membership of the household, ownership by the account) and loads it in the
 * same round trip as "who is asking". The route that serves it names it (`read` of its operation)
 * and receives the rows as `loadedRead(req, read)` (http-kit), which it hands to the store's one read method: the store
 * turns them into the API shape with the model, as it would turn rows it queried itself.
 */
export interface ReadDeclaration<T = unknown> {
  /** Unique among the declared reads of the service: `[a-z_]+`, the package's name first. */
  readonly name: string;
  /**
   * Type only, never set: the value the kernel loads for this read (a row, the rows, `{ version,
   * value }`, …), so the route's `loadedRead(req, read)` is typed by its declaration.
   */
  readonly loads?: T;
  /** The model whose table is read; its `timestamps` are formatted as the model holds them. */
  readonly model: typeof BaseModel;
  /**
   * Whose data it is. `household`: `column` (a model property) holds the household id, which is
   * the path's first parameter; the kernel reads it only for a member of the household.
   * `account`: `column` holds the owning account; the kernel reads only the caller's rows.
   */
  readonly scope: { readonly household: string } | { readonly account: string };
  /**
   * The path's other parameter, when it has one: the model property it equals, its format (`uuid`:
   * checked and lower-cased, else nothing is read ahead; `text`: as decoded, bounded), and for a
   * key kept hashed the property that holds its SHA-256 (looked up by it, then compared itself).
   */
  readonly arg?: { readonly column: string; readonly format: 'uuid' | 'text'; readonly sha256Column?: string };
  /**
   * What the read selects, in order (by name, never `*`): a model property; a property under
   * another name; or a linked field (another package's, handed in by the host as a ReadLink),
   * looked up by a property of this row. None, with `version`: the answer depends on more than
   * the path (a page of a list, by its query), so only the version is loaded.
   */
  readonly fields: readonly ReadField[];
  /** A list: every matching row, in this order (a unique last key keeps it stable), at most `limit`. */
  readonly list?: {
    /** Each key: a property, ascending unless `desc`; `first`: rows whose property has this value come first. */
    readonly orderBy: readonly { readonly column: string; readonly order?: 'asc' | 'desc'; readonly first?: string }[];
    readonly limit?: number;
  };
  /**
   * The list version of a household read (a row per household that the table's triggers move on
   * every change, `@svc/db` ListVersionModel): the instance may already hold the answer made at a
   * version. The value loaded is then `{ version }` alone when the route's `heldVersion` says it
   * holds that version, else `{ version, value }` (the rows, read in the same snapshot).
   */
  readonly version?: { readonly model: typeof BaseModel; readonly household: string; readonly column: string };
  /**
   * A single read whose absence is an answer (404, say): the value is `false` when there is no
   * row, so the route answers without a statement of its own. Otherwise nothing is loaded then,
   * and the route reads itself.
   */
  readonly absentIsAnswer?: boolean;
  /** Rows only where each of these properties has this value (a kind, say). */
  readonly filter?: { readonly [property: string]: string };
  /**
   * Rows only whose this property (a timestamp) is after the statement's clock: the injected clock
   * the principal is read by, never PostgreSQL's (a session's expiry, say).
   */
  readonly unexpired?: string;
  /**
   * Rows only where a property (with `key`: that key of a json property, as text) equals a field of
   * the same package's other model, looked up by a property of this row (a session's stamp, the
   * account's current one).
   */
  readonly matches?: readonly { readonly column: string; readonly key?: string; readonly link: ReadLink; readonly by: string }[];
  /**
   * Fields of the household itself, lent by the package that owns households (its country, say),
   * looked up by the path's household: the value is then `{ rows, <name>: <field>, … }`.
   */
  readonly withHousehold?: { readonly [name: string]: ReadLink };
  /**
   * Fields of the caller's account lent by the packages that own them (whether a second factor is
   * on, say), looked up by the account an account read is scoped to: the value is then
   * `{ rows, <name>: <field>, … }`, as with `withHousehold`.
   */
  readonly withAccount?: { readonly [name: string]: ReadLink };
}

/**
 * One field of a declared read: a model property, a property under another name, a linked field, or
 * whether the row is the principal's own session (`session`: the property holding a session's id;
 * true for the session being read, false for any other and for a principal that is no session).
 */
export type ReadField =
  | string
  | { readonly name: string; readonly column: string }
  | { readonly name: string; readonly link: ReadLink; readonly by: string }
  | { readonly name: string; readonly session: string };

/**
 * A field another package lends to declared reads (an account's display name, say): the package
 * that owns the model declares it, the host hands it to the package whose read names it, and the
 * kernel looks it up by key. Neither package writes SQL naming the other's table.
 */
export interface ReadLink {
  readonly model: typeof BaseModel;
  /** The property the lookup matches (the owner's key). */
  readonly key: string;
  /** The property it answers (the first matching row's). */
  readonly field: string;
  /** `count`: instead of the field, how many rows match the key (0 for none). */
  readonly aggregate?: 'count';
}

/** Checks a link declaration once. */
export function declareLink<const D extends ReadLink>(link: D): D {
  for (const p of [link.key, link.field]) if (!PROPERTY.test(p)) throw new Error(`link: ${p} is not a model property`);
  if (link.aggregate !== undefined && link.aggregate !== 'count') throw new Error(`link: aggregate ${String(link.aggregate)}`);
  return link;
}

/**
 * Who is a member of which household, declared by the package that owns memberships: the kernel
 * guards every household read with it (a non-member's read answers nothing).
 */
export interface MembershipDeclaration {
  readonly model: typeof BaseModel;
  /** The property holding the member's account. */
  readonly account: string;
  /** The property holding the household. */
  readonly household: string;
}

const NAME = /^[a-z][a-z_]*$/;
const PROPERTY = /^[a-z][A-Za-z0-9]*$/;

/**
 * A model property's column (snake case: `householdId` → `household_id`), as BaseModel maps it:
 * how every declaration (a read, a change source, a job source) names a column by its property.
 * Throws for anything but a plain property name.
 */
export function columnOf(property: string): string {
  if (!PROPERTY.test(property)) throw new Error(`${JSON.stringify(property)} is not a model property`);
  return property.replace(/[A-Z]/g, (m) => `_${m.toLowerCase()}`);
}

/** Checks a declaration once, where it is made (a mistake fails at start-up, not on a request). */
export function declareRead<const D extends ReadDeclaration>(read: D): D {
  if (!NAME.test(read.name)) throw new Error(`declared read ${read.name}: a name of [a-z_]`);
  const scope = 'household' in read.scope ? read.scope.household : read.scope.account;
  const properties = [
    scope,
    ...read.fields.flatMap((f) => (typeof f === 'string' ? [f] : 'column' in f ? [f.name, f.column] : 'session' in f ? [f.name, f.session] : [f.name, f.by])),
    ...(read.arg ? [read.arg.column, ...(read.arg.sha256Column ? [read.arg.sha256Column] : [])] : []),
    ...(read.list?.orderBy.map((o) => o.column) ?? []),
    ...(read.version ? [read.version.household, read.version.column] : []),
    ...(read.unexpired ? [read.unexpired] : []),
    ...(read.matches ?? []).flatMap((m) => [m.column, m.by, m.link.key, m.link.field]),
  ];
  for (const p of properties) if (!PROPERTY.test(p)) throw new Error(`declared read ${read.name}: ${p} is not a model property`);
  if (!read.fields.length && !read.version) throw new Error(`declared read ${read.name}: no fields`);
  for (const m of read.matches ?? []) if (m.key !== undefined && !/^[A-Za-z0-9_]+$/.test(m.key)) throw new Error(`declared read ${read.name}: key ${m.key}`);
  if (read.version && !('household' in read.scope)) throw new Error(`declared read ${read.name}: a list version is a household's`);
  for (const [p, v] of Object.entries(read.filter ?? {}))
    if (!PROPERTY.test(p) || !/^[A-Za-z0-9_ -]+$/.test(v)) throw new Error(`declared read ${read.name}: filter ${p}`);
  for (const name of Object.keys(read.withHousehold ?? {}))
    if (!PROPERTY.test(name) || name === 'rows') throw new Error(`declared read ${read.name}: withHousehold ${name}`);
  if (read.withHousehold && !('household' in read.scope)) throw new Error(`declared read ${read.name}: withHousehold needs a household read`);
  for (const name of Object.keys(read.withAccount ?? {}))
    if (!PROPERTY.test(name) || name === 'rows' || Object.hasOwn(read.withHousehold ?? {}, name))
      throw new Error(`declared read ${read.name}: withAccount ${name}`);
  if (read.withAccount && !('account' in read.scope)) throw new Error(`declared read ${read.name}: withAccount needs an account read`);
  for (const o of read.list?.orderBy ?? [])
    if (o.first !== undefined && !/^[A-Za-z0-9_ -]+$/.test(o.first)) throw new Error(`declared read ${read.name}: first ${o.first}`);
  if (read.list?.limit !== undefined && !(Number.isInteger(read.list.limit) && read.list.limit > 0)) throw new Error(`declared read ${read.name}: limit`);
  return read;
}

/** Checks a membership declaration once. */
export function declareMembership<const D extends MembershipDeclaration>(membership: D): D {
  for (const p of [membership.account, membership.household]) if (!PROPERTY.test(p)) throw new Error(`membership: ${p} is not a model property`);
  return membership;
}

/**
 * "Who is asking" as a statement the read kernel composes a declared read with: the cookie
 * session's lookup, or a bearer token's. It takes the batch's principal keys as `$1` (text[]) and
 * the injected clock as `$2` (timestamptz), and answers one row per key that holds, with
 * `batch_index` (the key's 1-based position) and the account's id in `accountColumn` (uuid).
 */
export interface PrincipalQuery {
  text: string;
  accountColumn: string;
  /** The column holding the session's id, for a principal that is a session (a declared `session` field compares with it). */
  sessionColumn?: string;
}

/** A declared read one request asks for (opaque to the principal lookup that carries it). */
export interface DeclaredReadRequest {
  readonly read: { readonly name: string };
}

/**
 * What a principal lookup sees of the host's read kernel: the read a GET's path asks for, and the
 * statement of the lookup with that read as one more column, `read_value`, and its parameters after
 * the lookup's own two. The lookup never learns which tables the read names.
 */
export interface DeclaredReads {
  readonly size: number;
  match(path: string): DeclaredReadRequest | undefined;
  /**
   * The lookup's statement with the principal reads (always loaded: the caller's memberships, in
   * their column) and, given a request, its read as `read_value`.
   */
  compose(principal: PrincipalQuery, request?: DeclaredReadRequest): string;
  values(requests: readonly (DeclaredReadRequest | undefined)[]): unknown[];
}
