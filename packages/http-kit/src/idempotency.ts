import { createHash } from 'node:crypto';
import type { Clock } from '@svc/contracts';
import type { RequestHandler, Response } from 'express';
import type { Knex } from 'knex';
import { ConflictError, InputError, UnprocessableError } from './errors.js';
import { canonicalJson } from './etag.js';
import type { Logger } from './logger.js';

/** How long a key's answer is kept (and replayed). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** A claim whose request never finished (its instance died) is free again after this long. */
export const IDEMPOTENCY_LEASE_MS = 5 * 60 * 1000;
/** Headers of the first answer sent again with its replay. */
const KEPT_HEADERS = ['content-type', 'location', 'etag', 'cache-control', 'retry-after'];

/** The first answer to a key, as it was sent. */
export interface KeptAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** What a claim found when it could not take the key. */
export interface HeldKey {
  method: string;
  path: string;
  fingerprint: string;
  /** Undefined while the first request runs. */
  answer?: KeptAnswer;
}

export interface IdempotencyClaim {
  userId: string;
  key: string;
  method: string;
  path: string;
  fingerprint: string;
  now: Date;
}

/** Where keys live: shared by every instance (PostgreSQL: `PgIdempotencyStore`). */
export interface IdempotencyStore {
  /** Takes the key for this request (true), or answers what holds it (undefined: taken this very moment by another request). */
  claim(c: IdempotencyClaim): Promise<true | HeldKey | undefined>;
  /** What holds the key now (undefined: nothing). */
  read(userId: string, key: string): Promise<HeldKey | undefined>;
  /** Keeps the answer of the request that holds the key. */
  complete(userId: string, key: string, answer: KeptAnswer): Promise<void>;
  /** Frees the key (an answer of 500 and above is not kept: the retry runs again). */
  release(userId: string, key: string): Promise<void>;
  /** Forgets keys past their 24 h; answers how many. */
  purge(now: Date): Promise<number>;
}

/** Waits before looking again at a key held by a request in flight (its answer may be being written). */
const IN_FLIGHT_RECHECKS_MS = [5, 15, 30, 60, 120];

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const API_V1 = /^\/api\/v1\//i;
const AUTH = /^\/api\/v1\/auth(?:\/|$)/i;

export interface IdempotencyOptions {
  store: IdempotencyStore;
  clock: Clock;
  logger: Logger;
}

/**
 * `Idempotency-Key` on every POST, PUT, PATCH and DELETE under /api/v1 but /api/v1/auth/*, for a
 * signed-in caller (one without a session meets the route's 401 first), after the session step.
 * The key is the person's (`principal.userId`: a cookie session or a token alike) and bound to the
 * method, the path with its query, and the body compared as JSON. The claim is one statement; the
 * answer is kept right after it has been handed to the connection (not on the request's path), and
 * a retry reaching this instance before that write finished waits for it. An answer its route marks
 * `res.locals.unkeptAnswer = true` (a secret shown once) is never kept: the key is released and a
 * retry runs the operation again.
 */
export function idempotency(options: IdempotencyOptions): RequestHandler {
  const { store, clock, logger } = options;
  /** Keeps being written on this instance, by user and key. */
  const writing = new Map<string, Promise<void>>();
  return async (req, res, next) => {
    if (!WRITES.has(req.method)) return next();
    const header = req.headers['idempotency-key'];
    if (header === undefined || !req.principal || !API_V1.test(req.path) || AUTH.test(req.path)) return next();
    const key = Array.isArray(header) ? header.join(', ') : header;
    if (key.length < 1 || key.length > 255)
      throw new InputError('validation_failed', 'Idempotency-Key must be 1 to 255 characters', [
        { field: 'Idempotency-Key', message: 'must be 1 to 255 characters' },
      ]);
    const userId = req.principal.userId;
    const local = `${userId}\n${key}`;
    await writing.get(local);
    const path = req.originalUrl;
    const fingerprint = createHash('sha256')
      .update(canonicalJson(req.body ?? null))
      .digest('base64url');
    let held = await store.claim({ userId, key, method: req.method, path, fingerprint, now: clock.now() });
    // Held by a request whose answer may be on its way into the table (it is written just after it
    // was sent, on whichever instance): look again a few times, within about 0.3 s, before 409.
    for (const waitMs of IN_FLIGHT_RECHECKS_MS) {
      if (held === true || held?.answer || (held && (held.method !== req.method || held.path !== path || held.fingerprint !== fingerprint))) break;
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      held = (await store.read(userId, key)) ?? held;
    }
    if (held !== true) {
      if (held && (held.method !== req.method || held.path !== path || held.fingerprint !== fingerprint))
        throw new UnprocessableError(
          'idempotency_key_reused',
          'This Idempotency-Key was used for another request (another body, method or path) within 24 hours',
        );
      if (!held?.answer)
        throw new ConflictError('idempotency_key_in_flight', 'A request with this Idempotency-Key is still running; retry when it has answered');
      replay(res, held.answer);
      return;
    }
    keepAnswer(res, (answer) => {
      // An answer that shows a secret once (a TOTP secret, recovery codes: the route sets
      // `res.locals.unkeptAnswer`) is never written to the table; the key is let go, so a retry runs again.
      const done = (answer.status >= 500 || res.locals.unkeptAnswer === true ? store.release(userId, key) : store.complete(userId, key, answer))
        .catch((err: Error) => logger.warn({ err: { message: err.message } }, 'idempotency key: the answer could not be kept'))
        .finally(() => {
          if (writing.get(local) === done) writing.delete(local);
        });
      writing.set(local, done);
    });
    next();
  };
}

