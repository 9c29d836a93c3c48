import { createCipheriv, createDecipheriv, createHmac } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Seals an invitation code for storage, so that the household's adults can list the outstanding
 * codes (GET …/invitations answers them) while the database alone never reveals a working code
 * (the lookup key stays the code's SHA-256): AES-256-GCM under a key of its own derived from the
 * host's secret, with the household id as associated data, so a sealed code copied onto another
 * household's row does not open. After the secret is rotated older codes still work but are
 * listed with `code: null`.
 */
export class InvitationCodeSealer {
  private readonly key: Buffer;

  constructor(secret: string) {
    if (!secret) throw new Error('households: the invitation code secret must not be empty');
    this.key = createHmac('sha256', secret).update('@svc/households invitation code key v1').digest();
  }

  /** `iv` is 12 fresh random bytes. Answers IV ‖ tag ‖ ciphertext. */
  seal(householdId: string, code: string, iv: Buffer): Buffer {
    if (iv.length !== IV_BYTES) throw new Error('households: an invitation code IV is 12 bytes');
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(householdId.toLowerCase(), 'utf8'));
    const body = Buffer.concat([cipher.update(code, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]);
  }

  /** The code, or null when it does not open (another secret, another household, damage, none kept). */
  open(householdId: string, sealed: Buffer | null): string | null {
    if (!sealed || sealed.length <= IV_BYTES + TAG_BYTES) return null;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, sealed.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(householdId.toLowerCase(), 'utf8'));
      decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      return null;
    }
  }
}
