import type { PlanningEvent, PlanningEvents } from '@svc/contracts';
import type { MealEventStore } from './store/index.js';

/**
 * The PlanningEvents capability (@svc/contracts) for @svc/planner: a household's events on a range
 * of dates, occurrences of series included (they are stored as ordinary events), read with the one
 * range scan the calendar feed uses. No access check.
 */
export function planningEvents(store: MealEventStore): PlanningEvents {
  return async (householdId, from, to) =>
    (await store.calendarWindow(householdId, from, to)).map(
      (e): PlanningEvent => ({
        id: e.id,
        date: e.date,
        eventType: e.eventType,
        servingTime: e.servingTime ?? null,
        availableCookingMinutes: e.availableCookingMinutes ?? null,
        participants: e.participants.map((p) => ({ memberId: p.memberId ?? null })),
      }),
    );
}
