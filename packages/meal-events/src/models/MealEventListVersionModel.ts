import { ListVersionModel } from '@svc/db';

/**
 * One row of `meal_event_list_versions`: the version of one household's event list, written only by
 * PostgreSQL's triggers on meal_events (see its migration) and read with the session by the list's
 * page cache. The service never writes it.
 */
export class MealEventListVersionModel extends ListVersionModel {
  static override tableName = 'meal_event_list_versions';
}
