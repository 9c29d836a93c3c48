import { createHash } from 'node:crypto';
import type { Clock, Membership } from '@svc/contracts';
import type { DeclaredReadRequest, DeclaredReads, PrincipalQuery } from '@svc/db';
import type { Request } from 'express';
import type { Knex } from 'knex';
import { PreparedBatch } from './knex-timing.js';

/** Methods that change nothing: only their requests load the route's declared read with the principal. */
const SAFE_METHODS = new Set(['GET', 'HEAD']);

/**
 * "Who is asking", as the package that owns the credential declares it to the kernel: its statement
 * (`PrincipalQuery`: the batch's keys `$1`, the injected clock `$2`, one row per key that holds) and
 * its own judgement of a row it found. The kernel runs the statement; the owner never sees the
 * route's read.
 */
export interface PrincipalLookup<R> extends PrincipalQuery {
  /** Names its statements (`[a-z_]`). */
  readonly name: string;
  /**
   * Whether `row` is a principal (its account live, its stamp current, …): only then is the
   * request's declared read handed to its route.
   */
  accepts(row: R): boolean;
}

/** A principal's row as the kernel answers it: the lookup's columns and the principal reads (the caller's memberships). */
export type PrincipalRow<R> = R & { readonly memberships?: Membership[] | null };

/** What the kernel needs of a request: its method and path (the route's declared read), and where it hands that read on. */
export type ReadingRequest = Pick<Request, 'method' | 'path' | 'lent'>;

/**
 * The kernel's run of each request's read: the principal's statement (session or token) with the
 * principal reads and, on a GET or HEAD of a path that serves a declared read, that read, composed
 * by the host's `ReadKernel` (`@svc/db`) into ONE prepared statement and batched with the same
 * lookups of the event loop's turn (PreparedBatch). The read's value goes straight to the route
 * that names it (`loadedRead(req, read)`), once the principal's owner accepted the row: the package
 * that owns the credential supplies its statement and its judgement, never runs another package's
 * read. Without a kernel a principal's statement runs alone (no memberships, no read).
 */
export class RequestReads {
  constructor(private readonly o: { knex: Knex; clock: Clock; kernel?: DeclaredReads }) {}

  /** The kernel's reader of one kind of principal (made once, at start-up). */
  principal<R extends object>(lookup: PrincipalLookup<R>): PrincipalReader<R> {
    if (!/^[a-z_]+$/.test(lookup.name)) throw new Error(`principal ${lookup.name}: a name of [a-z_]`);
    return new PrincipalReader(this.o, lookup);
  }
}

/** The statement's name follows its text: pg refuses one name for two different texts on a connection. */
function statementName(principal: string, text: string): string {
  return `kernel_${principal}_${createHash('sha256').update(text).digest('hex').slice(0, 16)}`;
}

type Loaded<R> = PrincipalRow<R> & { read_value?: unknown };

/** One kind of principal's statements: alone, and with each declared read (made on its first use). */
export class PrincipalReader<R extends object> {
  private readonly alone: PreparedBatch<string, Loaded<R>>;
  private readonly withRead = new Map<string, PreparedBatch<{ key: string; read: DeclaredReadRequest }, Loaded<R>>>();

  constructor(
    private readonly o: { knex: Knex; clock: Clock; kernel?: DeclaredReads },
    private readonly lookup: PrincipalLookup<R>,
  ) {
    const text = o.kernel?.compose(lookup) ?? lookup.text;
    const name = statementName(lookup.name, text);
    this.alone = new PreparedBatch(o.knex, { statement: (keys) => ({ name, text, values: [keys, o.clock.now()] }) });
  }

  /**
   * The principal row for `key` (undefined: none), from the statement that also loads what `req`
   * asks for: on a GET or HEAD of a path the kernel serves, its declared read, handed to the route
   * (`req.lent`) when the lookup accepts the row and the read found a value.
   */
  async load(key: string, req?: ReadingRequest): Promise<PrincipalRow<R> | undefined> {
    const kernel = this.o.kernel;
    const read = req && kernel?.size && SAFE_METHODS.has(req.method) ? kernel.match(req.path) : undefined;
    if (!read) return this.alone.load(key);
    const row = await this.batchFor(read).load({ key, read });
    if (!row) return undefined;
    // The read's value leaves the row: the principal's owner sees its own columns only.
    const value = row.read_value;
    row.read_value = undefined;
    if (value !== null && value !== undefined && this.lookup.accepts(row)) req!.lent = { name: read.read.name, value };
    return row;
  }

  private batchFor(read: DeclaredReadRequest): PreparedBatch<{ key: string; read: DeclaredReadRequest }, Loaded<R>> {
    let batch = this.withRead.get(read.read.name);
    if (!batch) {
      const kernel = this.o.kernel!;
      const text = kernel.compose(this.lookup, read);
      const name = statementName(this.lookup.name, text);
      batch = new PreparedBatch(this.o.knex, {
        statement: (keys) => ({ name, text, values: [keys.map((k) => k.key), this.o.clock.now(), ...kernel.values(keys.map((k) => k.read))] }),
      });
      this.withRead.set(read.read.name, batch);
    }
    return batch;
  }
}
