import { BaseModel, rowSchema, TimestampSchema } from '@svc/db';

/** An operator's invite code (INTAKE_MODE=invite), as the admin CLI shows it. */
export interface IntakeInviteCode {
  code: string;
  /** Households it may create; 1 = single use. */
  maxUses: number;
  uses: number;
  note: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
  createdAt: string;
}

/** One row of `intake_invite_codes`: an operator's invite code and how often it was used. */
export class IntakeInviteCodeModel extends BaseModel {
  static override tableName = 'intake_invite_codes';
  static override idColumn = 'code';
  static override timestamps = ['expiresAt', 'revokedAt', 'createdAt'];
  static override jsonSchema = rowSchema(
    {},
    {
      code: { type: 'string', minLength: 1, maxLength: 200 },
      maxUses: { type: 'integer', minimum: 1 },
      uses: { type: 'integer', minimum: 0 },
      note: { type: ['string', 'null'] },
      expiresAt: { ...TimestampSchema, type: ['string', 'null'] },
      revokedAt: { ...TimestampSchema, type: ['string', 'null'] },
      createdAt: TimestampSchema,
    },
  );

  declare code: string;
  declare maxUses: number;
  declare uses: number;
  declare note: string | null;
  declare expiresAt: string | null;
  declare revokedAt: string | null;
  declare createdAt: string;

  toApi(): IntakeInviteCode {
    return {
      code: this.code,
      maxUses: this.maxUses,
      uses: this.uses,
      note: this.note,
      expiresAt: this.expiresAt,
      revokedAt: this.revokedAt,
      createdAt: this.createdAt,
    };
  }
}
