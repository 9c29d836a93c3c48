import { declareRead, type Pojo, type ReadDeclaration } from '@svc/db';
import { CalendarFeedModel, MealEventListVersionModel, MealEventModel } from './models/index.js';
import { MealEventSchema } from './schemas.js';

/**
 * GET /households/{householdId}/events/{eventId}: one event of the household (MealEventResponse,
 * shaped by the model); `false` when the household has no such event (a member's 404 without a statement of its own).
 */
export const eventRead: ReadDeclaration<Pojo | false> = declareRead({
  name: 'meal_events_event',
  model: MealEventModel,
  scope: { household: 'householdId' },
  arg: { column: 'id', format: 'uuid' },
  fields: Object.keys(MealEventSchema.properties),
  absentIsAnswer: true,
});

/**
 * GET /households/{householdId}/events: a page depends on its query, so only the list's version is
 * loaded; the store answers a page it made at that version again without a statement.
 */
export const eventsRead: ReadDeclaration<{ version: string }> = declareRead({
  name: 'meal_events_events',
  model: MealEventModel,
  scope: { household: 'householdId' },
  fields: [],
  version: { model: MealEventListVersionModel, household: 'householdId', column: 'version' },
});

/** GET /households/{householdId}/calendar-feed: the stored feed (its absence answers 404 without a statement). */
export const calendarFeedRead: ReadDeclaration<Pojo | false> = declareRead({
  name: 'meal_events_calendar_feed',
  model: CalendarFeedModel,
  scope: { household: 'householdId' },
  fields: ['householdId', 'tokenHash', 'sealedToken', 'createdAt'],
  absentIsAnswer: true,
});
