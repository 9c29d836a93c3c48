export { type CalendarFeedStore, ObjectionCalendarFeedStore, type StoredCalendarFeed } from './calendar-feeds.js';
export {
  CARRY_FORMER_MEMBERS,
  type CalendarEvent,
  type EventPage,
  type EventPosition,
  type MealEventStore,
  type MealEventValues,
  ObjectionMealEventStore,
  type ObjectionMealEventStoreOptions,
  type PageRequest,
  type RemovedEvent,
  type StoredParticipant,
} from './events.js';
export { apiSeries, type NewOccurrence, type OccurrenceRef, SeriesStore, type StoredSeries } from './series.js';
