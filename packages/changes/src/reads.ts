import { declareRead, type ReadDeclaration } from '@svc/db';
import { HouseholdChangeCounterModel, HouseholdChangeModel } from './models/index.js';

/**
 * GET …/changes: a page depends on its query, so only the household's counter version
 * (`last.purgedThrough`) is loaded with the caller. With it, a poll with nothing new (`since` at
 * `last`) is answered without a statement, and a page rendered before at the same version is sent again.
 */
export const changesRead: ReadDeclaration<{ version: string }> = declareRead({
  name: 'changes_changes',
  model: HouseholdChangeModel,
  scope: { household: 'householdId' },
  fields: [],
  version: { model: HouseholdChangeCounterModel, household: 'householdId', column: 'version' },
});
