/**
 * A household's life: changing a member's role, removing a member or leaving, handing the
 * household over, deleting it; and the person's side of it when their account is deleted.
 *
 * The household always has exactly one Owner. Every change of its members locks the household's
 * row first (HouseholdStore.lockHousehold) and reads the members only then, inside the same
 * transaction, so two changes of one household never decide on the same stale picture (two
 * hand-overs at once: the second finds its caller no longer Owner). A partial unique index
 * (`household_members_one_owner`) makes a second Owner impossible in the database too.
 */
import type { AccountDeletionStep, AccountDirectory, HouseholdRole, PersonalDataSources } from '@svc/contracts';
import { ConflictError, InputError, NotAllowedError, NotFoundError } from '@svc/http-kit';
import type { Knex } from 'knex';
import type { HouseholdResponse, HouseholdStore, MemberRow } from './HouseholdStore.js';
import { listMembers, type MemberResponse, UNKNOWN_MEMBER_NAME } from './members.js';

const householdNotFound = () => new NotFoundError('not_found', 'No such household');
const memberNotFound = () => new NotFoundError('member_not_found', 'No such member in this household');
const ownerMustTransfer = (message: string) => new ConflictError('owner_must_transfer', message);

/**
 * Locks the household and answers the caller's member row and the target's. 404 `not_found` when
 * the household is unknown or the caller is not a member (a non-member learns nothing), 404
 * `member_not_found` when the household has no member `memberId`.
 */
async function lockCallerAndTarget(
  store: HouseholdStore,
  trx: Knex.Transaction,
  input: { userId: string; householdId: string; memberId: string },
): Promise<{ caller: MemberRow; target: MemberRow }> {
  if (!(await store.lockHousehold(input.householdId, trx))) throw householdNotFound();
  const rows = await store.memberRows(input.householdId, { userId: input.userId, memberId: input.memberId }, trx);
  const caller = rows.find((r) => r.userId === input.userId);
  if (!caller) throw householdNotFound();
  const target = rows.find((r) => r.memberId === input.memberId);
  if (!target) throw memberNotFound();
  return { caller, target };
}

function assertOwner(caller: MemberRow): void {
  if (caller.role !== 'Owner') throw new NotAllowedError('forbidden', `This operation is not open to the ${caller.role} role`);
}

async function named(accounts: AccountDirectory, row: MemberRow): Promise<MemberResponse> {
  const profile = row.userId ? (await accounts.profiles([row.userId])).get(row.userId) : undefined;
  return { memberId: row.memberId, displayName: profile?.displayName ?? row.displayName ?? UNKNOWN_MEMBER_NAME, role: row.role, userId: row.userId };
}

/**
 * PATCH …/members/{memberId}: the Owner makes a member an Adult or a Junior. `Owner` is 400
 * `invalid_role` (a household is handed over with POST …/owner), and the Owner's own role cannot
 * change here either: 409 `owner_must_transfer`, since the household would be left without one.
 */
export async function changeRole(
  deps: { store: HouseholdStore; accounts: AccountDirectory },
  input: { userId: string; householdId: string; memberId: string; role: HouseholdRole },
): Promise<MemberResponse> {
  const { store } = deps;
  const row = await store.transaction(async (trx) => {
    const { caller, target } = await lockCallerAndTarget(store, trx, input);
    assertOwner(caller);
    if (input.role === 'Owner') {
      throw new InputError('invalid_role', 'The Owner role is handed over with POST /api/v1/households/{householdId}/owner', [
        { field: 'role', message: 'must be Adult or Junior', in: 'body' },
      ]);
    }
    if (target.role === 'Owner') throw ownerMustTransfer('The Owner keeps the role until the household is handed over to an Adult');
    if (target.role !== input.role) await store.setRole(input.householdId, target.memberId, input.role, trx);
    return { ...target, role: input.role };
  });
  // The name is asked after the commit: no lock is held while accounts answers.
  return named(deps.accounts, row);
}

