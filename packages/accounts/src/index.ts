export { migrations, migrate } from './migrations.js';
export { createAccountsRouter, type AccountsRouterDeps } from './router.js';
