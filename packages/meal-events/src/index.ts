export { migrations, migrate } from './migrations.js';
export { createMealEventsRouter, type MealEventsRouterDeps } from './router.js';
