import { createCipheriv, createDecipheriv, createHash, createHmac, timingSafeEqual } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * The keys this package derives from the host's secret (SESSION_SECRET, the one secret ops keep),
 * one per purpose: sealing TOTP secrets (AES-256-GCM, the account id as associated data, so a
 * sealed secret copied onto another account's row does not open) and the keyed hash of recovery
 * codes (HMAC-SHA-256: a stolen table cannot be searched offline without the key).
 */
export class FactorSecrets {
  private readonly sealKey: Buffer;
  private readonly hashKey: Buffer;

  constructor(secret: string) {
    if (!secret) throw new Error('sign-in-factors: the secret must not be empty');
    this.sealKey = createHmac('sha256', secret).update('@svc/sign-in-factors totp secret key v1').digest();
    this.hashKey = createHmac('sha256', secret).update('@svc/sign-in-factors recovery code key v1').digest();
  }

  /** IV ‖ tag ‖ ciphertext of `plain`; `iv` is 12 fresh random bytes. */
  seal(accountId: string, plain: string, iv: Buffer): Buffer {
    const cipher = createCipheriv('aes-256-gcm', this.sealKey, iv);
    cipher.setAAD(Buffer.from(accountId.toLowerCase(), 'utf8'));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]);
  }

  /** The sealed text, or null when it does not open (another secret, another account, damage). */
  open(accountId: string, sealed: Buffer): string | null {
    if (sealed.length <= IV_BYTES + TAG_BYTES) return null;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.sealKey, sealed.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(accountId.toLowerCase(), 'utf8'));
      decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      return null;
    }
  }

  /** The stored form of a recovery code: keyed hash of its normalised form. */
  recoveryCodeHash(code: string): Buffer {
    return createHmac('sha256', this.hashKey).update(normalizeRecoveryCode(code)).digest();
  }
}

/** Recovery codes are typed by people: case, spaces and dashes do not matter. */
export function normalizeRecoveryCode(code: string): string {
  return code.replace(/[\s-]/g, '').toLowerCase();
}

/** SHA-256 of a random bearer token (mfaToken): 256 random bits need no key. */
export function tokenHash(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** Constant-time equality of two strings. */
export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}
