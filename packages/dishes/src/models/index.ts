export { DishModel } from './DishModel.js';
