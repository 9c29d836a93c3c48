/**
 * @svc/meal-events: a household's meal events (guests, eating out, somebody away, an activity),
 * listed earliest first with signed keyset cursors, and written by the household's adults.
 */

export { migrate, migrations, relations } from './migrations.js';
export { MealEventModel } from './models/index.js';
export { createRouter, type RouterOptions } from './router.js';
export * from './schemas.js';
export { MealEventsService, type MealEventsServiceOptions } from './service.js';
export { type EventPage, type EventPosition, type MealEventStore, type MealEventValues, ObjectionMealEventStore, type PageRequest } from './store.js';
