import { sortWeekdays, WEEK } from './calendar.js';
import type { ClauseFacts } from './facts.js';
import type { CreateMealRuleRequest, MealCategory, MealRulePayload, RuleScope, RuleStrength, Weekday } from './types.js';

// Turns what a clause says into rule requests. Each emitter handles one rule
// kind; the position it reports keeps proposals in the order they were said.

export interface Draft {
  request: CreateMealRuleRequest;
  pos: number;
}

export interface LeftoverWish {
  enabled: boolean;
  askedEveryDays: number | null;
}

export interface Emitted {
  drafts: Draft[];
  leftovers: LeftoverWish | null;
}

interface Scope {
  scope: RuleScope;
  startDate: string | null;
  endDate: string | null;
}

const PERMANENT: Scope = { scope: 'Permanent', startDate: null, endDate: null };
const onDate = (iso: string): Scope => ({ scope: 'SpecificDate', startDate: iso, endDate: iso });

function baseScope(f: ClauseFacts): Scope {
  const r = f.dates.range;
  return r ? { scope: 'DateRange', startDate: r.start, endDate: r.end } : PERMANENT;
}

class Out {
  readonly drafts: Draft[] = [];
  constructor(
    private readonly strength: RuleStrength,
    private readonly scope: Scope,
  ) {}

  add(payload: MealRulePayload, pos: number, scope: Scope = this.scope): void {
    this.drafts.push({ request: { payload, strength: this.strength, ...scope }, pos });
  }
}

/**
 * Cooking-time and price day lists: the days named, all seven for "every day" / "hver dag" (said,
 * so written out), and empty (which the rule reads as every day) when no day was named at all.
 */
function dayListOrEveryDay(f: ClauseFacts): Weekday[] {
  return f.days.everyDay ? [...WEEK] : sortWeekdays(f.days.days);
}

/** "…except Fridays when we eat at 18.30": a value said after the exception's "when" holds on the excepted days */
const onExcepted = (f: ClauseFacts, pos: number): boolean => f.days.whenPos >= 0 && pos > f.days.whenPos && f.days.excepted.length > 0;

function emitTimes(f: ClauseFacts, out: Out): void {
  for (const hit of f.times) {
    if (onExcepted(f, hit.pos)) {
      out.add({ kind: 'DinnerTimeOnWeekday', time: hit.time, weekdays: [...f.days.excepted] }, hit.pos);
      continue;
    }
    if (f.dates.dates.length > 0) {
      for (const d of f.dates.dates) out.add({ kind: 'DinnerTimeOnWeekday', time: hit.time, weekdays: [...WEEK] }, hit.pos, onDate(d.iso));
    } else {
      const named = f.days.everyDay || f.days.days.length === 0 ? WEEK : sortWeekdays(f.days.days);
      out.add({ kind: 'DinnerTimeOnWeekday', time: hit.time, weekdays: [...named] }, hit.pos);
    }
  }
}

function emitDurations(f: ClauseFacts, out: Out): void {
  for (const hit of f.durations) {
    if (!hit.isMaximum || hit.minutes < 5 || hit.minutes > 720) continue;
    if (onExcepted(f, hit.pos)) {
      out.add({ kind: 'MaximumActiveCookingTime', minutes: hit.minutes, weekdays: [...f.days.excepted], specificDate: null }, hit.pos);
      continue;
    }
    if (f.dates.dates.length > 0) {
      for (const d of f.dates.dates) {
        out.add({ kind: 'MaximumActiveCookingTime', minutes: hit.minutes, weekdays: [], specificDate: d.iso }, hit.pos, onDate(d.iso));
      }
    } else {
      out.add({ kind: 'MaximumActiveCookingTime', minutes: hit.minutes, weekdays: dayListOrEveryDay(f), specificDate: null }, hit.pos);
    }
  }
}

function emitPrice(f: ClauseFacts, out: Out): void {
  const price = f.price;
  if (!price) return;
  if (onExcepted(f, price.pos)) {
    out.add({ kind: 'PriceClassOnDays', ceiling: price.ceiling, weekdays: [...f.days.excepted] }, price.pos);
    return;
  }
  if (f.dates.dates.length > 0) {
    for (const d of f.dates.dates) out.add({ kind: 'PriceClassOnDays', ceiling: price.ceiling, weekdays: [] }, price.pos, onDate(d.iso));
  } else {
    out.add({ kind: 'PriceClassOnDays', ceiling: price.ceiling, weekdays: dayListOrEveryDay(f) }, price.pos);
  }
}

function emitRepeat(f: ClauseFacts, out: Out): void {
  const days = f.period?.days;
  if (f.repeatPos < 0 || days === undefined || days < 1 || days > 365) return;
  out.add({ kind: 'RepeatAfterDays', days }, f.repeatPos);
}

// --- dishes ------------------------------------------------------------------------

const never = (category: MealCategory): MealRulePayload => ({ kind: 'CategoryFrequency', category, minimumPerWeek: 0, maximumPerWeek: 0 });

function frequency(f: ClauseFacts): [number, number] | null {
  const c = f.count;
  if (c) {
    if (c.per === 'month') return null;
    if (c.per === 'day') return c.min === 1 && c.max === 1 ? [7, 7] : null;
    return c.min >= 0 && c.max <= 7 && c.min <= c.max ? [c.min, c.max] : null;
  }
  if (f.days.everyDay && !f.neg) return [7, 7];
  if (f.perWeekAlone && !f.neg) return [1, 7];
  return null;
}

function onDays(category: MealCategory, f: ClauseFacts, pos: number, out: Out): void {
  for (const d of f.dates.dates) out.add({ kind: 'CategoryOnDay', category, weekday: null, specificDate: d.iso }, pos, onDate(d.iso));
  if (f.dates.dates.length > 0) return;
  for (const weekday of f.days.days) out.add({ kind: 'CategoryOnDay', category, weekday, specificDate: null }, pos);
}

