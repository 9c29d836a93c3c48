import { declareRead, type ReadDeclaration } from '@svc/db';
import { MealEventModel } from './models/index.js';
import { MealEventSchema } from './schemas.js';

/** GET /households/{householdId}/events/{eventId}: one event of the household (MealEventResponse, shaped by the model). */
export const eventRead: ReadDeclaration = declareRead({
  name: 'meal_events_event',
  model: MealEventModel,
  scope: { household: 'householdId' },
  arg: { column: 'id', format: 'uuid' },
  fields: Object.keys(MealEventSchema.properties),
});
