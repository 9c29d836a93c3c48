import { declareRead, type Pojo, type ReadDeclaration } from '@svc/db';
import { DishModel } from './models/index.js';
import { DishSchema } from './schemas.js';

/**
 * GET /households/{householdId}/dishes/{dishId}: one dish of the household (the changes feed's value
 * of a dish too); `false` when the household has no such dish, so a member's 404 needs no statement of its own.
 */
export const dishRead: ReadDeclaration<Pojo | false> = declareRead({
  name: 'dishes_dish',
  model: DishModel,
  scope: { household: 'householdId' },
  arg: { column: 'id', format: 'uuid' },
  fields: Object.keys(DishSchema.properties),
  absentIsAnswer: true,
});