/**
 * DELETE …/members/{memberId}: the Owner removes anyone else; any other member removes
 * themself (leaves). The Owner cannot leave (409 `owner_must_transfer`); anyone else removing
 * another member gets 403 `forbidden`. The household's data stays; the removed person's next
 * request finds no membership (roles are read from the database on every request).
 */
export async function removeMember(store: HouseholdStore, input: { userId: string; householdId: string; memberId: string }): Promise<void> {
  await store.transaction(async (trx) => {
    const { caller, target } = await lockCallerAndTarget(store, trx, input);
    if (target.memberId === caller.memberId) {
      if (caller.role === 'Owner') throw ownerMustTransfer('The Owner cannot leave; hand the household over to an Adult first, or delete it');
    } else {
      assertOwner(caller);
    }
    await store.removeMember(input.householdId, target.memberId, trx);
  });
}

/**
 * POST …/owner: the Owner hands the household over to an Adult who has an account; the old Owner
 * becomes an Adult. 409 `invalid_role` for a Junior, a member without an account, or the Owner.
 * Both role changes are one transaction under the household's lock (the old Owner is demoted
 * first, so the one-Owner index holds at every statement).
 */
export async function transferOwnership(store: HouseholdStore, input: { userId: string; householdId: string; memberId: string }): Promise<HouseholdResponse> {
  return store.transaction(async (trx) => {
    const { caller, target } = await lockCallerAndTarget(store, trx, input);
    assertOwner(caller);
    if (target.role !== 'Adult' || target.userId === null) {
      throw new ConflictError('invalid_role', 'The household can only be handed over to an Adult who has an account');
    }
    await store.setRole(input.householdId, caller.memberId, 'Adult', trx);
    await store.setRole(input.householdId, target.memberId, 'Owner', trx);
    return store.get(input.householdId, trx);
  });
}

/**
 * DELETE /households/{householdId}: the Owner deletes the household after typing its name
 * (`confirmName`, compared exactly; 400 `confirmation_mismatch` otherwise). One statement in one
 * transaction: the foreign keys take its members, invitations, threads, plan and credits, and the
 * other packages' rows (rules, events, calendar feed) along.
 */
export async function deleteHousehold(store: HouseholdStore, input: { userId: string; householdId: string; confirmName: string }): Promise<void> {
  await store.transaction(async (trx) => {
    const household = await store.lockHousehold(input.householdId, trx);
    if (!household) throw householdNotFound();
    const [caller] = await store.memberRows(input.householdId, { userId: input.userId }, trx);
    if (!caller) throw householdNotFound();
    assertOwner(caller);
    if (input.confirmName !== household.name) {
      throw new InputError('confirmation_mismatch', "confirmName is not the household's name", [
        { field: 'confirmName', message: "must equal the household's name", in: 'body' },
      ]);
    }
    await store.deleteHouseholds([input.householdId], trx);
  });
}

/**
 * The households part of deleting an account, inside the account deletion's transaction: 409
 * `owner_must_transfer` while the person owns a household that has other members; otherwise the
 * households where the person is the only member are deleted (with everything in them), and the
 * person's memberships elsewhere are removed.
 */
export function accountDeletionStep(store: HouseholdStore): AccountDeletionStep {
  return {
    async deleteAccountData(userId, transaction) {
      const trx = transaction as Knex.Transaction;
      const memberships = await store.lockMembershipsOf(userId, trx);
      const shared = memberships.filter((m) => m.role === 'Owner' && m.otherMembers > 0);
      if (shared.length) {
        throw ownerMustTransfer('You own a household that has other members: hand it over to an Adult, or delete it, first');
      }
      await store.deleteHouseholds(
        memberships.filter((m) => m.otherMembers === 0).map((m) => m.householdId),
        trx,
      );
      await store.removeMemberships(userId, trx);
    },
  };
}

/** The households part of the data export: a household's settings and its members, as GET answers them (no access check). */
export function exportSource(store: HouseholdStore, accounts: AccountDirectory): Pick<PersonalDataSources, 'household'> {
  return {
    async household(householdId) {
      const household = await store.get(householdId);
      const members = await listMembers(store, accounts, householdId);
      return { household: { ...household }, members: members.map((m) => ({ ...m })) };
    },
  };
}
