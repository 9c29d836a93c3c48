/**
 * @svc/changes: a household's changes feed (GET …/changes). Every write of a household, member,
 * rule or event is recorded by PostgreSQL in the writing statement's transaction (statement-level
 * triggers made from the owning packages' `ChangeSource` declarations), in commit order per
 * household (a counter row moved under its lock), one row per resource (its latest change).
 * Values are read with the page, in its one statement, by the owning packages' declared reads (`ChangeValueReads`).
 */
export { migrations, queues, sourceMigrations } from './migrations.js';
export { ChangeItemSchema, ChangesParams, ChangesQuery, ChangesSchema, createRouter, type RouterOptions } from './router.js';
export {
  CHANGES_PURGE_QUEUE,
  type ChangeItem,
  type ChangesAnswer,
  ChangesPurgeScheduler,
  ChangesService,
  type ChangesServiceOptions,
  DELETIONS_KEPT_MS,
} from './service.js';
export {
  type ChangePage,
  type ChangeRow,
  ChangesStore,
  type ChangeValueRead,
  type ChangeValueReads,
  HouseholdChangeCounterModel,
  HouseholdChangeModel,
} from './store.js';
