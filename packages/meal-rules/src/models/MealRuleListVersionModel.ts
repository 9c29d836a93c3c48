import { ListVersionModel } from '@svc/db';

/**
 * One row of `meal_rule_list_versions`: the version of one household's rules, written only by
 * PostgreSQL's triggers on meal_rules (see its migration) and read with the session by the rules
 * answer cache. The service never writes it.
 */
export class MealRuleListVersionModel extends ListVersionModel {
  static override tableName = 'meal_rule_list_versions';
}
