import { BaseModel, rowSchema, TimestampSchema } from '@svc/db';

/** One row of `credit_ledger`: a grant (positive) or a spend (negative) of a household's AI turns; balances are sums. */
export class CreditLedgerEntryModel extends BaseModel {
  static override tableName = 'credit_ledger';
  static override idColumn = 'id';
  static override timestamps = ['createdAt'];
  static override jsonSchema = rowSchema(
    {},
    {
      id: { type: 'string' },
      householdId: { type: 'string', format: 'uuid' },
      pool: { type: 'string', enum: ['allowance', 'welcome'] },
      period: { type: ['string', 'null'] },
      reason: { type: 'string', enum: ['monthly_allowance', 'welcome_bundle', 'ai_turn'] },
      delta: { type: 'integer' },
      userId: { type: ['string', 'null'], format: 'uuid' },
      createdAt: TimestampSchema,
    },
  );

  /** bigserial, answered by the driver as a string. */
  declare id: string;
  declare householdId: string;
  declare pool: 'allowance' | 'welcome';
  /** YYYY-MM (household time zone) for the allowance; null for the welcome pool. */
  declare period: string | null;
  declare reason: 'monthly_allowance' | 'welcome_bundle' | 'ai_turn';
  declare delta: number;
  declare userId: string | null;
  declare createdAt: string;
}
