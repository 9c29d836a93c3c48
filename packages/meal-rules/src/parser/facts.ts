import type { Ymd } from './calendar.js';
import { type CountHit, type DurationHit, findBareMinutes, findCount, findDurations, findPeriod, type PeriodHit } from './rec-amounts.js';
import { type DateFacts, findDates } from './rec-dates.js';
import { type DayFacts, findDays } from './rec-days.js';
import { findTimes, type TimeHit } from './rec-time.js';
import type { Clause } from './split.js';
import { type Item, is, type TagKind } from './tags.js';
import type { MealCategory, PriceCeiling } from './types.js';

// Everything one clause says, read by the recognisers in a fixed order so
// each number is claimed once: clock times, then dates, then durations,
// then weekdays, price and repeats, then how-often.

export interface ClauseFacts {
  cats: { cat: MealCategory; pos: number }[];
  /** foods below the categories named in the clause ("no pork"): never a category rule */
  foods: number;
  neg: boolean;
  only: boolean;
  vegPeople: boolean;
  soft: boolean;
  dinner: boolean;
  times: TimeHit[];
  dates: DateFacts;
  durations: DurationHit[];
  days: DayFacts;
  price: { ceiling: PriceCeiling; pos: number } | null;
  repeatPos: number;
  count: CountHit | null;
  period: PeriodHit | null;
  /** "weekly", "every week" with no count */
  perWeekAlone: boolean;
  /** numbers no recogniser could place ("no fish 2 days in a row") */
  looseNumbers: number;
  /** of those, ordinals ("the first Friday of the month") */
  looseOrdinals: number;
  /** position of the first "no"/"ikke" no recogniser used, -1 when none */
  negPos: number;
  /** "in a row", "på rad" */
  inARow: boolean;
  /** "had", "spiste": the clause tells what happened, it wishes nothing */
  past: boolean;
  /** a person ("the kids", "barna") does something: no continuation of the clause before */
  who: boolean;
  /** "much", "less", "sjelden": an amount no rule holds */
  vague: boolean;
  /** words the lexicon did not know */
  unknown: number;
  /** anything beyond greetings, politeness and glue words */
  content: boolean;
  /** only soft words and filler: "if possible", "gjerne" */
  softOnly: boolean;
  /** a clause of only a date range that lent it to its neighbour ("1 to 14 July, no meat") */
  lentRange?: boolean;
}

const GLUE: ReadonlySet<TagKind> = new Set([
  'filler',
  'soft',
  'on',
  'in',
  'at',
  'and',
  'or',
  'but',
  'also',
  'comma',
  'dash',
  'slash',
  'dinner',
  'every',
  'from',
  'rangeTo',
  'only',
  'neg',
  'andHalf',
  'quant',
  'except',
  'when',
  'who',
  'past',
]);

function firstPos(seq: Item[], used: boolean[], kind: TagKind): number {
  return seq.findIndex((it, k) => it.tag.t === kind && !used[k]);
}

/**
 * The clause's price ceiling. Several price words ("budget or moderate", "billig eller rimelig")
 * give the higher of their ceilings: the household accepts either, so the looser one holds.
 */
function findPrice(seq: Item[], used: boolean[]): ClauseFacts['price'] {
  let found: ClauseFacts['price'] = null;
  seq.forEach((it, p) => {
    if (!is(it, 'price') || used[p]) return;
    used[p] = true;
    const ceiling = found?.ceiling === 'CheapOrMid' ? 'CheapOrMid' : it.tag.ceiling;
    found = { ceiling, pos: found?.pos ?? p };
  });
  if (found) return found;
  // "nothing expensive", "ikke noe dyrt": a negated "expensive" caps the price at mid
  const e = firstPos(seq, used, 'expensive');
  const n = firstPos(seq, used, 'neg');
  if (e < 0 || n < 0) return null;
  used[e] = true;
  used[n] = true;
  return { ceiling: 'CheapOrMid', pos: Math.min(e, n) };
}

