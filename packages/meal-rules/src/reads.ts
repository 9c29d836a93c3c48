import { declareRead, type Pojo, type ReadDeclaration, type ReadLink } from '@svc/db';
import { MealRuleListVersionModel, MealRuleModel } from './models/index.js';
import { MealRuleResponseSchema } from './schemas.js';

/** What `rulesRead` loads: the list version, and the rows unless the route holds the answer made at it. */
export type LoadedRules = { version: string; value?: Pojo[] };

/** What `defaultsRead` loads: at most one CategoryFrequency rule's id, and the household's country. */
export type LoadedDefaults = { rows: unknown[]; country: string | null };

/**
 * GET /households/{householdId}/rules: the household's rules, oldest first, with their list version
 * (the store keeps the answer made at a version and says which it holds: `heldVersion`).
 */
export const rulesRead: ReadDeclaration<LoadedRules> = declareRead({
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
export function defaultsRead(country: ReadLink): ReadDeclaration<LoadedDefaults> {
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
