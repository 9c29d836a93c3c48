import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { Caller, Clock } from '@svc/contracts';
import type { Request, RequestHandler, Response } from 'express';
import type { Knex } from 'knex';
import { ConflictError, InputError, UnprocessableError } from './errors.js';
import { canonicalJson } from './etag.js';
import type { Logger } from './logger.js';

/** How long a key's answer is kept (and replayed). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** A claim whose request never finished (its instance died) is free again after this long. */
export const IDEMPOTENCY_LEASE_MS = 5 * 60 * 1000;
/** Headers of the first answer sent again with its replay (compared without letter case; sent with the case they were set in). */
const KEPT_HEADERS = new Set(['content-type', 'location', 'etag', 'cache-control', 'retry-after']);
/** The header that marks an answer sent again from its key (as Stripe marks it). */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';
/**
 * Answers that are a verdict on this request's caller or moment, not the operation's outcome
 * (401, 403, 423 locked, 429 limited): never kept, the retry is judged again.
 */
const UNKEPT_STATUSES = new Set([401, 403, 423, 429]);
/** `role` of a claim made where the caller was not a member (or on a route outside a household). */
export const NO_ROLE = '';

/** The first answer to a key, as it was sent. */
export interface KeptAnswer {
  status: number;
  /** By the name as the route set it (letter case kept). */
  headers: Record<string, string>;
  body: Buffer;
}

/** What a claim found when it could not take the key. */
export interface HeldKey {
  method: string;
  path: string;
  fingerprint: string;
  /** The caller's role in the route's household when the key was first used (NO_ROLE: none). */
  role: string;
  /** The scopes of the token that first used the key (sorted, space-separated); null: a cookie session (every scope). */
  scopes: string | null;
  /** Undefined while the first request runs. */
  answer?: KeptAnswer;
  /** True when an answer was kept but can no longer be opened (sealed under a retired key, or kept before answers were sealed). */
  unreadable?: boolean;
}

/** Whose a key is: the person's (decisions.md §8: scoped to the person), whatever credential they came with. */
export interface KeyOwner {
  userId: string;
  key: string;
}

export interface IdempotencyClaim extends KeyOwner {
  method: string;
  path: string;
  fingerprint: string;
  role: string;
  /** The token's scopes (sorted, space-separated); null for a cookie session. */
  scopes: string | null;
  now: Date;
}

/** Where keys live: shared by every instance (PostgreSQL: `PgIdempotencyStore`). */
export interface IdempotencyStore {
  /** Takes the key for this request (true), or answers what holds it (undefined: taken this very moment by another request). */
  claim(c: IdempotencyClaim): Promise<true | HeldKey | undefined>;
  /** What holds the key now (undefined: nothing). */
  read(owner: KeyOwner): Promise<HeldKey | undefined>;
  /** Keeps the answer of the request that holds the key. */
  complete(owner: KeyOwner, answer: KeptAnswer): Promise<void>;
  /** Frees the key (an answer of 500 and above is not kept: the retry runs again). */
  release(owner: KeyOwner): Promise<void>;
  /** Forgets keys past their 24 h; answers how many. */
  purge(now: Date): Promise<number>;
}

/**
 * Seals kept answers with AES-256-GCM, so `idempotency_keys` never holds an answer in the clear
 * (a token, a feed URL, an invitation code shown once). The sealed form is
 * `version (1) | key id (4) | nonce (12) | tag (16) | ciphertext`, bound (as associated data) to
 * the row's person and key, so a sealed answer moved to another row does not open.
 * `secret` seals and opens; each of `previous` still opens (a key rotation: rows sealed before it
 * keep answering until their 24 h are over).
 */
export class AnswerSealer {
  private readonly current: { id: Buffer; key: Buffer };
  private readonly keys: { id: Buffer; key: Buffer }[];

  constructor(secret: string | Buffer, previous: readonly (string | Buffer)[] = []) {
    const derive = (s: string | Buffer) => {
      const key = createHash('sha256').update('idempotency-answers\n').update(s).digest();
      return { id: createHash('sha256').update(key).digest().subarray(0, 4), key };
    };
    this.current = derive(secret);
    this.keys = [this.current, ...previous.map(derive)];
  }

