import { createHash } from 'node:crypto';
import { BaseModel, objection, rowSchema, TimestampSchema } from '@svc/db';
import { type InvitationResponse, InvitationSchema } from '../schemas.js';
import { HouseholdMemberModel } from './HouseholdMemberModel.js';

/** Invitation codes are bearer secrets: only their SHA-256 is stored. */
export function invitationCodeHash(code: string): string {
  return createHash('sha256').update(code.trim(), 'utf8').digest('hex');
}

/** One row of `household_invitations`: a single-use code (stored hashed) for an Adult or a Junior. */
export class HouseholdInvitationModel extends BaseModel {
  static override tableName = 'household_invitations';
  static override idColumn = 'id';
  static override timestamps = ['createdAt', 'expiresAt', 'acceptedAt'];
  static override jsonSchema = rowSchema(InvitationSchema, {
    id: { type: 'string', format: 'uuid' },
    codeHash: { type: 'string' },
    createdBy: { type: ['string', 'null'], format: 'uuid' },
    createdAt: TimestampSchema,
    acceptedAt: { ...TimestampSchema, type: ['string', 'null'] },
    acceptedBy: { type: ['string', 'null'], format: 'uuid' },
    memberId: { type: ['string', 'null'], format: 'uuid' },
    sealedCode: {},
  });

  /**
   * The member row of the account that minted the code, in the same household (none once it left):
   * the store joins it to list who created each outstanding code.
   */
  static override relationMappings = () => ({
    creator: {
      relation: objection.Model.BelongsToOneRelation,
      modelClass: HouseholdMemberModel,
      join: {
        from: ['household_invitations.household_id', 'household_invitations.created_by'],
        to: ['household_members.household_id', 'household_members.user_id'],
      },
    },
  });

  declare id: string;
  declare householdId: string;
  declare codeHash: string;
  declare role: InvitationResponse['role'];
  declare createdBy: string | null;
  declare createdAt: string;
  declare expiresAt: string;
  declare acceptedAt: string | null;
  declare acceptedBy: string | null;
  declare memberId: string | null;
  /** The code sealed for listing (InvitationCodeSealer); null for codes minted before it was kept. */
  declare sealedCode: Buffer | null;
}
