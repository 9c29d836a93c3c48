import { declareMembership, declareRead, type MembershipDeclaration, type ReadDeclaration } from '@svc/db';
import { HouseholdMemberModel } from './models/HouseholdMemberModel.js';
import { HouseholdModel } from './models/HouseholdModel.js';
import { HouseholdSchema } from './schemas.js';

/** Who is a member of which household: the read kernel guards every household read with it. */
export const membership: MembershipDeclaration = declareMembership({ model: HouseholdMemberModel, account: 'userId', household: 'householdId' });

/** GET /households/{householdId}: the household's settings (HouseholdResponse, shaped by the model). */
export const householdRead: ReadDeclaration = declareRead({
  name: 'households_household',
  model: HouseholdModel,
  scope: { household: 'id' },
  fields: Object.keys(HouseholdSchema.properties),
});
