export { type CalendarFeedStore, ObjectionCalendarFeedStore, type StoredCalendarFeed } from './calendar-feeds.js';
export {
  type CalendarEvent,
  type EventPage,
  type EventPageJson,
  type EventPosition,
  type MealEventStore,
  type MealEventValues,
  ObjectionMealEventStore,
  type PageRequest,
} from './events.js';
