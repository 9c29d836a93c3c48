export { MealEventModel } from './MealEventModel.js';
