import { createHmac, timingSafeEqual } from 'node:crypto';
import { InputError } from '@svc/http-kit';
import { MEAL_CATEGORIES } from './schemas.js';

/** Where a page ends (the list's order: name key, then id). */
export interface DishPosition {
  nameKey: string;
  id: string;
}

/** What a cursor carries: where the next page starts, and the filter the first page was asked with. */
export interface DishCursorState {
  after: DishPosition;
  category: string | null;
  q: string | null;
}

const VERSION = 1;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const B64URL = /^[A-Za-z0-9_-]+$/;

/** 400 `invalid_cursor`: the one answer for any cursor the service did not hand out for this list. */
export function invalidCursor(detail = 'The cursor was not handed out by this service for this list'): InputError {
  return new InputError('invalid_cursor', detail, [{ field: 'cursor', message: 'is not a cursor this service handed out for this list', in: 'query' }]);
}

const isTextOrNull = (v: unknown): v is string | null => v === null || typeof v === 'string';

/**
 * Opaque, signed page cursors: `base64url(JSON payload) "." base64url(HMAC-SHA256)`, as the events
 * list makes them. The MAC covers the household id too, so a cursor works only on the list it came
 * from; anything altered, made up or taken to another household fails the check.
 */
export class DishCursorCodec {
  private readonly key: Buffer;

  constructor(secret: string) {
    if (!secret) throw new Error('dishes: cursorSecret must not be empty');
    // A key of its own, so a cursor MAC can never be mistaken for any other use of the secret.
    this.key = createHmac('sha256', secret).update('@svc/dishes cursor key v1').digest();
  }

  private mac(householdId: string, payload: string): Buffer {
    return createHmac('sha256', this.key).update(`${householdId.toLowerCase()}\n${payload}`).digest();
  }

  encode(householdId: string, state: DishCursorState): string {
    const json = JSON.stringify([VERSION, state.after.nameKey, state.after.id, state.category, state.q]);
    const payload = Buffer.from(json, 'utf8').toString('base64url');
    return `${payload}.${this.mac(householdId, payload).toString('base64url')}`;
  }

  /** The state inside a cursor this service made for this household's list, or 400 `invalid_cursor`. */
  decode(householdId: string, cursor: string): DishCursorState {
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
    if (!Array.isArray(parsed) || parsed.length !== 5) throw invalidCursor();
    const [version, nameKey, id, category, q] = parsed as unknown[];
    if (version !== VERSION || typeof nameKey !== 'string' || typeof id !== 'string' || !UUID.test(id)) throw invalidCursor();
    if (!isTextOrNull(category) || (category !== null && !(MEAL_CATEGORIES as readonly string[]).includes(category)) || !isTextOrNull(q)) throw invalidCursor();
    return { after: { nameKey, id }, category, q };
  }
}
