// biome-ignore-all assist/source/organizeImports: every domain package's entry point has the same sections in the same order (docs/packages.md)
/**
 * @svc/dishes: a household's own dishes (CRUD, paging, search) and the starter library the service
 * ships in English and Norwegian Bokmål; `DishesService.catalog` is the `DishCatalog` the planner reads.
 */

// Migrations: the package's tables (and its relations to other packages' tables), its change sources.
export { changeSources, migrate, migrations, relations } from './migrations.js';

// Models: one per table.
export { DishModel } from './models/index.js';

// Declared reads (the host's read kernel loads them with the caller).
export { dishRead } from './reads.js';

// The router.
export { createRouter, type RouterOptions } from './router.js';

// Schemas and their types.
export * from './schemas.js';

// The service.
export { DishesService, type DishesServiceOptions, dishCatalog } from './service.js';

// The store: its interface and its Objection implementation.
export { type DishPageRequest, type DishPageRows, type DishStore, type DishValues, ObjectionDishStore } from './store.js';

// Also of this package: the starter library and the list's position type.
export type { DishPosition } from './cursor.js';
export { STARTER_LIBRARY, type StarterLibrary } from './starter/index.js';
