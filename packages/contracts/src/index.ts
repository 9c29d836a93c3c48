/**
 * @svc/contracts: the shapes that cross package boundaries, and nothing else (no logic, no
 * dependencies). A domain package states what it needs from another as one of these capability
 * types in its `createRouter` options; `services/api` hands in the real implementation. So no
 * domain package imports another, and the dependency graph keeps pointing one way.
 */

/** The one clock. Production passes the system clock; tests pass a manual one and move it instead of sleeping. */
export interface Clock {
  now(): Date;
}

/** The one source of randomness for tokens and ids; tests may pass a seeded one. */
export type RandomBytes = (size: number) => Buffer;

/** The session cookie's name (the contract names it; clients and the CSRF check rely on it). */
export const SESSION_COOKIE = 'service_session';

export type HouseholdRole = 'Owner' | 'Adult' | 'Junior';

/** Adult-only operations accept the Owner too (the Owner counts as an adult wherever adults may act). */
export const ADULT_ROLES: readonly HouseholdRole[] = ['Owner', 'Adult'];

/** MembershipResponse of the spec. */
export interface Membership {
  householdId: string;
  householdName: string;
  role: HouseholdRole;
  memberId: string | null;
}

/** Answers "is this account a member, and as what?"; implemented by @svc/households. */
export interface HouseholdAccess {
  /**
   * The caller's role in the household. Throws NotFoundError (404 `not_found`) when the household
   * does not exist or the caller is not a member: a non-member never learns it exists.
   */
  roleOf(userId: string, householdId: string): Promise<HouseholdRole>;
}

/** Lists an account's memberships, for GET /me; implemented by @svc/households. */
export type MembershipsProvider = (userId: string) => Promise<Membership[]>;

/** What other packages may know of accounts; implemented by @svc/accounts. */
export interface AccountDirectory {
  /** Display name and address of each existing account among `ids`. */
  profiles(ids: string[]): Promise<Map<string, { id: string; email: string | null; displayName: string }>>;
  /** Puts the account on the waitlist; false when it already was there. */
  addToWaitlist(entry: { accountId: string; reason: string }): Promise<boolean>;
}

/** Spends one AI turn of a household, or throws 429 (`quota_exceeded`, or paused with an HTTP-date Retry-After); from @svc/households. */
export type SpendTurn = (householdId: string) => Promise<void>;

/** The household facts other packages plan around; implemented by @svc/households. */
export interface HouseholdProfile {
  id: string;
  /** ISO 3166-1 alpha-2, upper case (`ZZ` when unknown). */
  country: string;
  timeZoneId: string;
  /** BCP 47 tag. */
  preferredLanguage: string;
}

/** Looks a household up (no access check: call HouseholdAccess.roleOf first). Throws NotFoundError when there is none. */
export type HouseholdProfiles = (householdId: string) => Promise<HouseholdProfile>;
