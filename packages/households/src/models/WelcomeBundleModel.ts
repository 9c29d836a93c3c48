import { BaseModel, rowSchema, TimestampSchema } from '@svc/db';

/** One row of `welcome_bundles`: the welcome credits of one person (the key makes them once per person). */
export class WelcomeBundleModel extends BaseModel {
  static override tableName = 'welcome_bundles';
  static override idColumn = 'userId';
  static override timestamps = ['grantedAt'];
  static override jsonSchema = rowSchema(
    {},
    {
      userId: { type: 'string', format: 'uuid' },
      householdId: { type: ['string', 'null'], format: 'uuid' },
      credits: { type: 'integer' },
      grantedAt: TimestampSchema,
    },
  );

  declare userId: string;
  /** The household the bundle came with and that spends it; null once that household is deleted. */
  declare householdId: string | null;
  declare credits: number;
  declare grantedAt: string;
}