function notOnDays(category: MealCategory, f: ClauseFacts, pos: number, out: Out): void {
  if (f.dates.dates.length > 0) {
    for (const d of f.dates.dates) out.add(never(category), pos, onDate(d.iso));
  } else if (f.days.days.length > 0) {
    out.add({ kind: 'CategoryExcludedDays', category, excludedWeekdays: sortWeekdays(f.days.days) }, pos);
  } else {
    out.add(never(category), pos);
  }
}

function emitCategory(category: MealCategory, pos: number, f: ClauseFacts, out: Out): void {
  const freq = frequency(f);
  if (f.count || (freq && !f.neg)) {
    if (!freq) return;
    const [min, max] = freq;
    out.add({ kind: 'CategoryFrequency', category, minimumPerWeek: min, maximumPerWeek: max }, pos);
    // "fish twice a week, on Mondays and Thursdays": the named days are wishes too
    if (f.count && f.days.named && !f.neg) onDays(category, { ...f, dates: { ...f.dates, dates: [] } }, pos, out);
    return;
  }
  if (f.neg) notOnDays(category, f, pos, out);
  else onDays(category, f, pos, out);
}

const VEGETARIAN_EXCLUDES: readonly MealCategory[] = ['Meat', 'Poultry', 'Fish'];

/** "vegetarian only", "we are vegetarians": no meat, poultry or fish at all. Returns the dishes left to read. */
function vegetarianHousehold(f: ClauseFacts, cats: ClauseFacts['cats'], out: Out): ClauseFacts['cats'] {
  const veg = cats.find((c) => c.cat === 'Vegetarian' || c.cat === 'Vegan');
  const named = f.days.days.length > 0 || f.dates.dates.length > 0 || f.days.everyDay;
  const wholeDiet = !f.neg && !f.count && !named && (f.vegPeople || (f.only && veg !== undefined));
  if (wholeDiet) {
    for (const c of VEGETARIAN_EXCLUDES) out.add(never(c), veg?.pos ?? 0);
    return cats.filter((c) => c.cat !== 'Vegetarian' && c.cat !== 'Vegan' && !VEGETARIAN_EXCLUDES.includes(c.cat));
  }
  // "we are vegetarians on Mondays"
  return f.vegPeople && cats.length === 0 ? [{ cat: 'Vegetarian', pos: 0 }] : cats;
}

function emitCategories(f: ClauseFacts, out: Out): void {
  // "no fish two days in a row": the "no" is not about fish as such, and nothing holds the rest
  // ("less meat, so max 2 a week": a vague word next to a real count does not stop the count)
  if (f.inARow || (f.vague && !f.count) || f.days.alternate || f.looseOrdinals > 0 || (f.neg && f.looseNumbers > 0)) return;
  const cats = vegetarianHousehold(
    f,
    f.cats.filter((c) => c.cat !== 'Leftovers'),
    out,
  );
  const [first, ...rest] = cats;
  if (first && rest.length > 0 && splitsNegation(f, cats)) {
    // "no meat and fish twice a week": the "no" takes the first dish, the count the others
    emitCategory(first.cat, first.pos, { ...f, count: null }, out);
    for (const c of rest) emitCategory(c.cat, c.pos, { ...f, neg: false }, out);
    return;
  }
  for (const c of cats) emitCategory(c.cat, c.pos, f, out);
}

function splitsNegation(f: ClauseFacts, cats: { pos: number }[]): boolean {
  const last = cats[cats.length - 1];
  const first = cats[0];
  return f.neg && f.count !== null && !!first && !!last && f.negPos < first.pos && f.count.pos > last.pos;
}

function leftoverSpacing(f: ClauseFacts): number | null {
  const c = f.count;
  if (c) {
    const base = c.per ? { day: 1, week: 7, month: 30 }[c.per] : (f.period?.days ?? 7);
    const n = c.min > 0 ? c.min : c.max;
    return n > 0 ? Math.max(1, Math.round(base / n)) : null;
  }
  if (f.period) return f.period.days;
  if (f.days.alternate) return 14;
  return f.days.everyDay ? 1 : null;
}

function emitLeftovers(f: ClauseFacts, out: Out): LeftoverWish | null {
  const mention = f.cats.find((c) => c.cat === 'Leftovers');
  if (!mention) return null;
  const named = f.days.days.length > 0 || f.dates.dates.length > 0;
  if (named && !f.days.alternate) {
    if (f.neg) notOnDays('Leftovers', f, mention.pos, out);
    else onDays('Leftovers', f, mention.pos, out);
  }
  // "no leftovers on Fridays" turns down a day, not leftovers as such
  const enabled = !f.neg || named;
  const every = enabled ? leftoverSpacing(f) : null;
  return { enabled, askedEveryDays: every !== null && every >= 1 && every <= 365 ? every : null };
}

export function emitClause(f: ClauseFacts, soft: boolean): Emitted {
  // a start date with no end would silently become "always"; better to say it was not understood
  if (f.dates.openStart) return { drafts: [], leftovers: null };
  // "we had fish on Monday": a story, not a wish
  if (f.past) return { drafts: [], leftovers: null };
  const out = new Out(soft ? 'Soft' : 'Hard', baseScope(f));
  emitTimes(f, out);
  emitDurations(f, out);
  emitPrice(f, out);
  emitRepeat(f, out);
  if (f.repeatPos < 0) emitCategories(f, out);
  const leftovers = emitLeftovers(f, out);
  // stable sort: proposals follow the sentence, ties keep the order the emitters gave
  return { drafts: out.drafts.sort((a, b) => a.pos - b.pos), leftovers };
}
