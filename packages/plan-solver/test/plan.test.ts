import { expect } from 'chai';
import { type PlanDay, type PlanEvent, type PlanInput, type PlanResult, solvePlan } from '../src/index.js';
import { dish, input, MONDAY, menu, rule } from './fixtures.js';
import { costsOf, exhaustive } from './oracle.js';

const date = (i: number) => {
  const d = new Date(`${MONDAY}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + i);
  return d.toISOString().slice(0, 10);
};
const TUE = date(1);
const WED = date(2);
const FRI = date(4);
const SAT = date(5);

function event(id: string, extra: Partial<PlanEvent>): PlanEvent {
  return { id, date: TUE, eventType: 'Activity', servingTime: null, availableCookingMinutes: null, participants: [], ...extra };
}

async function done(i: PlanInput): Promise<PlanResult & { status: 'done' }> {
  const result = await solvePlan(i);
  expect(result.status, JSON.stringify(result.conflicts)).to.equal('done');
  return result as PlanResult & { status: 'done' };
}

const day = (r: { days: PlanDay[] }, d: string) => r.days.find((x) => x.date === d)!;
const variety = menu('Fish', 'Meat', 'Pasta', 'Soup', 'Taco', 'Vegan', 'Vegetarian', 'Poultry', 'Other');

describe('a plan (decisions §9 "What a plan holds")', () => {
  it('runs from startDate for 7 × weeks days, and each day with dinner gets exactly one candidate', async () => {
    const r = await done(
      input({ weeks: 2, candidates: [...variety, ...menu('Fish', 'Meat', 'Soup', 'Taco', 'Pasta').map((d) => ({ ...d, id: `x${d.id}` }))] }),
    );
    expect(r.days.map((d) => d.date)).to.deep.equal(Array.from({ length: 14 }, (_, i) => date(i)));
    for (const d of r.days) {
      expect(d.dinner).to.equal(true);
      expect(d.dish).to.not.equal(null);
      expect(d.locked).to.equal(false);
    }
    expect(r.softCost).to.equal(0);
  });

  it('dinner is false on a date with an EatingOut event, with no dish and 0 servings', async () => {
    const r = await done(input({ candidates: variety, events: [event('e1', { eventType: 'EatingOut', servingTime: '12:00' })] }));
    const tue = day(r, TUE);
    expect(tue).to.include({ dinner: false, dish: null, servings: 0, servingTime: '18:00' });
    expect(tue.why.map((w) => w.eventId)).to.include('e1');
  });

  it('dinner is false when the date’s Away events, taken together, name every member', async () => {
    const r = await done(
      input({
        memberIds: ['m1', 'm2', 'm3'],
        candidates: variety,
        events: [
          event('e1', { eventType: 'Away', participants: [{ memberId: 'm1' }] }),
          event('e2', { eventType: 'Away', participants: [{ memberId: 'm2' }, { memberId: 'm3' }] }),
          event('e3', { date: WED, eventType: 'Away', participants: [{ memberId: 'm1' }, { memberId: null }] }),
        ],
      }),
    );
    expect(day(r, TUE)).to.include({ dinner: false, servings: 0 });
    expect(day(r, WED)).to.include({ dinner: true, servings: 2 });
  });

  it('servings: members, less the Away members, plus Guests participants without a memberId; at least 1', async () => {
    const r = await done(
      input({
        memberIds: ['m1', 'm2'],
        candidates: variety,
        events: [
          event('e1', { eventType: 'Guests', participants: [{ memberId: null }, { memberId: null }, { memberId: 'm1' }] }),
          event('e2', { date: WED, eventType: 'Away', participants: [{ memberId: 'm1' }] }),
          event('e3', { date: FRI, eventType: 'Away', participants: [{ memberId: 'm1' }] }),
          event('e4', { date: FRI, eventType: 'Guests', participants: [{ memberId: null }] }),
        ],
      }),
    );
    expect(day(r, MONDAY).servings).to.equal(2);
    expect(day(r, TUE).servings).to.equal(4);
    expect(day(r, WED).servings).to.equal(1);
    expect(day(r, FRI).servings).to.equal(2);
  });

  it('servingTime: the earliest event time (not EatingOut), else the latest updated DinnerTimeOnWeekday (then greatest id), else the default', async () => {
    const older = rule({ kind: 'DinnerTimeOnWeekday', time: '16:30', weekdays: ['Tuesday', 'Wednesday', 'Friday'] }, { updatedAt: '2026-11-01T00:00:00Z' });
    const newer = rule({ kind: 'DinnerTimeOnWeekday', time: '17:15', weekdays: ['Wednesday'] }, { updatedAt: '2026-11-02T00:00:00Z' });
    const tieA = rule({ kind: 'DinnerTimeOnWeekday', time: '19:00', weekdays: ['Friday'] }, { id: 'z1', updatedAt: '2026-11-03T00:00:00Z' });
    const tieB = rule({ kind: 'DinnerTimeOnWeekday', time: '19:30', weekdays: ['Friday'] }, { id: 'z2', updatedAt: '2026-11-03T00:00:00Z' });
    const r = await done(
      input({
        candidates: variety,
        rules: [tieB, older, newer, tieA],
        events: [
          event('e1', { servingTime: '17:45' }),
          event('e2', { servingTime: '17:20', eventType: 'Guests' }),
          event('e3', { servingTime: '15:00', eventType: 'EatingOut', date: SAT }),
        ],
      }),
    );
    expect(day(r, MONDAY).servingTime).to.equal('18:00');
    expect(day(r, TUE).servingTime).to.equal('17:20');
    expect(day(r, WED).servingTime).to.equal('17:15');
    expect(day(r, FRI).servingTime).to.equal('19:30');
    expect(day(r, SAT).servingTime).to.equal('18:00');
    expect(day(r, FRI).why.map((w) => w.ruleId)).to.include.members([older.id, tieA.id, tieB.id]);
  });

  it('cooking time: the smallest availableCookingMinutes above 0 (not EatingOut) caps the dish; 0 sets no cap', async () => {
    const candidates = [dish('slow', 'Meat', { activeMinutes: 90 }), dish('mid', 'Fish', { activeMinutes: 40 }), dish('fast', 'Soup', { activeMinutes: 15 })];
    const r = await done(
      input({
        candidates,
        events: [
          event('e1', { availableCookingMinutes: 45 }),
          event('e2', { availableCookingMinutes: 20 }),
          event('e3', { date: WED, availableCookingMinutes: 0 }),
          event('e4', { date: FRI, availableCookingMinutes: 30 }),
        ],
      }),
    );
    expect(day(r, TUE).dish!.activeMinutes).to.be.at.most(20);
    expect(day(r, FRI).dish!.activeMinutes).to.be.at.most(30);
    const none = await solvePlan(input({ candidates: [dish('slow', 'Meat', { activeMinutes: 90 })], events: [event('e1', { availableCookingMinutes: 45 })] }));
    expect(none.status).to.equal('infeasible');
    expect(none.conflicts[0]).to.deep.include({ ruleIds: [], eventIds: ['e1'], dates: [TUE] });
  });

  it('CategoryFrequency counts only the weeks its scope covers on all seven days', async () => {
    const fish = rule(
      { kind: 'CategoryFrequency', category: 'Fish', minimumPerWeek: 3, maximumPerWeek: 3 },
      { scope: 'DateRange', startDate: date(7), endDate: date(20) },
    );
    const candidates = [...variety, dish('f2', 'Fish'), dish('f3', 'Fish')];
    const r = await done(input({ weeks: 3, candidates, rules: [fish] }));
    const fishIn = (w: number) => r.days.slice(w * 7, w * 7 + 7).filter((d) => d.dish?.category === 'Fish').length;
    expect(fishIn(1)).to.equal(3);
    expect(fishIn(2)).to.equal(3);
    // Week 1 is not covered on all seven days: with a DateRange starting on its Tuesday it is not counted.
    const partial = rule(
      { kind: 'CategoryFrequency', category: 'Fish', minimumPerWeek: 7, maximumPerWeek: 7 },
      { scope: 'DateRange', startDate: TUE, endDate: date(13) },
    );
    const r2 = await done(input({ weeks: 2, candidates: [...variety, ...Array.from({ length: 7 }, (_, i) => dish(`ff${i}`, 'Fish'))], rules: [partial] }));
    expect(r2.days.slice(7).every((d) => d.dish!.category === 'Fish')).to.equal(true);
    expect(r2.days.slice(0, 7).every((d) => d.dish!.category === 'Fish')).to.equal(false);
  });

  it('CategoryExcludedDays, CategoryOnDay (weekday and date), MaximumActiveCookingTime and PriceClassOnDays hold on the days they cover', async () => {
    const candidates = [
      dish('f1', 'Fish', { activeMinutes: 20, priceClass: 'Cheap' }),
      dish('f2', 'Fish', { activeMinutes: 60, priceClass: 'Expensive' }),
      dish('t1', 'Taco', { activeMinutes: 40, priceClass: 'Mid' }),
      dish('t2', 'Taco', { activeMinutes: 25, priceClass: 'Cheap' }),
      dish('s1', 'Soup', { activeMinutes: 15, priceClass: 'Cheap' }),
      dish('m1', 'Meat', { activeMinutes: 70, priceClass: 'Expensive' }),
      dish('p1', 'Pasta', { activeMinutes: 20, priceClass: 'Mid' }),
      dish('v1', 'Vegan', { activeMinutes: 35, priceClass: 'Mid' }),
      dish('v2', 'Vegetarian', { activeMinutes: 15, priceClass: 'Cheap' }),
    ];
    const rules = [
      rule({ kind: 'CategoryExcludedDays', category: 'Fish', excludedWeekdays: ['Monday', 'Tuesday'] }),
      rule({ kind: 'CategoryOnDay', category: 'Taco', weekday: 'Friday', specificDate: null }),
      rule({ kind: 'CategoryOnDay', category: 'Soup', weekday: null, specificDate: WED }),
      rule({ kind: 'MaximumActiveCookingTime', minutes: 30, weekdays: ['Monday', 'Tuesday'], specificDate: SAT }),
      rule({ kind: 'PriceClassOnDays', ceiling: 'Cheap', weekdays: ['Thursday'] }),
      rule({ kind: 'PriceClassOnDays', ceiling: 'CheapOrMid', weekdays: ['Sunday'] }),
    ];
    const r = await done(input({ candidates, rules }));
    expect(day(r, MONDAY).dish!.category).to.not.equal('Fish');
    expect(day(r, TUE).dish!.category).to.not.equal('Fish');
    expect(day(r, FRI).dish!.category).to.equal('Taco');
    expect(day(r, WED).dish!.category).to.equal('Soup');
    for (const d of [MONDAY, TUE, SAT]) expect(day(r, d).dish!.activeMinutes).to.be.at.most(30);
    expect(day(r, date(3)).dish!.priceClass).to.equal('Cheap');
    expect(day(r, date(6)).dish!.priceClass).to.not.equal('Expensive');
    expect(r.softCost).to.equal(0);
    // why names each of these rules on the days it applies to (covers and names the weekday or date).
    expect(day(r, MONDAY).why.map((w) => w.ruleId)).to.include.members([rules[0]!.id, rules[3]!.id]);
    expect(day(r, WED).why.map((w) => w.ruleId)).to.include(rules[2]!.id);
    expect(day(r, SAT).why.map((w) => w.ruleId)).to.include(rules[3]!.id);
    expect(day(r, date(6)).why.map((w) => w.ruleId)).to.include(rules[5]!.id);
    expect(day(r, WED).why.map((w) => w.ruleId)).to.not.include(rules[0]!.id);
  });

  it('a rule covers only its scope: DateRange inclusive, SpecificDate its startDate', async () => {
    const candidates = [
      dish('f1', 'Fish'),
      dish('m1', 'Meat'),
      dish('m2', 'Meat'),
      dish('m3', 'Meat'),
      dish('m4', 'Meat'),
      dish('m5', 'Meat'),
      dish('m6', 'Meat'),
      dish('m7', 'Meat'),
    ];
    const onlyFish = rule({ kind: 'CategoryOnDay', category: 'Fish', weekday: 'Wednesday', specificDate: null }, { scope: 'SpecificDate', startDate: date(9) });
    const noFish = rule(
      { kind: 'CategoryExcludedDays', category: 'Fish', excludedWeekdays: ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'] },
      { scope: 'DateRange', startDate: date(0), endDate: date(8) },
    );
    const r = await done(input({ weeks: 2, candidates, rules: [onlyFish, noFish] }));
    expect(day(r, date(9)).dish!.id).to.equal('f1');
    for (let i = 0; i <= 8; i++) expect(day(r, date(i)).dish!.id).to.not.equal('f1');
    expect(day(r, date(2)).why.map((w) => w.ruleId)).to.not.include(onlyFish.id);
    expect(day(r, date(9)).why.map((w) => w.ruleId)).to.include(onlyFish.id);
  });

  it('RepeatAfterDays (Hard): a dish at most once in its days, earlier dinners counting; a pair breaks only when the rule covers the later date', async () => {
    const candidates = menu('Fish', 'Meat', 'Pasta', 'Soup', 'Taco');
    const repeat = rule({ kind: 'RepeatAfterDays', days: 5 });
    const r = await done(
      input({
        weeks: 2,
        candidates,
        rules: [repeat],
        earlierDinners: [
          { date: date(-1), id: 'd00', origin: 'own' },
          { date: date(-4), id: 'd01', origin: 'own' },
        ],
      }),
    );
    const ids = r.days.map((d) => d.dish!.id);
    for (let i = 0; i < ids.length; i++) for (let j = i + 1; j < Math.min(ids.length, i + 5); j++) expect(ids[i]).to.not.equal(ids[j]);
    expect(ids.slice(0, 4)).to.not.include('d00');
    expect(ids[0]).to.not.equal('d01');
    // Scoped to the second week only: 2 dishes suffice for the first week, repeats and all.
    const scoped = rule({ kind: 'RepeatAfterDays', days: 3 }, { scope: 'DateRange', startDate: date(7), endDate: date(13) });
    const r2 = await done(input({ weeks: 2, candidates: menu('Fish', 'Meat', 'Soup'), rules: [scoped] }));
    const ids2 = r2.days.map((d) => d.dish!.id);
    for (let t = 7; t < 14; t++) for (let d = t - 2; d < t; d++) expect(ids2[d]).to.not.equal(ids2[t]);
  });

  it('softCost counts one unit per dinner below the minimum or above the maximum, per day a day rule breaks, per pair too close', async () => {
    const soft = { strength: 'Soft' as const };
    // 2 fish dishes, fish wanted 4 times: below the minimum, or repeats; the built-in repeat of 7 days counts pairs.
    const r = await done(
      input({
        candidates: [dish('f1', 'Fish'), dish('f2', 'Fish'), ...menu('Meat', 'Soup', 'Pasta', 'Taco', 'Vegan')],
        rules: [rule({ kind: 'CategoryFrequency', category: 'Fish', minimumPerWeek: 4, maximumPerWeek: 4 }, soft)],
      }),
    );
    expect(r.softCost).to.equal(2);
    const builtIn = r.unmet.find((u) => u.ruleId === null);
    const freq = r.unmet.find((u) => u.ruleId !== null);
    expect((builtIn?.cost ?? 0) + (freq?.cost ?? 0)).to.equal(2);
    if (freq) expect(freq.dates).to.deep.equal(Array.from({ length: 7 }, (_, i) => date(i)));
    // A day rule broken on two days costs 2, dated those days.
    const taco = rule({ kind: 'CategoryOnDay', category: 'Taco', weekday: 'Friday', specificDate: null }, soft);
    const none = rule({ kind: 'CategoryExcludedDays', category: 'Soup', excludedWeekdays: ['Monday', 'Tuesday'] }, soft);
    const r2 = await done(
      input({
        weeks: 2,
        candidates: [
          dish('s1', 'Soup'),
          dish('s2', 'Soup'),
          dish('s3', 'Soup'),
          dish('s4', 'Soup'),
          dish('s5', 'Soup'),
          dish('s6', 'Soup'),
          dish('s7', 'Soup'),
        ],
        rules: [taco, none],
      }),
    );
    expect(r2.softCost).to.equal(6);
    expect(r2.unmet).to.have.length(2);
    expect(r2.unmet.find((u) => u.ruleId === taco.id)).to.deep.include({ cost: 2, dates: [FRI, date(11)] });
    expect(r2.unmet.find((u) => u.ruleId === none.id)).to.deep.include({ cost: 4, dates: [MONDAY, TUE, date(7), date(8)] });
  });

  it('the built-in Soft RepeatAfterDays of 7 (ruleId null) applies only when the household has no RepeatAfterDays rule', async () => {
    const candidates = menu('Fish', 'Meat', 'Soup');
    const r = await done(input({ candidates }));
    // 7 dinners, 3 dishes: the least number of pairs closer than 7 days is 3 + 1 + 1... as the exhaustive search says.
    expect(r.softCost)
      .to.equal(exhaustive(input({ candidates })).softCost)
      .and.to.be.greaterThan(0);
    expect(r.unmet).to.have.length(1);
    expect(r.unmet[0]!.ruleId).to.equal(null);
    const own = rule({ kind: 'RepeatAfterDays', days: 3 }, { strength: 'Soft' });
    const r2 = await done(input({ candidates, rules: [own] }));
    expect(r2.softCost).to.equal(0);
    expect(r2.unmet).to.deep.equal([]);
  });

  it('unmet: both dates of each pair too close, earlier dinners included', async () => {
    const r = await done(
      input({
        candidates: [dish('a', 'Fish')],
        earlierDinners: [{ date: date(-1), id: 'a', origin: 'own' }],
        rules: [rule({ kind: 'RepeatAfterDays', days: 2 }, { strength: 'Soft' })],
      }),
    );
    expect(r.softCost).to.equal(7);
    expect(r.unmet).to.have.length(1);
    expect(r.unmet[0]!.dates).to.deep.equal(Array.from({ length: 8 }, (_, i) => date(i - 1)));
  });

  it('preference cost: own dishes first when preferOwnRecipes; new starter dishes beyond maxNewDishesPerWeek; known ones are not new', async () => {
    const starters = Array.from({ length: 7 }, (_, i) => dish(`s${i}`, 'Soup', { origin: 'starter' }));
    const own = [dish('o1', 'Fish'), dish('o2', 'Meat'), dish('o3', 'Pasta')];
    const r = await done(input({ candidates: [...starters, ...own], preferOwnRecipes: true }));
    expect(r.softCost).to.equal(0);
    expect(r.days.filter((d) => d.dish!.origin === 'own')).to.have.length(3);
    const limited = await done(
      input({ candidates: starters, alwaysNewDishes: false, maxNewDishesPerWeek: 2, knownStarterIds: ['s0', 's1', 's2', 's3', 's4'] }),
    );
    expect(limited.softCost).to.equal(0);
    expect(
      costsOf(input({ candidates: starters, alwaysNewDishes: false, maxNewDishesPerWeek: 2, knownStarterIds: ['s0', 's1', 's2', 's3', 's4'] }), limited)
        .preferenceCost,
    ).to.equal(0);
    const strict = input({ candidates: starters, alwaysNewDishes: false, maxNewDishesPerWeek: 1, knownStarterIds: ['s0', 's1', 's2', 's3', 's4'] });
    // 7 days, 5 known, 2 new: the least softCost (0) needs every dish once, so one new dish beyond the limit.
    expect(costsOf(strict, await done(strict)).preferenceCost).to.equal(1);
  });

  it('kept days: the dish stays, not checked, costs nothing, but counts in CategoryFrequency and RepeatAfterDays', async () => {
    const kept = {
      date: TUE,
      dish: { id: 'f1', origin: 'own' as const, name: 'Kept fish', category: 'Fish', activeMinutes: 120, priceClass: 'Expensive' as const },
      why: [{ ruleId: null, eventId: null, text: 'Set by hand' }],
    };
    const noDinner = { date: WED, dish: null, why: [{ ruleId: null, eventId: null, text: 'Set by hand' }] };
    const rules = [
      rule({ kind: 'CategoryExcludedDays', category: 'Fish', excludedWeekdays: ['Tuesday'] }),
      rule({ kind: 'MaximumActiveCookingTime', minutes: 30, weekdays: ['Tuesday'], specificDate: null }),
      rule({ kind: 'CategoryFrequency', category: 'Fish', minimumPerWeek: 1, maximumPerWeek: 1 }),
      rule({ kind: 'RepeatAfterDays', days: 7 }),
    ];
    const candidates = [dish('f1', 'Fish'), dish('f2', 'Fish'), ...menu('Meat', 'Soup', 'Pasta', 'Taco', 'Vegan', 'Other')];
    const r = await done(input({ candidates, rules, keptDays: [kept, noDinner] }));
    expect(day(r, TUE)).to.deep.include({ dish: kept.dish, locked: true, why: kept.why, dinner: true });
    expect(day(r, WED)).to.deep.include({ dish: null, locked: true, dinner: false, servings: 0 });
    expect(r.days.filter((d) => d.dish?.category === 'Fish')).to.have.length(1);
    expect(r.softCost).to.equal(0);
    // A kept day that breaks a Soft rule costs nothing.
    const soft = rules.slice(0, 2).map((x) => ({ ...x, strength: 'Soft' as const }));
    expect((await done(input({ candidates, rules: soft, keptDays: [kept] }))).softCost).to.equal(0);
  });

  it('why names each event of the date by eventId', async () => {
    const r = await done(
      input({ candidates: variety, events: [event('e1', { eventType: 'Guests', participants: [{ memberId: null }] }), event('e2', { servingTime: '17:00' })] }),
    );
    expect(
      day(r, TUE)
        .why.filter((w) => w.eventId)
        .map((w) => w.eventId),
    ).to.deep.equal(['e1', 'e2']);
  });

  it('conflicts: irreducible sets of Hard rules and events, with the dates they act on, in the household’s language', async () => {
    const rules = [
      rule({ kind: 'CategoryOnDay', category: 'Taco', weekday: 'Friday', specificDate: null }),
      rule({ kind: 'MaximumActiveCookingTime', minutes: 20, weekdays: ['Friday'], specificDate: null }),
      rule({ kind: 'PriceClassOnDays', ceiling: 'Cheap', weekdays: ['Monday'] }),
      rule({ kind: 'CategoryFrequency', category: 'Fish', minimumPerWeek: 7, maximumPerWeek: 7 }),
    ];
    const candidates = [
      dish('t1', 'Taco', { activeMinutes: 45 }),
      dish('f1', 'Fish', { activeMinutes: 10, priceClass: 'Cheap' }),
      dish('o1', 'Meat', { activeMinutes: 10 }),
    ];
    const i = input({ language: 'nb', candidates, rules, events: [event('e1', { eventType: 'EatingOut', date: SAT })] });
    const r = await solvePlan(i);
    expect(r.status).to.equal('infeasible');
    expect(r.softCost).to.equal(null);
    expect(r.days).to.deep.equal([]);
    for (const c of r.conflicts) {
      const only = { ruleIds: new Set(c.ruleIds), eventIds: new Set(c.eventIds) };
      expect(exhaustive(i, only).feasible, 'the set cannot hold').to.equal(false);
      for (const id of [...c.ruleIds, ...c.eventIds]) {
        const less = { ruleIds: new Set(c.ruleIds.filter((x) => x !== id)), eventIds: new Set(c.eventIds.filter((x) => x !== id)) };
        expect(exhaustive(i, less).feasible, `without ${id} the rest can hold`).to.equal(true);
      }
    }
    const taco = r.conflicts.find((c) => c.ruleIds.includes(rules[0]!.id))!;
    expect(taco).to.deep.include({ ruleIds: [rules[0]!.id, rules[1]!.id], eventIds: [], dates: [FRI] });
    expect(taco.text).to.match(/^Dette kan ikke gjelde samtidig/);
    expect(r.conflicts.some((c) => c.ruleIds.includes(rules[3]!.id))).to.equal(true);
  });

  it('texts are English or Norwegian Bokmål by language', async () => {
    const rules = [rule({ kind: 'CategoryOnDay', category: 'Fish', weekday: 'Tuesday', specificDate: null }, { strength: 'Soft' })];
    const en = await done(input({ candidates: menu('Meat', 'Soup', 'Pasta', 'Taco', 'Vegan', 'Other', 'Poultry'), rules }));
    const nb = await done(input({ language: 'nb', candidates: menu('Meat', 'Soup', 'Pasta', 'Taco', 'Vegan', 'Other', 'Poultry'), rules }));
    expect(en.unmet[0]!.text).to.match(/^Not met: fish on Tuesdays/);
    expect(nb.unmet[0]!.text).to.match(/^Ikke oppfylt: fisk på tirsdager/);
    expect(day(nb, TUE).why.find((w) => w.ruleId)!.text).to.match(/ikke oppfylt/);
  });

  it('the same input gives the same plan (also with its lists in another order)', async () => {
    const candidates = [...variety, ...menu('Fish', 'Meat', 'Soup').map((d) => ({ ...d, id: `y${d.id}` }))];
    const rules = [rule({ kind: 'CategoryFrequency', category: 'Fish', minimumPerWeek: 2, maximumPerWeek: 2 }, { strength: 'Soft' })];
    const a = await solvePlan(input({ weeks: 2, candidates, rules }));
    const b = await solvePlan(input({ weeks: 2, candidates: [...candidates].reverse(), rules }));
    expect(b).to.deep.equal(a);
  });
});
