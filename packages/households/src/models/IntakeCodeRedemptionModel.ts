import { BaseModel, rowSchema, TimestampSchema } from '@svc/db';

/** One row of `intake_code_redemptions`: a household created with an invite code (operator codes and INVITE_CODES alike). */
export class IntakeCodeRedemptionModel extends BaseModel {
  static override tableName = 'intake_code_redemptions';
  static override idColumn = 'id';
  static override timestamps = ['redeemedAt'];
  static override jsonSchema = rowSchema(
    {},
    {
      id: { type: 'string' },
      code: { type: 'string' },
      userId: { type: ['string', 'null'], format: 'uuid' },
      householdId: { type: 'string', format: 'uuid' },
      redeemedAt: TimestampSchema,
    },
  );

  declare id: string;
  declare code: string;
  /** The creator (accounts.id; null once that account is deleted). */
  declare userId: string | null;
  declare householdId: string;
  declare redeemedAt: string;
}
