import { declareRead, type Pojo, type ReadDeclaration, type ReadLink } from '@svc/db';
import { MealRuleListVersionModel, MealRuleModel } from './models/index.js';
import { MealRuleResponseSchema } from './schemas.js';

/**
 * GET /households/{householdId}/rules: the household's rules, oldest first, with their list version
 * (the store keeps the answer made at a version and says which it holds: `heldVersion`).
 */
export const rulesRead: ReadDeclaration<{ version: string; value?: Pojo[] }> = declareRead({
  name: 'meal_rules_rules',
  model: MealRuleModel,
  scope: { household: 'householdId' },
  fields: Object.keys(MealRuleResponseSchema.properties),
  list: { orderBy: [{ column: 'createdAt' }, { column: 'id' }] },
  version: { model: MealRuleListVersionModel, household: 'householdId', column: 'version' },
});

/** One rule of the household by its id, with the fields of its item of GET …/rules: the changes feed's value of a rule. */
export const ruleRead: ReadDeclaration = declareRead({
  name: 'meal_rules_rule',
  model: MealRuleModel,
  scope: { household: 'householdId' },
  arg: { column: 'id', format: 'uuid' },
  fields: Object.keys(MealRuleResponseSchema.properties),
});

/**
 * GET /households/{householdId}/rules/defaults: whether the household has a CategoryFrequency rule
 * of its own (one row is enough) and its country, lent by the households package (`country`,
 * handed in by the host): the value is `{ rows, country }`.
 */
export function defaultsRead(country: ReadLink): ReadDeclaration<{ rows: unknown[]; country: string | null }> {
  return declareRead({
    name: 'meal_rules_defaults',
    model: MealRuleModel,
    scope: { household: 'householdId' },
    filter: { kind: 'CategoryFrequency' },
    fields: ['id'],
    list: { orderBy: [{ column: 'id' }], limit: 1 },
    withHousehold: { country },
  });
}
