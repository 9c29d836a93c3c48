import type { AccountDirectory, HouseholdRole, RandomBytes } from '@svc/contracts';
import { assertRole } from '@svc/http-kit';
import type { HouseholdStore, InvitationResponse } from './HouseholdStore.js';

/** An invitation code lives this long (decisions.md §5). */
export const INVITATION_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000;

/** Who may invite: Owner and Adult; a Junior gets 403 `forbidden`. */
export const INVITING_ROLES: readonly HouseholdRole[] = ['Owner', 'Adult'];

/** Shown for a member whose account the directory no longer knows. */
export const UNKNOWN_MEMBER_NAME = 'Former member';

export interface MemberResponse {
  memberId: string;
  displayName: string;
  role: HouseholdRole;
  userId: string | null;
}

/** The members with their display names (accounts is asked once, for all of them): the Owner first, then in the order they joined. */
export async function listMembers(store: HouseholdStore, accounts: AccountDirectory, householdId: string): Promise<MemberResponse[]> {
  const rows = await store.members(householdId);
  const ids = rows.map((r) => r.userId).filter((id): id is string => id !== null);
  const profiles = ids.length ? await accounts.profiles(ids) : new Map<string, { displayName: string }>();
  return rows.map((r) => ({
    memberId: r.memberId,
    displayName: (r.userId ? profiles.get(r.userId)?.displayName : r.displayName) ?? r.displayName ?? UNKNOWN_MEMBER_NAME,
    role: r.role,
    userId: r.userId,
  }));
}

/** 128 random bits, base64url: the code is the only proof the invitee needs. */
export function newInvitationCode(random: RandomBytes): string {
  return random(16).toString('base64url');
}

/** POST /households/{id}/invitations: a member who is Owner or Adult invites an Adult or a Junior. */
export async function invite(
  deps: { store: HouseholdStore; random: RandomBytes; now: Date },
  input: { userId: string; householdId: string; role: 'Adult' | 'Junior' },
): Promise<InvitationResponse> {
  assertRole(await deps.store.roleOf(input.userId, input.householdId), INVITING_ROLES);
  return deps.store.createInvitation({
    householdId: input.householdId,
    role: input.role,
    createdBy: input.userId,
    code: newInvitationCode(deps.random),
    at: deps.now,
    expiresAt: new Date(deps.now.getTime() + INVITATION_LIFETIME_MS),
  });
}
