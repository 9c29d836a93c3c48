import { declareLink, declareMembership, declareRead, type MembershipDeclaration, type Pojo, type ReadDeclaration, type ReadLink } from '@svc/db';
import { HouseholdMemberModel } from './models/HouseholdMemberModel.js';
import { HouseholdModel } from './models/HouseholdModel.js';
import type { MemberRow } from './models/index.js';
import { HouseholdSchema } from './schemas.js';

/** Who is a member of which household: the read kernel guards every household read with it. */
export const membership: MembershipDeclaration = declareMembership({ model: HouseholdMemberModel, account: 'userId', household: 'householdId' });

/** GET /households/{householdId}: the household's settings (HouseholdResponse, shaped by the model). */
export const householdRead: ReadDeclaration<Pojo> = declareRead({
  name: 'households_household',
  model: HouseholdModel,
  scope: { household: 'id' },
  fields: Object.keys(HouseholdSchema.properties),
});

/** A member as `membersRead` loads it: its row and its account's display name (null without an account). */
export type ListedMember = MemberRow & { accountDisplayName: string | null };

/**
 * GET /households/{householdId}/members: the Owner first, then in the order they joined; each
 * member's own row and, for a member with an account, the account's display name (the accounts
 * package lends it as a ReadLink, handed in by the host: `accountName`).
 */
export function membersRead(accountName: ReadLink): ReadDeclaration<ListedMember[]> {
  return declareRead({
    name: 'households_members',
    model: HouseholdMemberModel,
    scope: { household: 'householdId' },
    fields: [{ name: 'memberId', column: 'id' }, 'userId', 'role', 'displayName', { name: 'accountDisplayName', link: accountName, by: 'userId' }],
    list: { orderBy: [{ column: 'role', first: 'Owner' }, { column: 'createdAt' }, { column: 'id' }] },
  });
}

/**
 * One member of the household by its id (`memberId`), with the fields of its item of GET
 * …/members (`membersRead`'s): the changes feed's value of a member.
 */
export function memberRead(accountName: ReadLink): ReadDeclaration {
  return declareRead({
    name: 'households_member',
    model: HouseholdMemberModel,
    scope: { household: 'householdId' },
    arg: { column: 'id', format: 'uuid' },
    fields: [{ name: 'memberId', column: 'id' }, 'userId', 'role', 'displayName', { name: 'accountDisplayName', link: accountName, by: 'userId' }],
  });
}

/** A household's country (ISO 3166-1 alpha-2), lent to other packages' declared reads (GET …/rules/defaults). */
export const householdCountryLink: ReadLink = declareLink({ model: HouseholdModel, key: 'id', field: 'country' });

/** A household's name, for the memberships read. */
const householdName: ReadLink = declareLink({ model: HouseholdModel, key: 'id', field: 'name' });

/**
 * The caller's memberships (MembershipResponse: GET /me answers them, household routes take the
 * caller's role from them), in the order they joined: the host has the kernel load them with every
 * principal.
 */
export const membershipsRead: ReadDeclaration = declareRead({
  name: 'households_memberships',
  model: HouseholdMemberModel,
  scope: { account: 'userId' },
  fields: ['householdId', { name: 'householdName', link: householdName, by: 'householdId' }, 'role', { name: 'memberId', column: 'id' }],
  list: { orderBy: [{ column: 'createdAt' }, { column: 'householdId' }] },
});
