import { declareRead, type Pojo, type ReadDeclaration } from '@svc/db';
import { DishModel } from './models/index.js';
import { DishSchema } from './schemas.js';

/** GET /households/{householdId}/dishes/{dishId}: one dish of the household (the changes feed's value of a dish too). */
export const dishRead: ReadDeclaration<Pojo> = declareRead({
  name: 'dishes_dish',
  model: DishModel,
  scope: { household: 'householdId' },
  arg: { column: 'id', format: 'uuid' },
  fields: Object.keys(DishSchema.properties),
});
