import { declareRead, type ReadDeclaration } from '@svc/db';
import { PlanModel } from './models/index.js';
import { PlanSchema } from './schemas.js';

/** One plan of the household by its id, with the fields its GET answers: the changes feed's value of a plan. */
export const planRead: ReadDeclaration = declareRead({
  name: 'planner_plan',
  model: PlanModel,
  scope: { household: 'householdId' },
  arg: { column: 'id', format: 'uuid' },
  fields: Object.keys(PlanSchema.properties),
});
