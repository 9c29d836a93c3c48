import { createHmac, timingSafeEqual } from 'node:crypto';
import { InputError } from '@svc/http-kit';
import { LRUCache } from 'lru-cache';
import type { EventPosition } from './store/index.js';

/** What a cursor carries: where the next page starts, and the filter the first page was asked with. */
export interface CursorState {
  after: EventPosition;
  from: string | null;
  to: string | null;
}

const VERSION = 1;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const TIME = /^\d{2}:\d{2}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const B64URL = /^[A-Za-z0-9_-]+$/;

/** 400 `invalid_cursor` (decisions.md §2): the one answer for any cursor the service did not hand out. */
export function invalidCursor(detail = 'The cursor was not handed out by this service for this list'): InputError {
  return new InputError('invalid_cursor', detail, [{ field: 'cursor', message: 'is not a cursor this service handed out for this list', in: 'query' }]);
}

function isDateOrNull(v: unknown): v is string | null {
  return v === null || (typeof v === 'string' && DATE.test(v));
}

/** Cursors that held, kept by CursorCodec so a page asked for again is not verified again (a bounded number, so the memory they hold is bounded too). */
const VERIFIED_MAX = 2_000;

/**
 * Opaque, signed page cursors: `base64url(JSON payload) "." base64url(HMAC-SHA256)`. The MAC covers
 * the household id too, so a cursor only works on the list it came from; anything altered, made up
 * or taken to another household fails the check. Cursors do not expire; a new secret (rotating
 * SESSION_SECRET) turns every outstanding cursor into 400 `invalid_cursor`.
 */
export class CursorCodec {
  private readonly key: Buffer;
  private readonly verified = new LRUCache<string, CursorState>({ max: VERIFIED_MAX });

  constructor(secret: string) {
    if (!secret) throw new Error('meal-events: cursorSecret must not be empty');
    // A key of its own, so a cursor MAC can never be mistaken for any other use of the secret.
    this.key = createHmac('sha256', secret).update('@svc/meal-events cursor key v1').digest();
  }

  private mac(householdId: string, payload: string): Buffer {
    return createHmac('sha256', this.key).update(`${householdId.toLowerCase()}\n${payload}`).digest();
  }

  encode(householdId: string, state: CursorState): string {
    const json = JSON.stringify([VERSION, state.after.date, state.after.servingTime, state.after.id, state.from, state.to]);
    const payload = Buffer.from(json, 'utf8').toString('base64url');
    return `${payload}.${this.mac(householdId, payload).toString('base64url')}`;
  }

  /** The state inside a cursor this service made for this household, or 400 `invalid_cursor`. */
  decode(householdId: string, cursor: string): CursorState {
    // A cursor that held before (a page read again: the next page of a list, a client's retry)
    // is not verified and parsed again; only ones that held are kept, at most VERIFIED_MAX.
    const key = `${householdId.toLowerCase()}\n${cursor}`;
    const known = this.verified.get(key);
    if (known) return known;
    const state = this.verify(householdId, cursor);
    this.verified.set(key, state);
    return state;
  }

  private verify(householdId: string, cursor: string): CursorState {
    const parts = cursor.split('.');
    if (parts.length !== 2) throw invalidCursor();
    const [payload, sig] = parts as [string, string];
    if (!B64URL.test(payload) || !B64URL.test(sig)) throw invalidCursor();
    const given = Buffer.from(sig, 'base64url');
    const expected = this.mac(householdId, payload);
    // Re-encoding catches non-canonical base64url (trailing bits) that would decode to the same bytes.
    if (given.length !== expected.length || given.toString('base64url') !== sig || !timingSafeEqual(given, expected)) throw invalidCursor();
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw invalidCursor();
    }
    // Signed by us, so this holds; checked anyway so that a leaked key cannot smuggle odd values into SQL.
    if (!Array.isArray(parsed) || parsed.length !== 6) throw invalidCursor();
    const [version, date, servingTime, id, from, to] = parsed as unknown[];
    if (version !== VERSION || typeof date !== 'string' || !DATE.test(date) || typeof servingTime !== 'string' || !TIME.test(servingTime))
      throw invalidCursor();
    if (typeof id !== 'string' || !UUID.test(id) || !isDateOrNull(from) || !isDateOrNull(to)) throw invalidCursor();
    return Object.freeze({ after: Object.freeze({ date, servingTime, id }), from, to });
  }
}
