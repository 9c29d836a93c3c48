import { createHash } from 'node:crypto';
import type { Response } from 'express';
import { PreconditionFailedError } from './errors.js';

/** JSON text with every object's members in code-point order: the same for any two equal JSON values, whoever wrote them. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(',')}]`;
  const keys = Object.keys(value as object)
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
}

/**
 * The ETag of a resource's representation: a strong tag of the SHA-256 of its canonical JSON, so a
 * GET (whose text PostgreSQL may have written), a write's answer (JSON.stringify) and an If-Match
 * check (the value read now) agree whenever the resource is the same.
 */
export function etagOf(value: unknown): string {
  // Through JSON first: a Date becomes its ISO text, as in any answer.
  const plain = JSON.parse(JSON.stringify(value ?? null)) as unknown;
  return `"${createHash('sha256').update(canonicalJson(plain)).digest('base64url').slice(0, 27)}"`;
}

/** The ETag of an answer's JSON body (text or UTF-8 bytes); undefined when it is not JSON. */
export function etagOfJsonText(body: string | Buffer): string | undefined {
  try {
    return etagOf(JSON.parse(typeof body === 'string' ? body : body.toString('utf8')));
  } catch {
    return undefined;
  }
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
