/**
 * The few shapes that cross package boundaries. They live here, at the bottom of the dependency
 * graph, so that a package can take another's service through its router deps (the host wires the
 * real one in) without importing it, and the dependencies keep pointing one way.
 */
import { NotAllowedError } from './errors.js';

/** The session cookie's name (service-spec.md, Authentication 1). */
export const SESSION_COOKIE = 'service_session';

export type HouseholdRole = 'Owner' | 'Adult' | 'Junior';

/** Adult-only operations accept the Owner too (decisions.md §5). */
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

/** Throws 403 `forbidden` unless `role` is one of `allowed`. */
export function assertRole(role: HouseholdRole, allowed: readonly HouseholdRole[]): void {
  if (!allowed.includes(role)) throw new NotAllowedError('forbidden', `This operation is not open to the ${role} role`);
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
