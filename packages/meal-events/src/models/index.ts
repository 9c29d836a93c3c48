export { CalendarFeedModel } from './CalendarFeedModel.js';
export { MealEventListVersionModel } from './MealEventListVersionModel.js';
export { MealEventModel } from './MealEventModel.js';