  seal(owner: KeyOwner, answer: KeptAnswer): Buffer {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, nonce);
    cipher.setAAD(aad(owner));
    const plain = Buffer.concat([Buffer.from(`${JSON.stringify(answer.headers)}\n`, 'utf8'), answer.body]);
    const sealed = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([Buffer.from([1]), this.current.id, nonce, cipher.getAuthTag(), sealed]);
  }

  /** The answer, or undefined when it cannot be opened (another key, or not sealed). */
  open(owner: KeyOwner, status: number, sealed: Buffer | null): KeptAnswer | undefined {
    if (!sealed || sealed.length < 33 || sealed[0] !== 1) return undefined;
    const id = sealed.subarray(1, 5);
    const found = this.keys.find((k) => k.id.equals(id));
    if (!found) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', found.key, sealed.subarray(5, 17));
      decipher.setAAD(aad(owner));
      decipher.setAuthTag(sealed.subarray(17, 33));
      const plain = Buffer.concat([decipher.update(sealed.subarray(33)), decipher.final()]);
      const nl = plain.indexOf(10);
      return { status, headers: JSON.parse(plain.subarray(0, nl).toString('utf8')), body: plain.subarray(nl + 1) };
    } catch {
      return undefined;
    }
  }
}

function aad(owner: KeyOwner): Buffer {
  return Buffer.from(JSON.stringify([owner.userId, owner.key]), 'utf8');
}

/** Waits before looking again at a key held by a request in flight (its answer may be being written). */
const IN_FLIGHT_RECHECKS_MS = [5, 15, 30, 60, 120];

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Whether an operation takes `Idempotency-Key`: a write under /api/v1 but /api/v1/auth/* (the route chain then runs the step). */
export function takesIdempotencyKey(op: { method: string; path: string }): boolean {
  const method = op.method.toUpperCase();
  return WRITES.has(method) && op.path.startsWith('/api/v1/') && !op.path.startsWith('/api/v1/auth/');
}

export interface IdempotencyOptions {
  store: IdempotencyStore;
  clock: Clock;
  logger: Logger;
  /**
   * The caller's role in a household (HouseholdAccess.roleOf: throws 404 to a non-member). Given,
   * a key used on a route with a `householdId` is bound to the role the caller had: a replay to a
   * caller who is no longer a member answers that 404, one whose role changed 422.
   */
  roleOf?: (caller: Caller, householdId: string) => Promise<string>;
}

/**
 * `Idempotency-Key` on every POST, PUT, PATCH and DELETE under /api/v1 but /api/v1/auth/*, for a
 * signed-in caller. It runs inside each route's chain (ApiRouter puts it there), after the route's
 * token scope gate, its session requirement, its guard and its input checks: a replay is only
 * ever sent to a request that passed them itself, and a refusal of those gates is never kept.
 *
 * The key is the person's (decisions.md §8), bound to what it was first used with: the method, the
 * path with its query, the body compared as JSON and, on a household's routes, the caller's role
 * there (checked again before a replay: a member removed since gets the route's 404, a changed
 * role 422). Whatever credential the person comes with (cookie or token), the replay is sent only
 * after this request passed the route's own scope gate: a token without the route's scope gets the
 * gate's 403, never the kept answer. The token's scopes are recorded with the key for the audit
 * trail. None of these runs the operation a second time.
 *
 * The claim is one statement; the answer is sealed (AES-256-GCM) and kept right after it has
 * been handed to the connection (not on the request's path), and a retry reaching this instance
 * before that write finished waits for it. A replay carries `Idempotent-Replayed: true`. An
 * answer its route marks `res.locals.unkeptAnswer = true` (a TOTP secret, recovery codes) is
 * never kept: the key is released and a retry runs the operation again.
 */
