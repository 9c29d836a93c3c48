import { createHash, randomUUID } from 'node:crypto';
import type { Clock } from '@svc/contracts';
import type { Response } from 'express';
import type { Knex } from 'knex';
import { configure } from 'safe-stable-stringify';
import { systemClock } from './clock.js';
import { PreconditionFailedError, ServiceUnavailableError } from './errors.js';

const stableStringify = configure({ deterministic: true });

/**
 * JSON text with every object's members in UTF-16 code-unit order (safe-stable-stringify's
 * deterministic form): the same for any two equal JSON values, whoever wrote them. The ETags and
 * the Idempotency-Key fingerprints are hashes of it. Not RFC 8785's `canonicalize`, which refuses
 * (throws on) a lone surrogate that a valid JSON request body may carry; for every other JSON
 * value the two write the same text.
 */
export function canonicalJson(value: unknown): string {
  return stableStringify(value) ?? 'null';
}

/**
 * The ETag of a resource's representation: a strong tag of the SHA-256 of its canonical JSON, so a
 * GET (whose text PostgreSQL may have written), a write's answer (JSON.stringify) and an If-Match
 * check (the value read now) agree whenever the resource is the same.
 */
export function etagOf(value: unknown): string {
  // Through JSON first: a Date becomes its ISO text, as in any answer.
  return tagOfPlain(JSON.parse(JSON.stringify(value ?? null)) as unknown);
}

function tagOfPlain(plain: unknown): string {
  return `"${createHash('sha256').update(canonicalJson(plain)).digest('base64url').slice(0, 27)}"`;
}

/** Tags of answer texts seen lately: a hot GET sends the same text again and again (kept by the session read or a page cache). */
const recentTags = new Map<string, string>();
const RECENT_TAGS_MAX = 1000;
const RECENT_TEXT_MAX = 4096; // at most ~4 MB of texts held

/** The ETag of an answer's JSON body (text or UTF-8 bytes); undefined when it is not JSON. */
export function etagOfJsonText(body: string | Buffer): string | undefined {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  const known = recentTags.get(text);
  if (known) return known;
  let tag: string;
  try {
    tag = tagOfPlain(JSON.parse(text));
  } catch {
    return undefined;
  }
  if (text.length <= RECENT_TEXT_MAX) {
    if (recentTags.size >= RECENT_TAGS_MAX) recentTags.delete(recentTags.keys().next().value as string);
    recentTags.set(text, tag);
  }
  return tag;
}

/**
 * Makes the answer carry an ETag computed from its own JSON body when it succeeds (2xx): set as
 * the body leaves (`res.end`), so it holds for any way a handler writes (res.json, text lent by
 * the session read, a compiled serializer, an Idempotency-Key replay's stored bytes).
 */
export function tagAnswer(res: Response): void {
  const end = res.end;
  res.end = function (this: Response, chunk?: unknown, ...rest: unknown[]) {
    if (!this.headersSent && this.statusCode >= 200 && this.statusCode < 300 && (typeof chunk === 'string' || Buffer.isBuffer(chunk)) && chunk.length) {
      const tag = etagOfJsonText(chunk);
      if (tag) this.setHeader('ETag', tag);
    }
    return (end as (...a: unknown[]) => Response).call(this, chunk, ...rest);
  } as Response['end'];
}

/**
 * RFC 9110 If-Match against the resource's current value (strong comparison; `*` matches any
 * existing resource). Throws 412 `precondition_failed` when no listed tag is the current one.
 */
export function checkIfMatch(header: string, current: unknown): void {
  const wanted = header.trim();
  if (wanted === '*') return;
  const now = etagOf(current);
  const tags = wanted.split(',').map((t) => t.trim());
  if (!tags.includes(now)) throw new PreconditionFailedError();
}

/**
 * Serialises the If-Match writes of one resource across instances: the check and the write of one
 * request run while it holds the resource's lock, so of two writers holding the same tag exactly
 * one passes (the other then sees the new tag: 412). Writes without If-Match do not take it.
 */
export interface ConditionalWriteLocks {
  /** Waits for the lock of `key`; answers its release. */
  acquire(key: string): Promise<() => Promise<void>>;
}

/** How long a waiting If-Match write looks for the lock (then 503 with Retry-After). */
const LOCK_WAITS_MS = [2, 5, 10, 20, 40, 80, 160, 320, 500, 500, 1000, 1000, 1000, 1000];

/**
 * Locks as rows of `conditional_write_locks` with a 30 s lease (an instance that dies holding one
 * frees it by the lease), taken with one `INSERT … ON CONFLICT … WHERE expired` and given back
 * with one DELETE after the answer: no connection is held while the handler runs.
 */
export class PgConditionalWriteLocks implements ConditionalWriteLocks {
  /** `clock`: the service's injected clock, which dates the lease (not the database's `now()`). */
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock = systemClock,
  ) {}

  async acquire(key: string): Promise<() => Promise<void>> {
    const holder = randomUUID();
    for (let i = 0; ; i++) {
      const now = this.clock.now();
      const { rows } = await this.knex.raw<{ rows: unknown[] }>(
        `insert into conditional_write_locks as l (key, holder, until) values (?, ?, ?::timestamptz + interval '30 seconds')
         on conflict (key) do update set holder = excluded.holder, until = excluded.until where l.until <= ?::timestamptz
         returning 1`,
        [key, holder, now, now],
      );
      if (rows.length) break;
      const wait = LOCK_WAITS_MS[i];
      if (wait === undefined) throw new ServiceUnavailableError('Another conditional write of this resource is still running');
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
    return async () => {
      await this.knex.raw('delete from conditional_write_locks where key = ? and holder = ?', [key, holder]);
    };
  }
}
