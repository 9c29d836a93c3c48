import type { PlanningRule, PlanningRules } from '@svc/contracts';
import type { MealRulesService } from './service.js';

/**
 * The PlanningRules capability (@svc/contracts) for @svc/planner: every rule of a household as the
 * planner reads it, from the same store read the data export uses (no access check: the planner
 * checked the caller, or runs as a job).
 */
export function planningRules(service: MealRulesService): PlanningRules {
  return async (householdId) =>
    (await service.exportRules(householdId)).map(
      (r): PlanningRule => ({
        id: r.id,
        strength: r.strength,
        scope: r.scope,
        startDate: r.startDate ?? null,
        endDate: r.endDate ?? null,
        updatedAt: r.updatedAt,
        payload: r.payload as PlanningRule['payload'],
      }),
    );
}
