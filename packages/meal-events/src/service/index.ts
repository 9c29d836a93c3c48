export { CalendarFeedService, type CalendarFeedServiceOptions, FEED_WINDOW } from './calendar-feed.js';
export { MealEventsService, type MealEventsServiceOptions } from './events.js';
