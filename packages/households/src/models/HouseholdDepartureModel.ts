import type { HouseholdRole } from '@svc/contracts';
import { BaseModel, TimestampSchema } from '@svc/db';

/** One row of `household_departures`: an account that left a household or was removed from it, as what, and when. */
export class HouseholdDepartureModel extends BaseModel {
  static override tableName = 'household_departures';
  static override idColumn = 'id';
  static override timestamps = ['departedAt'];
  static override jsonSchema = {
    type: 'object',
    properties: {
      id: { type: 'string', format: 'uuid' },
      householdId: { type: 'string', format: 'uuid' },
      userId: { type: 'string', format: 'uuid' },
      memberId: { type: 'string', format: 'uuid' },
      role: { type: 'string', enum: ['Owner', 'Adult', 'Junior'] },
      reason: { type: 'string', enum: ['left', 'removed'] },
      departedAt: TimestampSchema,
    },
  };

  declare id: string;
  declare householdId: string;
  declare userId: string;
  declare memberId: string;
  declare role: HouseholdRole;
  declare reason: 'left' | 'removed';
  declare departedAt: string;
}
