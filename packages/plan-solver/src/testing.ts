/**
 * Seeded planner households for benches and tests (exported as `syntheticHousehold`): the same shape and seed
 * give the same input, so the solver's bench, its tests and the API's planner bench measure the same households.
 */
import type { MealCategory, PlannableDish } from '@svc/contracts';
import type { PlanEvent, PlanInput, PlanRule, Weekday } from './types.js';

/** A small seeded generator (mulberry32): the same seed gives the same household. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const CATEGORIES: MealCategory[] = ['Fish', 'Meat', 'Poultry', 'Vegetarian', 'Vegan', 'Soup', 'Pasta', 'Taco', 'Leftovers', 'Other'];
const WEEKDAYS: Weekday[] = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const MINUTES = [10, 15, 20, 25, 30, 40, 45, 60, 75, 90, 120];
const PRICES = ['Cheap', 'Mid', 'Expensive'] as const;

export interface HouseholdShape {
  weeks: number;
  ownDishes: number;
  starterDishes: number;
  rules: number;
  seed: number;
}

const dateOf = (start: string, i: number) => {
  const d = new Date(`${start}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + i);
  return d.toISOString().slice(0, 10);
};

/** A realistic household of that shape: mostly Soft wishes, a few Hard rules that can hold together. */
export function household(shape: HouseholdShape): PlanInput {
  const rnd = random(shape.seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!;
  const some = <T>(list: readonly T[], n: number): T[] => [...list].sort(() => rnd() - 0.5).slice(0, n);
  const start = '2027-01-04';
  const dish = (id: string, origin: 'own' | 'starter'): PlannableDish => ({
    id,
    origin,
    name: `${origin} ${id}`,
    category: pick(CATEGORIES),
    activeMinutes: pick(MINUTES),
    priceClass: pick(PRICES),
    madeAgain: origin === 'own' && rnd() < 0.3,
  });
  const candidates: PlannableDish[] = [];
  for (let i = 0; i < shape.ownDishes; i++) candidates.push(dish(`o-${String(i).padStart(5, '0')}`, 'own'));
  for (let i = 0; i < shape.starterDishes; i++) candidates.push(dish(`s-${String(i).padStart(4, '0')}`, 'starter'));

  const rules: PlanRule[] = [];
  const days = shape.weeks * 7;
  for (let i = 0; rules.length < shape.rules; i++) {
    const hard = rnd() < 0.3;
    const scopeRoll = rnd();
    const from = Math.floor(rnd() * days);
    const scope =
      scopeRoll < 0.6
        ? { scope: 'Permanent' as const, startDate: null, endDate: null }
        : scopeRoll < 0.85
          ? { scope: 'DateRange' as const, startDate: dateOf(start, from), endDate: dateOf(start, Math.min(days - 1, from + 3 + Math.floor(rnd() * 14))) }
          : { scope: 'SpecificDate' as const, startDate: dateOf(start, from), endDate: null };
    const kind =
      i === 0
        ? 'RepeatAfterDays'
        : pick(['CategoryFrequency', 'CategoryExcludedDays', 'CategoryOnDay', 'MaximumActiveCookingTime', 'DinnerTimeOnWeekday', 'PriceClassOnDays'] as const);
    let payload: PlanRule['payload'];
    switch (kind) {
      case 'RepeatAfterDays':
        payload = { kind, days: 7 + Math.floor(rnd() * 8) };
        break;
      case 'CategoryFrequency': {
        const min = Math.floor(rnd() * 3);
        payload = { kind, category: pick(CATEGORIES), minimumPerWeek: min, maximumPerWeek: min + Math.floor(rnd() * 3) };
        break;
      }
      case 'CategoryExcludedDays':
        payload = { kind, category: pick(CATEGORIES), excludedWeekdays: some(WEEKDAYS, 1 + Math.floor(rnd() * 3)) };
        break;
      case 'CategoryOnDay':
        payload =
          scope.scope === 'SpecificDate'
            ? { kind, category: pick(CATEGORIES), weekday: null, specificDate: scope.startDate }
            : { kind, category: pick(CATEGORIES), weekday: pick(WEEKDAYS), specificDate: null };
        break;
      case 'MaximumActiveCookingTime':
        payload = { kind, minutes: pick([20, 30, 45, 60]), weekdays: some(WEEKDAYS, 1 + Math.floor(rnd() * 5)), specificDate: null };
        break;
      case 'DinnerTimeOnWeekday':
        payload = { kind, time: pick(['17:00', '17:30', '18:00']), weekdays: some(WEEKDAYS, 2) };
        break;
      default:
        payload = { kind: 'PriceClassOnDays', ceiling: pick(['Cheap', 'CheapOrMid'] as const), weekdays: some(WEEKDAYS, 1 + Math.floor(rnd() * 3)) };
    }
    // Hard CategoryOnDay and CategoryFrequency rules of one household rarely clash; keep Hard to kinds that leave room.
    const strength =
      hard && (kind === 'MaximumActiveCookingTime' || kind === 'CategoryExcludedDays' || kind === 'PriceClassOnDays' || kind === 'RepeatAfterDays')
        ? 'Hard'
        : 'Soft';
    rules.push({ id: `rule-${String(i).padStart(3, '0')}`, strength, ...scope, updatedAt: '2026-12-01T00:00:00Z', payload });
  }

  const events: PlanEvent[] = [];
  for (let d = 0; d < days; d++) {
    if (rnd() > 0.2) continue;
    const eventType = pick(['Guests', 'EatingOut', 'Away', 'Activity'] as const);
    events.push({
      id: `event-${String(d).padStart(3, '0')}`,
      date: dateOf(start, d),
      eventType,
      servingTime: rnd() < 0.5 ? '17:00' : null,
      availableCookingMinutes: eventType === 'Activity' ? pick([20, 30, 45]) : null,
      participants: eventType === 'Guests' ? [{ memberId: null }, { memberId: null }] : [{ memberId: 'm1' }],
    });
  }
  const own = candidates.filter((c) => c.origin === 'own');
  const earlierDinners = Array.from({ length: 7 }, (_, i) => {
    const d = own.length > 0 ? pick(own) : pick(candidates);
    return { date: dateOf(start, -7 + i), id: d.id, origin: d.origin };
  });
  return {
    startDate: start,
    weeks: shape.weeks,
    language: 'en',
    defaultDinnerTime: '18:00',
    preferOwnRecipes: rnd() < 0.5,
    maxNewDishesPerWeek: 2,
    alwaysNewDishes: false,
    madeAgainLift: true,
    memberIds: ['m1', 'm2', 'm3'],
    rules,
    events,
    candidates,
    keptDays: [],
    earlierDinners,
    knownStarterIds: candidates.filter((c) => c.origin === 'starter' && rnd() < 0.3).map((c) => c.id),
  };
}
