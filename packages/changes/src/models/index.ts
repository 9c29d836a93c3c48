import type { ChangeResource } from '@svc/contracts';
import { BaseModel } from '@svc/db';

/** One row of `household_changes`: the latest change of one resource (written only by the triggers). */
export class HouseholdChangeModel extends BaseModel {
  static override tableName = 'household_changes';
  static override idColumn = ['householdId', 'resource', 'resourceId'];
  declare householdId: string;
  declare resource: ChangeResource;
  declare resourceId: string;
  declare change: 'upsert' | 'delete';
  declare at: Date;
  /** bigint: pg reads it as text. */
  declare position: string;
}

/** One row of `household_change_counters` (written only by the triggers and the cleanup). */
export class HouseholdChangeCounterModel extends BaseModel {
  static override tableName = 'household_change_counters';
  static override idColumn = 'householdId';
  declare householdId: string;
  declare last: string;
  declare purgedThrough: string;
  declare deleted: boolean;
  /** `last.purgedThrough` (a generated column): what `changesRead` loads with the session. */
  declare version: string;
}
