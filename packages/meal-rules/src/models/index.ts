export { MealRuleListVersionModel } from './MealRuleListVersionModel.js';
export { MealRuleModel } from './MealRuleModel.js';
