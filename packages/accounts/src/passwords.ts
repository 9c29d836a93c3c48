import { createHash } from 'node:crypto';
import { currentContext, type Logger } from '@svc/http-kit';

/** decisions.md §3: at least 8 characters, at most 256 (longer: 400 value_too_long from the schema). */
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 256;

/** What a client shows when a password is refused for its form (the "plain 400 that states the rules"). */
export const PASSWORD_RULES = `Passwords need ${PASSWORD_MIN} to ${PASSWORD_MAX} characters; any characters are allowed, and passwords seen in a data breach are refused`;

/** Length in characters (code points), as JSON Schema's maxLength counts them. */
export function passwordLength(password: string): number {
  return [...password].length;
}

export function passwordTooShort(password: string): boolean {
  return passwordLength(password) < PASSWORD_MIN;
}

export interface BreachCheckerOptions {
  /** Base URL of a k-anonymity range API (`GET {base}/range/{5 hex}`); undefined: no check. */
  baseUrl: string | undefined;
  logger: Logger;
  /** Slower than this counts as unreachable (decisions.md §1: 2 s). */
  timeoutMs?: number;
}

/**
 * Asks a Have-I-Been-Pwned-style range API whether a password has been seen in a breach. Only the
 * first five hex characters of its SHA-1 leave the service; the match happens here. When the API
 * cannot be reached, or is slow, the password is accepted and a warning logged: a sign-up must not
 * depend on a third party being up.
 */
export class BreachChecker {
  private readonly timeoutMs: number;

  constructor(private readonly options: BreachCheckerOptions) {
    this.timeoutMs = options.timeoutMs ?? 2000;
  }

  get enabled(): boolean {
    return this.options.baseUrl !== undefined;
  }

  async isPwned(password: string): Promise<boolean> {
    const base = this.options.baseUrl;
    if (base === undefined) return false;
    const sha1 = createHash('sha1').update(password, 'utf8').digest('hex').toUpperCase();
    const prefix = sha1.slice(0, 5);
    const suffix = sha1.slice(5);
    try {
      const res = await fetch(`${base.replace(/\/+$/, '')}/range/${prefix}`, {
        headers: { 'Add-Padding': 'true', Accept: 'text/plain' },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      if (!res.ok) throw new Error(`answered ${res.status}`);
      const body = await res.text();
      for (const line of body.split('\n')) {
        const [hashSuffix, count] = line.trim().split(':');
        // Padding lines carry a count of 0: they are not breached passwords.
        if (hashSuffix?.toUpperCase() === suffix && Number(count) > 0) return true;
      }
      return false;
    } catch (err) {
      // The trace id ties the warning to the request that met it; the cause says why (fetch's own
      // message is only "fetch failed": the cause carries ECONNREFUSED, a TLS error, the timeout).
      const cause = (err as Error).cause as { message?: string; code?: string } | undefined;
      this.options.logger.warn(
        {
          traceId: currentContext()?.traceId,
          err: { message: (err as Error).message, name: (err as Error).name },
          ...(cause ? { cause: { message: cause.message, ...(cause.code ? { code: cause.code } : {}) } } : {}),
        },
        'password breach API unreachable or slow; password accepted unchecked',
      );
      return false;
    }
  }
}