/** Sends a kept answer again, byte for byte. */
function replay(res: Response, answer: KeptAnswer): void {
  res.status(answer.status);
  for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
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
    for (const name of KEPT_HEADERS) {
      const v = this.getHeader(name);
      if (v !== undefined) headers[name] = Array.isArray(v) ? v.join(', ') : String(v);
    }
    kept({ status: this.statusCode, headers, body: Buffer.concat(chunks) });
    return out;
  } as Response['end'];
}

/** Keys in PostgreSQL (`idempotency_keys`), so every instance shares them. */
export class PgIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly knex: Knex,
    private readonly ttlMs = IDEMPOTENCY_TTL_MS,
    private readonly leaseMs = IDEMPOTENCY_LEASE_MS,
  ) {}

  async claim(c: IdempotencyClaim): Promise<true | HeldKey | undefined> {
    // One statement: take the key (new, past its 24 h, or held by a request that never finished),
    // else read what holds it. A row committed by a racing request after this statement began is
    // not seen by its second half: no row then means "just taken by another" (in flight).
    const { rows } = await this.knex.raw<{
      rows: {
        claimed: boolean;
        method: string | null;
        path: string | null;
        fingerprint: string | null;
        status: number | null;
        headers: Record<string, string> | null;
        body: Buffer | null;
      }[];
    }>(
      `with claimed as (
         insert into idempotency_keys as k (user_id, key, method, path, fingerprint, created_at, expires_at, lease_until)
         values (:userId, :key, :method, :path, :fingerprint, :now, :expiresAt, :leaseUntil)
         on conflict (user_id, key) do update
           set method = excluded.method, path = excluded.path, fingerprint = excluded.fingerprint, status = null, headers = null, body = null,
               created_at = excluded.created_at, expires_at = excluded.expires_at, lease_until = excluded.lease_until
           where k.expires_at <= excluded.created_at or (k.status is null and k.lease_until <= excluded.created_at)
         returning true as claimed
       )
       select true as claimed, null as method, null as path, null as fingerprint, null::int as status, null::jsonb as headers, null::bytea as body from claimed
       union all
       select false, method, path, fingerprint, status, headers, body from idempotency_keys
        where user_id = :userId and key = :key and not exists (select 1 from claimed)`,
      {
        userId: c.userId,
        key: c.key,
        method: c.method,
        path: c.path,
        fingerprint: c.fingerprint,
        now: c.now,
        expiresAt: new Date(c.now.getTime() + this.ttlMs),
        leaseUntil: new Date(c.now.getTime() + this.leaseMs),
      },
    );
    const row = rows[0];
    if (!row) return undefined;
    if (row.claimed) return true;
    return {
      method: row.method!,
      path: row.path!,
      fingerprint: row.fingerprint!,
      answer: row.status === null ? undefined : { status: row.status, headers: row.headers ?? {}, body: row.body ?? Buffer.alloc(0) },
    };
  }

  async read(userId: string, key: string): Promise<HeldKey | undefined> {
    const row = await this.knex('idempotency_keys').where({ user_id: userId, key }).first('method', 'path', 'fingerprint', 'status', 'headers', 'body');
    if (!row) return undefined;
    return {
      method: row.method,
      path: row.path,
      fingerprint: row.fingerprint,
      answer: row.status === null ? undefined : { status: row.status, headers: row.headers ?? {}, body: row.body ?? Buffer.alloc(0) },
    };
  }

  async complete(userId: string, key: string, answer: KeptAnswer): Promise<void> {
    await this.knex.raw('update idempotency_keys set status = ?, headers = ?::jsonb, body = ? where user_id = ? and key = ?', [
      answer.status,
      JSON.stringify(answer.headers),
      answer.body,
      userId,
      key,
    ]);
  }

  async release(userId: string, key: string): Promise<void> {
    await this.knex.raw('delete from idempotency_keys where user_id = ? and key = ? and status is null', [userId, key]);
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
  ],
};
