/**
 * @svc/meal-events: a household's meal events (guests, eating out, somebody away, an activity),
 * listed earliest first with signed keyset cursors, and written by the household's adults.
 */
export { migrations, migrate } from './migrations.js';
export { createMealEvents, type MealEventsDeps } from './router.js';
export type { EventPage, EventPosition, MealEvent, MealEventInput, MealEventStore, MealEventType, PageRequest, Participant } from './MealEventStore.js';
export { EVENT_TYPES } from './MealEventStore.js';
export { KnexMealEventStore } from './KnexMealEventStore.js';
export type { PagedMealEvents } from './paging.js';
export { LIMITS as MEAL_EVENT_LIMITS } from './schemas.js';
