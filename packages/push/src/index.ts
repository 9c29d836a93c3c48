export { migrations, migrate } from './migrations.js';
export { createPushRouter, type PushRouterDeps } from './router.js';
