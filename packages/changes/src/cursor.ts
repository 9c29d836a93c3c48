import { createHmac, timingSafeEqual } from 'node:crypto';
import { GoneError, InputError } from '@svc/http-kit';

/** 400 `invalid_cursor` (decisions §2): the one answer for any `since` this service did not hand out for this household. */
export function invalidCursor(detail = 'The cursor was not handed out by this service for this household'): InputError {
  return new InputError('invalid_cursor', detail, [{ field: 'since', message: 'is not a cursor this service handed out for this household', in: 'query' }]);
}

const POSITION = /^(0|[1-9][0-9]{0,17})$/;
const MAC = /^[A-Za-z0-9_-]{22}$/;
/** 16 bytes of HMAC-SHA256: a cursor guessed for another household holds with odds of 2^-128. */
const MAC_BYTES = 16;
/** Cursors that held, kept so a poll asked again with the same cursor is not verified again (a bounded number: small cursors, a bounded memory). */
const VERIFIED_MAX = 4_000;

/**
 * The feed's cursors: `<position>.<base64url(HMAC-SHA256(household, position))[16 bytes]>`. The MAC
 * binds the position to the household it was handed out for, so a cursor taken to another
 * household (or altered, or made up) is refused instead of answering that household's changes
 * after someone else's position. The position stays readable (it is no secret: positions count a
 * household's own changes). A new secret (rotating SESSION_SECRET) refuses every outstanding cursor.
 */
export class ChangesCursor {
  private readonly key: Buffer;
  /** Household and cursor → position, for cursors that held (only those), the oldest out first. */
  private readonly verified = new Map<string, string>();

  constructor(secret: string) {
    if (!secret) throw new Error('changes: cursorSecret must not be empty');
    // A key of its own, so this MAC can never be mistaken for any other use of the secret.
    this.key = createHmac('sha256', secret).update('@svc/changes cursor key v1').digest();
  }

  private mac(householdId: string, position: string): Buffer {
    return createHmac('sha256', this.key).update(`${householdId.toLowerCase()}\n${position}`).digest().subarray(0, MAC_BYTES);
  }

  encode(householdId: string, position: string): string {
    return `${position}.${this.mac(householdId, position).toString('base64url')}`;
  }

  /**
   * The position a cursor of this household holds; 400 `invalid_cursor` for anything else. A bare
   * position (the unsigned cursors handed out before they were bound to their household) answers
   * 410 `cursor_expired`: such a client reads everything again, as after a purge.
   */
  decode(householdId: string, cursor: string): string {
    const key = `${householdId.toLowerCase()}\n${cursor}`;
    const known = this.verified.get(key);
    if (known !== undefined) return known;
    const position = this.verify(householdId, cursor);
    if (this.verified.size >= VERIFIED_MAX) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(key, position);
    return position;
  }

  private verify(householdId: string, cursor: string): string {
    if (POSITION.test(cursor))
      throw new GoneError('cursor_expired', 'This cursor is of an older form, no longer accepted: read everything again, without since');
    const dot = cursor.indexOf('.');
    const position = cursor.slice(0, dot);
    const sig = cursor.slice(dot + 1);
    if (dot < 0 || !POSITION.test(position) || !MAC.test(sig)) throw invalidCursor();
    const given = Buffer.from(sig, 'base64url');
    const expected = this.mac(householdId, position);
    // Re-encoding catches non-canonical base64url (trailing bits) that decodes to the same bytes.
    if (given.length !== expected.length || given.toString('base64url') !== sig || !timingSafeEqual(given, expected)) throw invalidCursor();
    return position;
  }
}
