// biome-ignore-all assist/source/organizeImports: every domain package's entry point has the same sections in the same order (docs/packages.md)
/**
 * @svc/meal-events: a household's meal events (guests, eating out, somebody away, an activity),
 * listed earliest first with signed keyset cursors and written by the household's adults, and the
 * household's calendar feed: a secret iCalendar URL that calendar apps subscribe to.
 */

// Migrations: the package's tables (and its relations to other packages' tables), its change sources.
export { changeSources, jobSources, migrate, migrations, queues, relations } from './migrations.js';

// Models: one per table.
export { CalendarFeedModel, MealEventListVersionModel, MealEventModel } from './models/index.js';

// Declared reads (the host's read kernel loads them with the caller).
export { calendarFeedRead, eventRead, eventsRead } from './reads.js';

// The router.
export { type CalendarFeedLimits, calendarFeedLimits, createRouter, type RouterOptions } from './router.js';

// Schemas and their types.
export * from './schemas.js';

// The service.
export {
  CalendarFeedService,
  type CalendarFeedServiceOptions,
  FEED_WINDOW,
  type FeedAnswer,
  MealEventsMembershipListener,
  MealEventsService,
  type MealEventsServiceOptions,
  type PageAnswer,
  SERIES_EXTEND_QUEUE,
  SeriesExtender,
  type SeriesExtenderOptions,
  SeriesScheduler,
  windowOf,
} from './service/index.js';

// The store: its interface and its Objection implementation.
export {
  type CalendarEvent,
  type CalendarFeedStore,
  type EventPage,
  type EventPosition,
  type MealEventStore,
  type MealEventValues,
  type NewOccurrence,
  ObjectionCalendarFeedStore,
  ObjectionMealEventStore,
  type ObjectionMealEventStoreOptions,
  type OccurrenceRef,
  type PageRequest,
  type RemovedEvent,
  SeriesStore,
  type StoredCalendarFeed,
  type StoredParticipant,
  type StoredSeries,
} from './store/index.js';

// Also of this package: reminders, series occurrences, the calendar feed's database.
export { EventReminders, type EventRemindersOptions, REMINDER_QUEUE } from './service/reminders.js';
export { occurrences } from './series/rule.js';
export type { FeedDatabase, RenderedFeed } from './feed-render.js';
export { planningEvents } from './planning.js';
