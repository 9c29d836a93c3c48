import type { PlanningHouseholds } from '@svc/contracts';
import type { HouseholdStore } from './store.js';

/**
 * The PlanningHouseholds capability (@svc/contracts) for @svc/planner: a household's settings a
 * plan depends on and its members' ids, from households' own reads (no access check; 404
 * `not_found` for an unknown household).
 */
export function planningHouseholds(store: HouseholdStore): PlanningHouseholds {
  return async (householdId) => {
    const [household, members] = await Promise.all([store.get(householdId), store.members(householdId)]);
    return {
      timeZoneId: household.timeZoneId,
      defaultDinnerTime: household.defaultDinnerTime,
      preferredLanguage: household.preferredLanguage,
      useStarterLibrary: household.useStarterLibrary,
      preferOwnRecipes: household.preferOwnRecipes,
      maxNewDishesPerWeek: household.maxNewDishesPerWeek,
      alwaysNewDishes: household.alwaysNewDishes,
      madeAgainLift: household.madeAgainLift,
      memberIds: members.map((m) => m.memberId),
    };
  };
}
