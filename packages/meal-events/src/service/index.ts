export { CalendarFeedService, type CalendarFeedServiceOptions, FEED_WINDOW, type FeedAnswer } from './calendar-feed.js';
export { MealEventsService, type MealEventsServiceOptions } from './events.js';