export function idempotency(options: IdempotencyOptions): RequestHandler {
  const { store, clock, logger, roleOf } = options;
  /** Keeps being written on this instance, by owner. */
  const writing = new Map<string, Promise<void>>();
  const roleHere = async (req: Request, caller: Caller): Promise<{ role: string; refusal?: unknown }> => {
    const householdId = req.params?.householdId;
    if (!roleOf || typeof householdId !== 'string') return { role: NO_ROLE };
    try {
      return { role: await roleOf(caller, householdId) };
    } catch (err) {
      if ((err as { status?: number }).status === 404) return { role: NO_ROLE, refusal: err };
      throw err;
    }
  };
  return async (req, res, next) => {
    if (!WRITES.has(req.method)) return next();
    const header = req.headers['idempotency-key'];
    if (header === undefined || !req.principal) return next();
    const key = Array.isArray(header) ? header.join(', ') : header;
    if (key.length < 1 || key.length > 255)
      throw new InputError('validation_failed', 'Idempotency-Key must be 1 to 255 characters', [
        { field: 'Idempotency-Key', message: 'must be 1 to 255 characters' },
      ]);
    const { userId } = req.principal;
    const owner: KeyOwner = { userId, key };
    const local = `${userId}\n${key}`;
    const current = req.principal.scopes;
    const scopes = current ? [...current].sort().join(' ') : null;
    await writing.get(local);
    const path = req.originalUrl;
    const fingerprint = createHash('sha256')
      .update(canonicalJson(req.body ?? null))
      .digest('base64url');
    const { role, refusal } = await roleHere(req, req.principal);
    const other = (h: HeldKey) => h.method !== req.method || h.path !== path || h.fingerprint !== fingerprint;
    const claim = () => store.claim({ ...owner, method: req.method, path, fingerprint, role, scopes, now: clock.now() });
    let held = await claim();
    // Held by a request whose answer may be on its way into the table (it is written, or the key let
    // go, just after it was sent, on whichever instance): look again a few times, within about
    // 0.3 s, before 409; a key let go meanwhile is claimed for this request.
    for (const waitMs of IN_FLIGHT_RECHECKS_MS) {
      if (held === true || held?.answer || held?.unreadable || (held && other(held))) break;
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      held = (await store.read(owner)) ?? (await claim());
    }
    if (held !== true) {
      // The household's gate, for this request: a caller who is no longer a member learns nothing more than the route's 404.
      if (held && held.role !== NO_ROLE && refusal) throw refusal;
      if (held && other(held))
        throw new UnprocessableError(
          'idempotency_key_reused',
          'This Idempotency-Key was used for another request (another body, method or path) within 24 hours',
        );
      if (held?.unreadable)
        throw new UnprocessableError(
          'idempotency_key_reused',
          'This Idempotency-Key was used within 24 hours and its answer can no longer be sent again; use a new key',
        );
      // Still running (or refused and about to let the key go): the role it ran with decides nothing yet.
      if (!held?.answer)
        throw new ConflictError('idempotency_key_in_flight', 'A request with this Idempotency-Key is still running; retry when it has answered');
      if (held.role !== role)
        throw new UnprocessableError('idempotency_key_reused', 'This Idempotency-Key was used when you had another role in this household; use a new key');
      replay(res, held.answer);
      return;
    }
    keepAnswer(res, (answer) => {
      // An answer that shows a secret once (a TOTP secret, recovery codes: the route sets
      // `res.locals.unkeptAnswer`), a server failure, or a verdict on the caller is never written
      // to the table; the key is let go, so a retry runs again.
      const unkept = answer.status >= 500 || UNKEPT_STATUSES.has(answer.status) || res.locals.unkeptAnswer === true;
      const done = (unkept ? store.release(owner) : store.complete(owner, answer))
        .catch((err: Error) => logger.warn({ err: { message: err.message } }, 'idempotency key: the answer could not be kept'))
        .finally(() => {
          if (writing.get(local) === done) writing.delete(local);
        });
      writing.set(local, done);
    });
    next();
  };
}

/** Sends a kept answer again, byte for byte, marked as a replay. */
function replay(res: Response, answer: KeptAnswer): void {
  res.status(answer.status);
  for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
  res.setHeader(IDEMPOTENT_REPLAYED_HEADER, 'true');
  if (answer.body.length) {
    res.setHeader('Content-Length', answer.body.length);
    res.end(answer.body);
  } else res.end();
}

