/**
 * @svc/meal-events: a household's meal events (guests, eating out, somebody away, an activity),
 * listed earliest first with signed keyset cursors and written by the household's adults, and the
 * household's calendar feed: a secret iCalendar URL that calendar apps subscribe to.
 */

export { FEED_TOKEN_BYTES, FeedTokenSealer, feedTokenHash } from './feed-token.js';
export { type FeedInput, renderFeed, summaryOf, vtimezone } from './ics.js';
export { changeSources, jobSources, migrate, migrations, queues, relations } from './migrations.js';
export { CalendarFeedModel, MealEventListVersionModel, MealEventModel } from './models/index.js';
export { calendarFeedRead, eventRead, eventsRead } from './reads.js';
export { type CalendarFeedLimits, calendarFeedLimits, createRouter, type RouterOptions } from './router.js';
export * from './schemas.js';
export { normalizeRule, occurrences } from './series/rule.js';
export {
  CalendarFeedService,
  type CalendarFeedServiceOptions,
  FEED_WINDOW,
  type FeedAnswer,
  FORMER_MEMBER_NAME,
  MealEventsMembershipListener,
  MealEventsService,
  type MealEventsServiceOptions,
  SERIES_EXTEND_EXPIRY_SECONDS,
  SERIES_EXTEND_QUEUE,
  SeriesExtender,
  type SeriesExtenderOptions,
  SeriesScheduler,
  windowOf,
} from './service/index.js';
export {
  EventReminders,
  type EventRemindersOptions,
  REMINDER_EXPIRE_SECONDS,
  REMINDER_QUEUE,
  reminderInstant,
  reminderNotificationId,
} from './service/reminders.js';
export {
  apiParticipant,
  apiSeries,
  type CalendarEvent,
  type CalendarFeedStore,
  DEFAULT_PAGE_CACHE_BYTES,
  type EventPage,
  type EventPageJson,
  type EventPosition,
  type MealEventStore,
  type MealEventValues,
  type NewOccurrence,
  ObjectionCalendarFeedStore,
  ObjectionMealEventStore,
  type ObjectionMealEventStoreOptions,
  type OccurrenceRef,
  type PageAnswer,
  type PageRequest,
  type RemovedEvent,
  SeriesStore,
  type StoredCalendarFeed,
  type StoredParticipant,
  type StoredSeries,
} from './store/index.js';
