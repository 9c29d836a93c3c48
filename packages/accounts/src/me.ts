import type { Membership } from '@svc/contracts';
import type { Infer } from '@svc/http-kit';
import type { MeResponseSchema, UserResponseSchema } from './schemas.js';
import type { Account } from './store.js';

/** What a MeResponse needs of an account (the session loads exactly this, without the hash). */
export interface AccountSummary {
  id: string;
  email: string | null;
  emailNormalized: string | null;
  displayName: string;
  emailConfirmed: boolean;
  hasPassword: boolean;
}

/** The API's user and MeResponse, as their schemas declare them (one declaration). */
export type UserResponse = Infer<typeof UserResponseSchema>;
export type MeResponse = Infer<typeof MeResponseSchema>;

export function summarize(account: Account): AccountSummary {
  return {
    id: account.id,
    email: account.email,
    emailNormalized: account.emailNormalized,
    displayName: account.displayName,
    emailConfirmed: account.emailConfirmed,
    hasPassword: account.passwordHash !== null,
  };
}

/**
 * Platform admins are the accounts whose address is listed in PLATFORM_ADMIN_EMAILS and confirmed:
 * anyone can sign up with an address, only its owner can confirm it.
 */
export function isPlatformAdmin(account: AccountSummary, adminEmails: readonly string[]): boolean {
  return account.emailConfirmed && account.emailNormalized !== null && adminEmails.includes(account.emailNormalized);
}

export function toMeResponse(account: AccountSummary, memberships: Membership[], adminEmails: readonly string[], now: Date): MeResponse {
  return {
    user: { id: account.id, email: account.email, displayName: account.displayName },
    // The contract's Membership is the schema's item without its open index signature: the same fields.
    memberships: memberships as MeResponse['memberships'],
    isPlatformAdmin: isPlatformAdmin(account, adminEmails),
    emailConfirmed: account.emailConfirmed,
    hasPassword: account.hasPassword,
    serverNow: now.toISOString(),
  };
}
