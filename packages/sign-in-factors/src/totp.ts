import { Secret, TOTP } from 'otpauth';

/** decisions.md §8 details: SHA-1, 6 digits, 30 s, one step either side. */
export const TOTP_PARAMS = { algorithm: 'SHA1', digits: 6, period: 30, window: 1 } as const;

/** A new random secret (160 bits, RFC 4226's recommendation), base32. */
export function newTotpSecret(random: (n: number) => Buffer): string {
  const bytes = random(20);
  return new Secret({ buffer: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer }).base32;
}

function totpOf(secret: string, label = 'account', issuer = 'Meal Planner'): TOTP {
  return new TOTP({
    issuer,
    label,
    secret: Secret.fromBase32(secret),
    algorithm: TOTP_PARAMS.algorithm,
    digits: TOTP_PARAMS.digits,
    period: TOTP_PARAMS.period,
  });
}

/** The otpauth:// URL an authenticator app scans (as a QR code) or takes as a link. */
export function otpauthUrl(secret: string, label: string): string {
  return totpOf(secret, label).toString();
}

/**
 * The time step (30 s counter) of the code when `code` is right for `secret` at `now` within one
 * step either side; null otherwise. The caller refuses a step already used (replay).
 */
export function matchingStep(secret: string, code: string, now: Date): number | null {
  if (!/^[0-9]{6}$/.test(code)) return null;
  const totp = totpOf(secret);
  const delta = totp.validate({ token: code, timestamp: now.getTime(), window: TOTP_PARAMS.window });
  if (delta === null) return null;
  return totp.counter({ timestamp: now.getTime() }) + delta;
}

/** The code of `secret` at `at` (tests and clients' fakes). */
export function totpCode(secret: string, at: Date): string {
  return totpOf(secret).generate({ timestamp: at.getTime() });
}
