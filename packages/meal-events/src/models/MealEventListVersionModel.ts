import { BaseModel } from '@svc/db';

/**
 * One row of `meal_event_list_versions`: the version of one household's event list, written only by
 * PostgreSQL's triggers on meal_events (see its migration) and read with the session by the list's
 * page cache. The service never writes it.
 */
export class MealEventListVersionModel extends BaseModel {
  static override tableName = 'meal_event_list_versions';
  static override idColumn = 'householdId';
  static override jsonSchema = {
    type: 'object',
    required: ['householdId', 'version'],
    properties: { householdId: { type: 'string', format: 'uuid' }, version: { type: 'string', pattern: '^[0-9]+$' } },
  };

  /** The household (an opaque id from @svc/households). */
  declare householdId: string;
  /** A number of meal_event_list_version_seq (bigint: pg reads it as text). */
  declare version: string;
}
