export { migrations, migrate } from './migrations.js';
export { createHouseholdsRouter, type HouseholdsRouterDeps } from './router.js';
