import type { HouseholdRole } from '@svc/contracts';
import { BaseModel, objection, rowSchema, TimestampSchema } from '@svc/db';
import { MemberSchema } from '../schemas.js';
import { HouseholdModel } from './HouseholdModel.js';

/** A member as stored; an account member's display name comes from accounts, so the row has none. */
export interface MemberRow {
  memberId: string;
  userId: string | null;
  role: HouseholdRole;
  /** Only for a member without an account. */
  displayName: string | null;
}

/** One row of `household_members`: who belongs to a household, and as what (one Owner per household). */
export class HouseholdMemberModel extends BaseModel {
  static override tableName = 'household_members';
  static override idColumn = 'id';
  static override timestamps = ['createdAt'];
  static override jsonSchema = rowSchema(MemberSchema, {
    id: { type: 'string', format: 'uuid' },
    householdId: { type: 'string', format: 'uuid' },
    displayName: { type: ['string', 'null'] },
    createdAt: TimestampSchema,
  });

  /** The store joins a member row with its household (`memberships`: the household's name). */
  static override relationMappings = () => ({
    household: {
      relation: objection.Model.BelongsToOneRelation,
      modelClass: HouseholdModel,
      join: { from: 'household_members.household_id', to: 'households.id' },
    },
  });

  declare id: string;
  declare householdId: string;
  /** accounts.id; null for a person without an account. */
  declare userId: string | null;
  declare displayName: string | null;
  declare role: HouseholdRole;
  declare createdAt: string;

  toRow(): MemberRow {
    return { memberId: this.id, userId: this.userId, role: this.role, displayName: this.displayName ?? null };
  }
}