/** Calls `kept` with the answer once it has been handed to the connection. */
function keepAnswer(res: Response, kept: (answer: KeptAnswer) => void): void {
  const chunks: Buffer[] = [];
  const add = (chunk: unknown, encoding?: unknown) => {
    if (typeof chunk === 'string') chunks.push(Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'));
    else if (chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
  };
  const write = res.write;
  res.write = function (this: Response, chunk: unknown, ...rest: unknown[]) {
    add(chunk, rest[0]);
    return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
  } as Response['write'];
  const end = res.end;
  res.end = function (this: Response, chunk?: unknown, ...rest: unknown[]) {
    if (typeof chunk !== 'function') add(chunk, rest[0]);
    const out = (end as (...a: unknown[]) => Response).call(this, chunk, ...rest);
    const headers: Record<string, string> = {};
    // The names as the route set them (`Location`, `ETag`), so the replay's headers read as the first's.
    // Node has it on every OutgoingMessage; @types/node declares it on ClientRequest only.
    for (const name of (this as unknown as { getRawHeaderNames(): string[] }).getRawHeaderNames()) {
      if (!KEPT_HEADERS.has(name.toLowerCase())) continue;
      const v = this.getHeader(name);
      if (v !== undefined) headers[name] = Array.isArray(v) ? v.join(', ') : String(v);
    }
    kept({ status: this.statusCode, headers, body: Buffer.concat(chunks) });
    return out;
  } as Response['end'];
}

/** Keys in PostgreSQL (`idempotency_keys`), so every instance shares them; answers sealed by `sealer`. */
export class PgIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly knex: Knex,
    private readonly sealer: AnswerSealer,
    private readonly ttlMs = IDEMPOTENCY_TTL_MS,
    private readonly leaseMs = IDEMPOTENCY_LEASE_MS,
  ) {}

  async claim(c: IdempotencyClaim): Promise<true | HeldKey | undefined> {
    // One statement: take the key (new, past its 24 h, or held by a request that never finished),
    // else read what holds it. A row committed by a racing request after this statement began is
    // not seen by its second half: no row then means "just taken by another" (in flight).
    const { rows } = await this.knex.raw<{ rows: (KeyRow & { claimed: boolean })[] }>(
      `with claimed as (
         insert into idempotency_keys as k (user_id, key, method, path, fingerprint, role, scopes, created_at, expires_at, lease_until)
         values (:userId, :key, :method, :path, :fingerprint, :role, :scopes, :now, :expiresAt, :leaseUntil)
         on conflict (user_id, key) do update
           set method = excluded.method, path = excluded.path, fingerprint = excluded.fingerprint, role = excluded.role, scopes = excluded.scopes, status = null, body = null,
               created_at = excluded.created_at, expires_at = excluded.expires_at, lease_until = excluded.lease_until
           where k.expires_at <= excluded.created_at or (k.status is null and k.lease_until <= excluded.created_at)
         returning true as claimed
       )
       select true as claimed, null as method, null as path, null as fingerprint, null as role, null as scopes, null::int as status, null::bytea as body from claimed
       union all
       select false, method, path, fingerprint, role, scopes, status, body from idempotency_keys
        where user_id = :userId and key = :key and not exists (select 1 from claimed)`,
      {
        userId: c.userId,
        key: c.key,
        method: c.method,
        path: c.path,
        fingerprint: c.fingerprint,
        role: c.role,
        scopes: c.scopes,
        now: c.now,
        expiresAt: new Date(c.now.getTime() + this.ttlMs),
        leaseUntil: new Date(c.now.getTime() + this.leaseMs),
      },
    );
    const row = rows[0];
    if (!row) return undefined;
    if (row.claimed) return true;
    return this.held(c, row);
  }

  async read(owner: KeyOwner): Promise<HeldKey | undefined> {
    const row = await this.knex('idempotency_keys')
      .where({ user_id: owner.userId, key: owner.key })
      .first<KeyRow | undefined>('method', 'path', 'fingerprint', 'role', 'scopes', 'status', 'body');
    return row && this.held(owner, row);
  }

  private held(owner: KeyOwner, row: KeyRow): HeldKey {
    const held: HeldKey = { method: row.method, path: row.path, fingerprint: row.fingerprint, role: row.role ?? NO_ROLE, scopes: row.scopes };
    if (row.status === null) return held;
    const answer = this.sealer.open(owner, row.status, row.body);
    return answer ? { ...held, answer } : { ...held, unreadable: true };
  }

  async complete(owner: KeyOwner, answer: KeptAnswer): Promise<void> {
    await this.knex.raw('update idempotency_keys set status = ?, body = ? where user_id = ? and key = ?', [
      answer.status,
      this.sealer.seal(owner, answer),
      owner.userId,
      owner.key,
    ]);
  }

  async release(owner: KeyOwner): Promise<void> {
    await this.knex.raw('delete from idempotency_keys where user_id = ? and key = ? and status is null', [owner.userId, owner.key]);
  }

  /** Forgets every key of a person (their account's deletion): the kept answers hold their data. */
  async forgetPerson(userId: string, trx?: Knex.Transaction): Promise<void> {
    await (trx ?? this.knex).raw('delete from idempotency_keys where user_id = ?', [userId]);
  }

  async purge(now: Date): Promise<number> {
    const { rowCount } = await this.knex.raw<{ rowCount: number }>('delete from idempotency_keys where expires_at <= ?', [now]);
    return rowCount ?? 0;
  }
}

