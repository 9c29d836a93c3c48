export { migrations, migrate } from './migrations.js';
export { createMealRulesRouter, type MealRulesRouterDeps } from './router.js';
