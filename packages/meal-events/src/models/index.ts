export { CalendarFeedModel } from './CalendarFeedModel.js';
export { MealEventModel } from './MealEventModel.js';
