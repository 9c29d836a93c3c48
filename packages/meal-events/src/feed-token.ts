import { createCipheriv, createDecipheriv, createHash, createHmac } from 'node:crypto';

/** 256 bits, as the contract asks of a feed token. */
export const FEED_TOKEN_BYTES = 32;

/** What a token this service hands out looks like: 32 bytes in base64url, no padding. */
const TOKEN_FORM = /^[A-Za-z0-9_-]{43}$/;

/**
 * The lookup key of a token: SHA-256 of its URL form. The feed route finds a feed by this hash
 * with an index lookup, so no comparison ever runs over the secret itself: how long a lookup takes
 * tells an attacker at most something about a hash, whose preimage is 256 random bits.
 */
export function feedTokenHash(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** True when `token` has the form of a token this service hands out (anything else is unknown). */
export function isFeedTokenForm(token: string): boolean {
  return TOKEN_FORM.test(token);
}

const IV_BYTES = 12;
/** Opened tokens a sealer keeps (one per household whose adults look at their feed's address; a few hundred kB at most). */
const OPENED_MAX = 2000;
const TAG_BYTES = 16;

/**
 * Seals a feed token for storage, so that the household's adults can read their address again
 * (GET …/calendar-feed answers the URL) while the database alone never reveals a working URL:
 * AES-256-GCM under a key of its own derived from the host's secret, with the household id as
 * associated data, so a sealed token copied onto another household's row does not open.
 */
export class FeedTokenSealer {
  private readonly key: Buffer;
  /**
   * Tokens opened before, by household and sealed bytes (a GCM decipher is a few µs and the same
   * sealed token is asked again on every GET of the feed's URL): only tokens that opened, at most
   * OPENED_MAX, the oldest dropped first. A new token is sealed under a fresh IV, so it has a key
   * of its own; nothing here outlives the process.
   */
  private readonly opened = new Map<string, string>();

  constructor(secret: string) {
    if (!secret) throw new Error('meal-events: the calendar feed secret must not be empty');
    this.key = createHmac('sha256', secret).update('@svc/meal-events calendar feed token key v1').digest();
  }

  /** `iv` is 12 fresh random bytes. Answers IV ‖ tag ‖ ciphertext. */
  seal(householdId: string, token: string, iv: Buffer): Buffer {
    if (iv.length !== IV_BYTES) throw new Error('meal-events: a feed token IV is 12 bytes');
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(householdId.toLowerCase(), 'utf8'));
    const body = Buffer.concat([cipher.update(token, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]);
  }

  /** The token, or undefined when it does not open (another secret, another household, damage). */
  open(householdId: string, sealed: Buffer): string | undefined {
    if (sealed.length <= IV_BYTES + TAG_BYTES) return undefined;
    const key = `${householdId.toLowerCase()}:${sealed.toString('base64')}`;
    const known = this.opened.get(key);
    if (known !== undefined) return known;
    let token: string;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, sealed.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(householdId.toLowerCase(), 'utf8'));
      decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      token = Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
    if (this.opened.size >= OPENED_MAX) this.opened.delete(this.opened.keys().next().value!);
    this.opened.set(key, token);
    return token;
  }
}
