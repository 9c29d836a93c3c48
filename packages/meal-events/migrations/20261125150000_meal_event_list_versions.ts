import { type ListVersionsNames, listVersions } from '@svc/db';

export const MEAL_EVENT_LIST_VERSIONS: ListVersionsNames = {
  table: 'meal_events',
  versions: 'meal_event_list_versions',
  sequence: 'meal_event_list_version_seq',
  fn: 'meal_event_list_bump',
  trigger: 'meal_event_list',
};

/**
 * A version per household's event list (see @svc/db `listVersions`: statement-level triggers on
 * meal_events move it with every change, whoever writes), so a page of the list cached by any
 * instance is known to be current or not by one number read with the session (see the store's page
 * cache).
 */
export const { up, down } = listVersions(MEAL_EVENT_LIST_VERSIONS, { truncate: false }); // the TRUNCATE trigger came later (20261126110100)
