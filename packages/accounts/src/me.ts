import type { Membership } from '@svc/contracts';
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

export interface UserResponse {
  id: string;
  email: string | null;
  displayName: string;
}

export interface MeResponse {
  user: UserResponse;
  memberships: Membership[];
  isPlatformAdmin: boolean;
  emailConfirmed: boolean;
  hasPassword: boolean;
  serverNow: string;
}

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
    memberships,
    isPlatformAdmin: isPlatformAdmin(account, adminEmails),
    emailConfirmed: account.emailConfirmed,
    hasPassword: account.hasPassword,
    serverNow: now.toISOString(),
  };
}
