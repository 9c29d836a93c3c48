import { createHash, timingSafeEqual } from 'node:crypto';
import type { RandomBytes } from '@svc/contracts';

export type TokenPurpose = 'confirm_email' | 'change_email' | 'reset_password';

/** Lifetimes of mailed tokens (decisions.md §3). */
export const TOKEN_LIFETIME_MS: Record<TokenPurpose, number> = {
  confirm_email: 48 * 3600_000,
  change_email: 48 * 3600_000,
  reset_password: 3600_000,
};

/** 256 random bits, base64url (43 characters): safe in a URL without escaping. */
export function newToken(random: RandomBytes): string {
  return random(32).toString('base64url');
}

/** Only this is stored; a database leak does not hand out working links. */
export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** A random security stamp (128 bits, hex). */
export function newStamp(random: RandomBytes): string {
  return random(16).toString('hex');
}

/** Constant-time equality of two strings (different lengths are simply unequal). */
export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}
