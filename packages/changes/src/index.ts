// biome-ignore-all assist/source/organizeImports: every domain package's entry point has the same sections in the same order (docs/packages.md)
/**
 * @svc/changes: a household's changes feed (GET …/changes). Every write of a household, member,
 * rule or event is recorded by PostgreSQL in the writing statement's transaction (statement-level
 * triggers made from the owning packages' `ChangeSource` declarations), in commit order per
 * household (a counter row moved under its lock), one row per resource (its latest change).
 * Values are read with the page, in its one statement, by the owning packages' declared reads (`ChangeValueReads`).
 * Cursors are signed to their household; the counter's version comes with the session (`changesRead`).
 */

// Migrations: the package's tables.
export { linkMigrations, migrations, queues, sourceMigrations } from './migrations.js';

// Models: one per table.
export { HouseholdChangeCounterModel, HouseholdChangeModel } from './models/index.js';

// Declared reads (the host's read kernel loads them with the caller).
export { changesRead } from './reads.js';

// The router.
export { createRouter, type RouterOptions } from './router.js';

// Schemas and their types.
export * from './schemas.js';

// The service.
export { type ChangeItem, type ChangesAnswer, ChangesPurgeScheduler, ChangesService, type ChangesServiceOptions, type RenderedChanges } from './service.js';

// The store.
export { type ChangePage, type ChangeRow, ChangesStore, type ChangesStoreOptions, type ChangeValueRead, type ChangeValueReads } from './store.js';
