import type { AccountDirectory, RandomBytes } from '@svc/contracts';
import { NotAllowedError } from '@svc/http-kit';
import type { IntakeTicket } from './store.js';

export type IntakeMode = 'open' | 'invite' | 'paused';

/** What the waitlist entry of a refused creator says. */
export const WAITLIST_REASON = 'intake_paused';

/** Invite codes compare case-insensitively and without surrounding spaces. */
export function normaliseInviteCode(code: string): string {
  return code.trim().toUpperCase();
}

/**
 * The intake rule of POST /households (service-spec Households 2), decided before anything is
 * written. Open: anyone (an `inviteCode` is ignored). Invite: a code is required; one of
 * INVITE_CODES passes here, any other is handed on as a database code that the creating
 * transaction must spend (403 `invite_code_invalid` there when it cannot). Paused: 403
 * `intake_paused`, after putting the caller on the waitlist (the directory keeps that once).
 */
export async function admit(input: {
  mode: IntakeMode;
  configCodes: ReadonlySet<string>;
  inviteCode: string | null | undefined;
  userId: string;
  accounts: AccountDirectory;
}): Promise<IntakeTicket | null> {
  switch (input.mode) {
    case 'open':
      return null;
    case 'paused':
      await input.accounts.addToWaitlist({ accountId: input.userId, reason: WAITLIST_REASON });
      throw new NotAllowedError('intake_paused', 'New households are paused; you are on the waitlist');
    case 'invite': {
      const code = normaliseInviteCode(input.inviteCode ?? '');
      if (!code) throw new NotAllowedError('invite_required', 'New households need an invite code');
      return { code, source: input.configCodes.has(code) ? 'config' : 'database' };
    }
  }
}

export interface CreateInviteCodeOptions {
  /** The code to create; random (`XXXX-XXXX-XXXX-XXXX`, 80 bits) when left out. */
  code?: string;
  /** Default 1: single use. */
  maxUses?: number;
  expiresAt?: Date | null;
  note?: string | null;
}

// Crockford's base-32 alphabet: no I, L, O, U, so a code read aloud or retyped survives.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A random operator code, `XXXX-XXXX-XXXX-XXXX` in Crockford's base 32 (80 bits). */
export function randomInviteCode(random: RandomBytes): string {
  const bytes = random(16);
  let out = '';
  for (let i = 0; i < 16; i++) out += ALPHABET[bytes[i]! & 31];
  return out.match(/.{4}/g)!.join('-');
}
