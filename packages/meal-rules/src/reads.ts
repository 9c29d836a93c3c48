import { declareRead, type ReadDeclaration } from '@svc/db';
import { MealRuleListVersionModel, MealRuleModel } from './models/index.js';
import { MealRuleResponseSchema } from './schemas.js';

/**
 * GET /households/{householdId}/rules: the household's rules, oldest first, with their list version
 * (the store keeps the answer made at a version and says which it holds: `heldVersion`).
 */
export const rulesRead: ReadDeclaration = declareRead({
  name: 'meal_rules_rules',
  model: MealRuleModel,
  scope: { household: 'householdId' },
  fields: Object.keys(MealRuleResponseSchema.properties),
  list: { orderBy: [{ column: 'createdAt' }, { column: 'id' }] },
  version: { model: MealRuleListVersionModel, household: 'householdId', column: 'version' },
});
