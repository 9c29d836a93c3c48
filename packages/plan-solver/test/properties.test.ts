import type { PlannableDish } from '@svc/contracts';
import { expect } from 'chai';
import fc from 'fast-check';
import { type PlanEvent, type PlanInput, type PlanRule, solvePlan, type Weekday } from '../src/index.js';
import { input, MONDAY } from './fixtures.js';
import { costsOf, exhaustive } from './oracle.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 40);
const SEED = process.env.PROPERTY_SEED ? Number(process.env.PROPERTY_SEED) : undefined;
const WEEKDAYS: Weekday[] = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const CATEGORIES = ['Fish', 'Meat', 'Pasta', 'Taco'] as const;
const date = (i: number) => {
  const d = new Date(`${MONDAY}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + i);
  return d.toISOString().slice(0, 10);
};

const weekdays = fc.subarray(WEEKDAYS, { minLength: 1, maxLength: 3 });
const category = fc.constantFrom(...CATEGORIES);
const payload: fc.Arbitrary<PlanRule['payload']> = fc.oneof(
  fc
    .record({
      kind: fc.constant('CategoryFrequency' as const),
      category,
      minimumPerWeek: fc.integer({ min: 0, max: 4 }),
      maximumPerWeek: fc.integer({ min: 0, max: 7 }),
    })
    .map((p) => ({ ...p, maximumPerWeek: Math.max(p.minimumPerWeek, p.maximumPerWeek) })),
  fc.record({ kind: fc.constant('CategoryExcludedDays' as const), category, excludedWeekdays: weekdays }),
  fc.record({
    kind: fc.constant('CategoryOnDay' as const),
    category,
    weekday: fc.option(fc.constantFrom(...WEEKDAYS), { nil: null }),
    specificDate: fc.option(fc.integer({ min: 0, max: 6 }).map(date), { nil: null }),
  }),
  fc.record({
    kind: fc.constant('MaximumActiveCookingTime' as const),
    minutes: fc.constantFrom(20, 40),
    weekdays,
    specificDate: fc.option(fc.integer({ min: 0, max: 6 }).map(date), { nil: null }),
  }),
  fc.record({ kind: fc.constant('DinnerTimeOnWeekday' as const), time: fc.constantFrom('17:00', '18:30'), weekdays }),
  fc.record({ kind: fc.constant('PriceClassOnDays' as const), ceiling: fc.constantFrom('Cheap' as const, 'CheapOrMid' as const), weekdays }),
  fc.record({ kind: fc.constant('RepeatAfterDays' as const), days: fc.integer({ min: 1, max: 9 }) }),
);
const scope = fc.oneof(
  fc.constant({ scope: 'Permanent' as const, startDate: null, endDate: null }),
  fc
    .tuple(fc.integer({ min: -3, max: 6 }), fc.integer({ min: 0, max: 9 }))
    .map(([a, len]) => ({ scope: 'DateRange' as const, startDate: date(a), endDate: date(a + len) })),
  fc.integer({ min: 0, max: 6 }).map((a) => ({ scope: 'SpecificDate' as const, startDate: date(a), endDate: null })),
);
const rules = fc
  .array(fc.record({ payload, strength: fc.constantFrom('Hard' as const, 'Soft' as const), scope }), { maxLength: 4 })
  .map((list) => list.map((r, i): PlanRule => ({ id: `r${i}`, strength: r.strength, ...r.scope, updatedAt: '2026-12-01T00:00:00Z', payload: r.payload })));
const dishes = fc
  .array(
    fc.record({
      category,
      activeMinutes: fc.constantFrom(10, 30, 50),
      priceClass: fc.constantFrom('Cheap' as const, 'Mid' as const, 'Expensive' as const),
      origin: fc.constantFrom('own' as const, 'starter' as const),
      madeAgain: fc.boolean(),
    }),
    { minLength: 1, maxLength: 4 },
  )
  .map((list) => list.map((d, i): PlannableDish => ({ ...d, id: `d${i}`, name: `Dish ${i}`, madeAgain: d.origin === 'own' && d.madeAgain })));
const events = fc.array(
  fc.record({
    day: fc.integer({ min: 0, max: 6 }),
    eventType: fc.constantFrom('Guests' as const, 'EatingOut' as const, 'Away' as const, 'Activity' as const),
    servingTime: fc.option(fc.constantFrom('16:00', '19:00'), { nil: null }),
    availableCookingMinutes: fc.option(fc.constantFrom(0, 20, 40), { nil: null }),
    participants: fc.subarray(['m1', 'm2', null] as (string | null)[]),
  }),
  { maxLength: 3 },
);

const household: fc.Arbitrary<PlanInput> = fc
  .record({
    rules,
    dishes,
    events,
    kept: fc.option(fc.record({ day: fc.integer({ min: 0, max: 6 }), dish: fc.option(fc.nat(3), { nil: null }) }), { nil: null }),
    earlier: fc.array(fc.record({ back: fc.integer({ min: 1, max: 8 }), dish: fc.nat(3) }), { maxLength: 2 }),
    preferOwnRecipes: fc.boolean(),
    alwaysNewDishes: fc.boolean(),
    maxNewDishesPerWeek: fc.integer({ min: 0, max: 2 }),
    madeAgainLift: fc.boolean(),
    known: fc.subarray(['d0', 'd1', 'd2', 'd3']),
    language: fc.constantFrom('en' as const, 'nb' as const),
  })
  .map((h) => {
    const pick = (i: number) => h.dishes[i % h.dishes.length]!;
    return input({
      language: h.language,
      preferOwnRecipes: h.preferOwnRecipes,
      alwaysNewDishes: h.alwaysNewDishes,
      maxNewDishesPerWeek: h.maxNewDishesPerWeek,
      madeAgainLift: h.madeAgainLift,
      rules: h.rules,
      candidates: h.dishes,
      events: h.events.map(
        (e, i): PlanEvent => ({
          id: `e${i}`,
          date: date(e.day),
          eventType: e.eventType,
          servingTime: e.servingTime,
          availableCookingMinutes: e.availableCookingMinutes,
          participants: e.participants.map((memberId) => ({ memberId })),
        }),
      ),
      keptDays: h.kept
        ? [
            {
              date: date(h.kept.day),
              dish: h.kept.dish === null ? null : (({ madeAgain: _, ...d }) => d)(pick(h.kept.dish)),
              why: [{ ruleId: null, eventId: null, text: 'by hand' }],
            },
          ]
        : [],
      earlierDinners: h.earlier.map((e) => ({ date: date(-e.back), id: pick(e.dish).id, origin: pick(e.dish).origin })),
      knownStarterIds: h.known,
    });
  });

describe('a plan, over random small households (fast-check, exhaustive search as the oracle)', function () {
  this.timeout(600_000);

  it('holds every Hard rule, has the least softCost, then the least preference cost; infeasible only when no plan holds', async () => {
    await fc.assert(
      fc.asyncProperty(household, async (i) => {
        const result = await solvePlan(i);
        const best = exhaustive(i);
        expect(result.status).to.equal(best.feasible ? 'done' : 'infeasible');
        if (result.status !== 'done') return;
        const costs = costsOf(i, result);
        expect(costs.hardBroken).to.deep.equal([]);
        expect(result.softCost).to.equal(best.softCost);
        expect(costs.softCost).to.equal(best.softCost);
        expect(costs.preferenceCost).to.equal(best.preferenceCost);
        expect(result.unmet.reduce((s, u) => s + u.cost, 0)).to.equal(result.softCost);
      }),
      { numRuns: RUNS, seed: SEED ?? 46 },
    );
  });

  it('conflicts are irreducible: the set cannot hold, and without any one of its rules or events the rest can', async () => {
    const infeasible = household.filter((i) => !exhaustive(i).feasible);
    await fc.assert(
      fc.asyncProperty(infeasible, async (i) => {
        const result = await solvePlan(i);
        expect(result.status).to.equal('infeasible');
        expect(result.conflicts.length).to.be.greaterThan(0);
        for (const c of result.conflicts) {
          expect(exhaustive(i, { ruleIds: new Set(c.ruleIds), eventIds: new Set(c.eventIds) }).feasible).to.equal(false);
          for (const id of [...c.ruleIds, ...c.eventIds]) {
            const less = { ruleIds: new Set(c.ruleIds.filter((x) => x !== id)), eventIds: new Set(c.eventIds.filter((x) => x !== id)) };
            expect(exhaustive(i, less).feasible, `without ${id}`).to.equal(true);
          }
        }
      }),
      { numRuns: Math.ceil(RUNS / 2), seed: SEED ?? 47 },
    );
  });

  it('the same input gives the same plan', async () => {
    await fc.assert(
      fc.asyncProperty(household, async (i) => {
        const a = await solvePlan(i);
        const b = await solvePlan(structuredClone(i));
        expect(b).to.deep.equal(a);
      }),
      { numRuns: Math.ceil(RUNS / 2), seed: SEED ?? 48 },
    );
  });
});