interface KeyRow {
  method: string;
  path: string;
  fingerprint: string;
  role: string | null;
  scopes: string | null;
  status: number | null;
  body: Buffer | null;
}

/** The keys' table and the If-Match writes' locks (`PgConditionalWriteLocks`), as a migration set for the host's runner (history `knex_migrations_idempotency`). */
export const idempotencyMigrations = {
  name: 'idempotency',
  migrations: [
    {
      name: '20261127200300_create_idempotency_keys',
      up: async (knex: Knex) => {
        await knex.raw(`
          create table idempotency_keys (
            user_id text not null,
            key text not null,
            method text not null,
            path text not null,
            fingerprint text not null,
            status integer,
            headers jsonb,
            body bytea,
            created_at timestamptz not null,
            expires_at timestamptz not null,
            lease_until timestamptz not null,
            primary key (user_id, key)
          )`);
        await knex.raw(
          `comment on table idempotency_keys is 'Idempotency-Key of a person''s write: the request it was first used for (method, path with query, SHA-256 of its canonical JSON body) and its answer once sent (null while in flight); kept 24 h'`,
        );
        await knex.raw('create index idempotency_keys_expires_idx on idempotency_keys (expires_at)');
      },
      down: async (knex: Knex) => {
        await knex.raw('drop table if exists idempotency_keys');
      },
    },
    {
      name: '20261127200400_create_conditional_write_locks',
      up: async (knex: Knex) => {
        await knex.raw('create table conditional_write_locks (key text primary key, holder uuid not null, until timestamptz not null)');
        await knex.raw(
          `comment on table conditional_write_locks is 'The resource (its path) an If-Match write is checking and writing, by which request (holder), until when at most (a lease of 30 s)'`,
        );
      },
      down: async (knex: Knex) => {
        await knex.raw('drop table if exists conditional_write_locks');
      },
    },
    {
      name: '20261202110000_idempotency_keys_bound_and_sealed',
      up: async (knex: Knex) => {
        // Keys are bound to the caller's role in the route's household and to the credential's
        // scopes; answers are kept sealed in `body` (headers inside it). Answers kept in the clear
        // before are wiped: their key still holds (no second run) but answers 422.
        await knex.raw('alter table idempotency_keys add column role text, add column scopes text');
        await knex.raw('update idempotency_keys set body = null where status is not null');
        await knex.raw('alter table idempotency_keys drop column headers');
        await knex.raw(
          `comment on table idempotency_keys is 'Idempotency-Key of a person''s write: the request it was first used for (method, path with query, SHA-256 of its canonical JSON body, the caller''s role in the household, the token''s scopes or null for a session) and its answer once sent (status; headers and body sealed with AES-256-GCM; null while in flight); kept 24 h'`,
        );
      },
      down: async (knex: Knex) => {
        await knex.raw('delete from idempotency_keys');
        await knex.raw('alter table idempotency_keys drop column role, drop column scopes, add column headers jsonb');
      },
    },
  ],
};
