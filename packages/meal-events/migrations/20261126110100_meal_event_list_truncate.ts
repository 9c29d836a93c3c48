import { listVersionsTruncate } from '@svc/db';
import { MEAL_EVENT_LIST_VERSIONS } from './20261125150000_meal_event_list_versions.js';

/** A TRUNCATE of meal_events removes every list version (every list is then empty: version 0), as a DELETE of all rows would. */
export const { up, down } = listVersionsTruncate(MEAL_EVENT_LIST_VERSIONS);