export interface Inherited {
  /** the previous clause was about dinner time, so "and 18:30 at weekends" is too */
  expectTime: boolean;
  /** the previous clause said how often, so "…og fisk to" is a count too */
  afterCount?: boolean;
  /** the previous clause was a cooking time, so "…and 90 on weekends" is minutes */
  afterDuration?: boolean;
}

type Recognised = Pick<ClauseFacts, 'times' | 'dates' | 'durations' | 'days' | 'price' | 'repeatPos' | 'count' | 'period' | 'perWeekAlone'>;

/** Runs the recognisers in claiming order; `used` marks what each one took. */
function recognise(
  seq: Item[],
  used: boolean[],
  today: Ymd,
  expectTime: boolean,
  continuesTime: boolean,
  afterCount: boolean,
  continuesDuration: boolean,
): Recognised {
  const times = findTimes(seq, used, expectTime, continuesTime);
  const dates = findDates(seq, used, today);
  const found = findDurations(seq, used);
  const durations = found.length === 0 && times.length === 0 && continuesDuration ? findBareMinutes(seq, used) : found;
  const days = findDays(seq, used);
  const price = findPrice(seq, used);
  const repeatPos = firstPos(seq, used, 'repeat');
  const leftovers = seq.some((it) => is(it, 'cat') && it.tag.cat === 'Leftovers');
  // a repeat clause's "once a week" is its span, not a count of dishes
  const count = repeatPos >= 0 ? null : findCount(seq, used, !leftovers, afterCount);
  const period = repeatPos >= 0 || leftovers ? findPeriod(seq, used) : null;
  const perWeekAlone = !count && seq.some((it, k) => is(it, 'per') && it.tag.unit === 'week' && !used[k]);
  return { times, dates, durations, days, price, repeatPos, count, period, perWeekAlone };
}

function categoriesOf(seq: Item[]): ClauseFacts['cats'] {
  const cats: ClauseFacts['cats'] = [];
  seq.forEach((it, pos) => {
    if (is(it, 'cat') && !cats.some((c) => c.cat === it.tag.cat)) cats.push({ cat: it.tag.cat, pos });
  });
  return cats;
}

export function analyseClause(clause: Clause, today: Ymd, inherited: Inherited): ClauseFacts {
  const seq = clause.items.filter((it) => !is(it, 'filler'));
  const used: boolean[] = seq.map(() => false);
  const has = (kind: TagKind) => seq.some((it) => it.tag.t === kind);
  const unknown = seq.filter((it) => is(it, 'word')).length;
  const dinner = has('dinner');
  const continuesTime = inherited.expectTime && unknown === 0 && !has('cat') && !dinner;
  const continuesDuration = inherited.afterDuration === true && !has('cat') && !dinner;
  const found = recognise(seq, used, today, dinner || continuesTime, continuesTime, inherited.afterCount === true, continuesDuration);
  // "barna har fotball kl 18": a clock time with no dinner word, beside words the parser does not know
  // or a person doing something, is some other appointment
  if (found.times.length > 0 && !dinner && !inherited.expectTime && (unknown > 0 || has('who'))) found.times = [];
  // what the recognisers left over tells whether the dish rules may be trusted
  const loose = seq.filter((it, k) => (is(it, 'num') || is(it, 'times')) && !used[k]);
  const negPos = seq.findIndex((it, k) => is(it, 'neg') && !used[k]);
  const content = seq.some((it) => !GLUE.has(it.tag.t));
  return {
    ...found,
    cats: categoriesOf(seq),
    foods: seq.filter((it) => is(it, 'food')).length,
    neg: negPos >= 0,
    negPos,
    only: has('only'),
    vegPeople: has('vegPeople'),
    soft: has('soft'),
    dinner,
    looseNumbers: loose.length,
    looseOrdinals: loose.filter((it) => is(it, 'num') && it.tag.ordinal).length,
    inARow: has('inARow'),
    past: has('past'),
    who: has('who'),
    vague: has('vague'),
    unknown,
    content,
    softOnly: has('soft') && !content && !has('neg'),
  };
}
