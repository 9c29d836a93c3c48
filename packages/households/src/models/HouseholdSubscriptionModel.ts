import { BaseModel, rowSchema, TimestampSchema } from '@svc/db';

/** One row of `household_subscriptions`: a household's plan (each opens one on the default plan when created). */
export class HouseholdSubscriptionModel extends BaseModel {
  static override tableName = 'household_subscriptions';
  static override idColumn = 'id';
  static override timestamps = ['startedAt', 'endedAt'];
  static override jsonSchema = rowSchema(
    {},
    {
      id: { type: 'string', format: 'uuid' },
      householdId: { type: 'string', format: 'uuid' },
      plan: { type: 'string' },
      startedAt: TimestampSchema,
      endedAt: { ...TimestampSchema, type: ['string', 'null'] },
    },
  );

  declare id: string;
  declare householdId: string;
  declare plan: string;
  declare startedAt: string;
  declare endedAt: string | null;
}
