import { BaseModel } from '@svc/db';

/**
 * One row of `meal_rule_list_versions`: the version of one household's rules, written only by
 * PostgreSQL's triggers on meal_rules (see its migration) and read with the session by the rules
 * answer cache. The service never writes it.
 */
export class MealRuleListVersionModel extends BaseModel {
  static override tableName = 'meal_rule_list_versions';
  static override idColumn = 'householdId';
  static override jsonSchema = {
    type: 'object',
    required: ['householdId', 'version'],
    properties: { householdId: { type: 'string', format: 'uuid' }, version: { type: 'string', pattern: '^[0-9]+$' } },
  };

  /** The household (an opaque id from @svc/households). */
  declare householdId: string;
  /** A number of meal_rule_list_version_seq (bigint: pg reads it as text). */
  declare version: string;
}
