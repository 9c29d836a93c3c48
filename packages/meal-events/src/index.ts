/**
 * @svc/meal-events: a household's meal events (guests, eating out, somebody away, an activity),
 * listed earliest first with signed keyset cursors, and written by the household's adults.
 */

export { KnexMealEventStore } from './KnexMealEventStore.js';
export type { EventPage, EventPosition, MealEvent, MealEventInput, MealEventStore, MealEventType, PageRequest, Participant } from './MealEventStore.js';
export { EVENT_TYPES } from './MealEventStore.js';
export { migrate, migrations } from './migrations.js';
export type { PagedMealEvents } from './paging.js';
export { createMealEvents, type MealEventsDeps } from './router.js';
export { LIMITS as MEAL_EVENT_LIMITS } from './schemas.js';
