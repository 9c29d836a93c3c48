export { PlanModel } from './PlanModel.js';
