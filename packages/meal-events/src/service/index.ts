export { CalendarFeedService, type CalendarFeedServiceOptions, FEED_WINDOW, type FeedAnswer } from './calendar-feed.js';
export { MealEventsService, type MealEventsServiceOptions, type PageAnswer } from './events.js';
export { FORMER_MEMBER_NAME, MealEventsMembershipListener } from './membership.js';
export { SERIES_EXTEND_EXPIRY_SECONDS, SERIES_EXTEND_QUEUE, SeriesExtender, type SeriesExtenderOptions, SeriesScheduler, windowOf } from './series.js';
