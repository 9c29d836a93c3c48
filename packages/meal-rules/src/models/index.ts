export { MealRuleModel } from './MealRuleModel.js';
