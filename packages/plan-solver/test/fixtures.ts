import type { PlannableDish } from '@svc/contracts';
import type { PlanInput, PlanRule } from '../src/index.js';

export const MONDAY = '2027-01-04';

export function dish(id: string, category: PlannableDish['category'], extra: Partial<PlannableDish> = {}): PlannableDish {
  return { id, origin: 'own', name: `Dish ${id}`, category, activeMinutes: 30, priceClass: 'Mid', madeAgain: false, ...extra };
}

export function input(extra: Partial<PlanInput> = {}): PlanInput {
  return {
    startDate: MONDAY,
    weeks: 1,
    language: 'en',
    defaultDinnerTime: '18:00',
    preferOwnRecipes: false,
    maxNewDishesPerWeek: 7,
    alwaysNewDishes: true,
    madeAgainLift: false,
    memberIds: ['m1', 'm2'],
    rules: [],
    events: [],
    candidates: [],
    keptDays: [],
    earlierDinners: [],
    knownStarterIds: [],
    ...extra,
  };
}

let n = 0;
export function rule(payload: PlanRule['payload'], extra: Partial<PlanRule> = {}): PlanRule {
  n++;
  return {
    id: `r${String(n).padStart(3, '0')}`,
    strength: 'Hard',
    scope: 'Permanent',
    startDate: null,
    endDate: null,
    updatedAt: '2026-12-01T10:00:00.000Z',
    payload,
    ...extra,
  };
}

/** Own dishes of the categories given, one each. */
export function menu(...categories: PlannableDish['category'][]): PlannableDish[] {
  return categories.map((c, i) => dish(`d${String(i).padStart(2, '0')}`, c));
}
