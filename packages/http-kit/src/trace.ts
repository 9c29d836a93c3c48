import { randomBytes } from 'node:crypto';

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * The trace id of a valid W3C `traceparent`, else undefined. Version ff is invalid; version 00
 * allows nothing after the flags; all-zero trace or parent ids are invalid.
 */
export function traceIdFromTraceparent(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = TRACEPARENT.exec(header.trim());
  if (!m) return undefined;
  const [, version, traceId, parentId, , rest] = m;
  if (version === 'ff' || (version === '00' && rest)) return undefined;
  if (/^0+$/.test(traceId!) || /^0+$/.test(parentId!)) return undefined;
  return traceId;
}

/** Random bytes drawn 4 KiB at a time: one call into the CSPRNG per 256 trace ids, not one per request. */
let pool = Buffer.alloc(0);
let taken = 0;
function pooledRandom(size: number): Buffer {
  if (taken + size > pool.length) {
    pool = randomBytes(Math.max(4096, size));
    taken = 0;
  }
  taken += size;
  return pool.subarray(taken - size, taken);
}

export function newTraceId(random: (size: number) => Buffer = pooledRandom): string {
  return random(16).toString('hex');
}
