import { type Item, is, type Quant } from './tags.js';

// Amounts: cooking durations ("under 30 minutes"), how often a dish comes
// ("twice a week", "minst 1 i uka", "2-3 ganger") and spans of days
// ("within 2 weeks", "hver 14. dag") for repeats and leftovers.

export interface DurationHit {
  minutes: number;
  pos: number;
  /** false for "at least 30 minutes", which no rule can hold */
  isMaximum: boolean;
}

export interface CountHit {
  min: number;
  max: number;
  per: 'day' | 'week' | 'month' | null;
  pos: number;
}

export interface PeriodHit {
  days: number;
  pos: number;
}

const UNIT_DAYS = { day: 1, week: 7, month: 30 } as const;

function numberValue(it: Item | undefined): number | null {
  if (!is(it, 'num')) return null;
  const parts = it.parts;
  if (!parts || parts.length === 1) return it.tag.n;
  const sep = it.seps?.[0];
  const [whole = 0, frac = 0] = parts;
  if (parts.length === 2 && (sep === '.' || sep === ',')) return whole + frac / 10 ** (it.partLens?.[1] ?? 1);
  return null;
}

function intValue(it: Item | undefined): number | null {
  const v = numberValue(it);
  return v !== null && Number.isInteger(v) && !(is(it, 'num') && it.tag.ordinal) ? v : null;
}

function mark(used: boolean[], from: number, to: number): void {
  for (let k = from; k <= to; k++) used[k] = true;
}

function quantBefore(seq: Item[], used: boolean[], p: number): { q: Quant; pos: number } | null {
  const it = seq[p - 1];
  return is(it, 'quant') && !used[p - 1] ? { q: it.tag.q, pos: p - 1 } : null;
}

const negBefore = (seq: Item[], p: number): boolean => seq.slice(0, p).some((it) => is(it, 'neg'));

/** "not more than twice": the "not" belongs to the count, so no dish is negated by it */
function useNegBefore(seq: Item[], used: boolean[], p: number): void {
  for (let k = p - 1; k >= 0; k--) {
    if (is(seq[k], 'neg') && !used[k]) {
      used[k] = true;
      return;
    }
  }
}

/** "30 minutes", "1.5 hours", "halvannen time", "an hour and a half", "1 hour 30 minutes" */
function readDuration(seq: Item[], p: number): { minutes: number; last: number } | null {
  const it = seq[p];
  if (is(it, 'dur')) {
    const andHalf = is(seq[p + 1], 'andHalf') && it.tag.minutes === 60;
    return { minutes: it.tag.minutes + (andHalf ? 30 : 0), last: andHalf ? p + 1 : p };
  }
  let value = numberValue(it);
  if (value === null) return null;
  let k = p + 1;
  if (is(seq[k], 'andHalf')) {
    value += 0.5;
    k++;
  }
  const u = seq[k];
  if (!is(u, 'unit') || (u.tag.unit !== 'min' && u.tag.unit !== 'hour')) return null;
  let minutes = u.tag.unit === 'hour' ? value * 60 : value;
  const extra = numberValue(seq[k + 1]);
  const extraUnit = seq[k + 2];
  if (u.tag.unit === 'hour' && extra !== null && is(extraUnit, 'unit') && extraUnit.tag.unit === 'min') {
    minutes += extra;
    k += 2;
  }
  return { minutes, last: k };
}

export function findDurations(seq: Item[], used: boolean[]): DurationHit[] {
  const hits: DurationHit[] = [];
  for (let p = 0; p < seq.length; p++) {
    if (used[p]) continue;
    const d = readDuration(seq, p);
    if (!d || seq.slice(p, d.last + 1).some((_, k) => used[p + k])) continue;
    const quant = quantBefore(seq, used, p);
    const lowerBound = quant !== null && (quant.q === 'atLeast' || quant.q === 'moreThan');
    const isMaximum = !lowerBound || negBefore(seq, p);
    mark(used, quant ? quant.pos : p, d.last);
    hits.push({ minutes: Math.round(d.minutes), pos: p, isMaximum });
    p = d.last;
  }
  return hits;
}

/**
 * "max 15 minutes on Mondays and max 30 on the other weekdays", "30 minutter på hverdager og 90 i
 * helgene": right after a cooking time, a bare number (5–720) is minutes too.
 */
export function findBareMinutes(seq: Item[], used: boolean[]): DurationHit[] {
  for (let p = 0; p < seq.length; p++) {
    const n = intValue(seq[p]);
    if (used[p] || n === null || n < 5 || n > 720 || (seq[p]?.parts?.length ?? 0) !== 1) continue;
    const next = seq[p + 1];
    if (is(next, 'times') || is(next, 'per') || is(next, 'unit') || is(next, 'month') || is(next, 'slash')) continue;
    const quant = quantBefore(seq, used, p);
    const lowerBound = quant !== null && (quant.q === 'atLeast' || quant.q === 'moreThan');
    mark(used, quant ? quant.pos : p, p);
    return [{ minutes: n, pos: p, isMaximum: !lowerBound }];
  }
  return [];
}

// --- counts ----------------------------------------------------------------------

const RANGE_LINKS = new Set(['or', 'dash', 'rangeTo']);
/** words that may stand between a number and "times"/"a week": "2 fish dinners a week", "2 veggie days" */
const COUNTED_THINGS = new Set(['cat', 'dinner', 'word', 'only']);

interface RawCount {
  lo: number;
  hi: number;
  /** position after the count phrase */
  next: number;
}

function readTimesWords(seq: Item[], p: number): RawCount | null {
  const it = seq[p];
  if (!is(it, 'times') || it.tag.n === undefined) return null;
  const other = seq[p + 2];
  if (RANGE_LINKS.has(seq[p + 1]?.tag.t ?? '') && is(other, 'times') && other.tag.n !== undefined) {
    return { lo: it.tag.n, hi: other.tag.n, next: p + 3 };
  }
  return { lo: it.tag.n, hi: it.tag.n, next: p + 1 };
}

/** nb number words that double as articles ("en vegetarmiddag" is "a vegetarian dinner") */
const ARTICLES = new Set(['en', 'ett', 'ei', 'et']);

/**
 * @param afterCount the clause before said how often: a dish followed by a bare number that ends the
 *   clause ("kylling en gang i uka og fisk to") is a count too
 */
function readNumberCount(seq: Item[], p: number, quantified: boolean, afterBetween: boolean, afterCount = false): RawCount | null {
  const lo = intValue(seq[p]);
  if (lo === null) return null;
  let hi = lo;
  let k = p + 1;
  const link = seq[k];
  const second = intValue(seq[k + 1]);
  if (link && second !== null && (RANGE_LINKS.has(link.tag.t) || (afterBetween && is(link, 'and')))) {
    hi = second;
    k += 2;
  }
  let j = k;
  while (j < k + 3 && COUNTED_THINGS.has(seq[j]?.tag.t ?? '')) j++;
  const dish = seq.slice(k, j).some((it) => is(it, 'cat') && it.tag.cat !== 'Leftovers');
  const unitDay = seq[j];
  // "2 veggie days", "3 dager i uka": days of a dish or of a week are a count, "3 days" alone is a span
  if (is(unitDay, 'unit') && unitDay.tag.unit === 'day' && (dish || is(seq[j + 1], 'per'))) j++;
  const word = seq[j];
  if (is(word, 'times') && word.tag.n === undefined) return { lo, hi, next: j + 1 };
  if (is(seq[j], 'per')) return { lo, hi, next: j };
  // "…og fisk minst to", "2 fiskemiddager": the week is understood when the clause ends here
  const dishBefore = afterCount && is(seq[p - 1], 'cat') && !ARTICLES.has(seq[p]?.text ?? '');
  const bare = quantified || dishBefore || (dish && !ARTICLES.has(seq[p]?.text ?? ''));
  return bare && j >= seq.length && hi <= 7 ? { lo, hi, next: j } : null;
}

/** "every other day", "every 3 days", "annenhver dag": so many days of the week, rounded both ways */
function readEveryNDays(seq: Item[], p: number): RawCount | null {
  const it = seq[p];
  const other = is(it, 'everyOther');
  if (!other && !is(it, 'every')) return null;
  const n = other ? 2 : (numberValue(seq[p + 1]) ?? 0);
  const unitPos = other ? p + 1 : p + 2;
  const unit = seq[unitPos];
  if (!is(unit, 'unit') || unit.tag.unit !== 'day' || !Number.isInteger(n) || n < 2 || n > 7) return null;
  return { lo: Math.floor(7 / n), hi: Math.ceil(7 / n), next: unitPos + 1 };
}

function findPer(seq: Item[], used: boolean[], from: number): { unit: 'day' | 'week' | 'month'; pos: number } | null {
  for (let k = from; k < seq.length && k <= from + 3; k++) {
    const it = seq[k];
    if (is(it, 'per') && !used[k]) return { unit: it.tag.unit, pos: k };
  }
  for (let k = 0; k < seq.length; k++) {
    const it = seq[k];
    if (is(it, 'per') && !used[k]) return { unit: it.tag.unit, pos: k };
  }
  return null;
}

function applyQuant(q: Quant | null, lo: number, hi: number, negated: boolean): [number, number] {
  switch (q) {
    case 'atLeast':
    case 'orMore':
      return [lo, 7];
    case 'atMost':
    case 'orLess':
      return [0, hi];
    case 'lessThan':
      return [0, lo - 1];
    case 'moreThan':
      return negated ? [0, lo] : [lo + 1, 7];
    default:
      return [Math.min(lo, hi), Math.max(lo, hi)];
  }
}

/** @param daySpans read "every 3 days" as a count (for dishes; for leftovers it is their spacing) */
export function findCount(seq: Item[], used: boolean[], daySpans = true, afterCount = false): CountHit | null {
  for (let p = 0; p < seq.length; p++) {
    if (used[p]) continue;
    const before = quantBefore(seq, used, p);
    const raw =
      readTimesWords(seq, p) ?? (daySpans ? readEveryNDays(seq, p) : null) ?? readNumberCount(seq, p, before !== null, before?.q === 'between', afterCount);
    if (!raw) continue;
    // "twice a week at most": the quantifier may follow the count or its "a week"
    const afterPos = is(seq[raw.next], 'per') ? raw.next + 1 : raw.next;
    const after = seq[afterPos];
    const postQuant = is(after, 'quant') && !used[afterPos] ? after.tag.q : null;
    const post = postQuant === 'atLeast' ? 'orMore' : postQuant === 'atMost' ? 'orLess' : postQuant;
    const q = post === 'orMore' || post === 'orLess' ? post : (before?.q ?? null);
    const negated = negBefore(seq, p);
    const [min, max] = applyQuant(q, raw.lo, raw.hi, negated);
    if (negated && q === 'moreThan') useNegBefore(seq, used, p);
    mark(used, before && q === before.q ? before.pos : p, raw.next - 1);
    if (post && q === post) used[afterPos] = true;
    const per = findPer(seq, used, raw.next);
    if (per) used[per.pos] = true;
    return { min, max, per: per?.unit ?? null, pos: p };
  }
  return null;
}

// --- spans of days ----------------------------------------------------------------

export function findPeriod(seq: Item[], used: boolean[]): PeriodHit | null {
  for (let p = 0; p < seq.length; p++) {
    if (used[p]) continue;
    const it = seq[p];
    const next = seq[p + 1];
    let days: number | null = null;
    let last = p;
    if (is(it, 'everyOther') && is(next, 'unit') && next.tag.unit in UNIT_DAYS) {
      days = 2 * UNIT_DAYS[next.tag.unit as keyof typeof UNIT_DAYS] * (next.tag.n ?? 1);
      last = p + 1;
    } else if (is(it, 'num') && is(next, 'unit') && next.tag.unit in UNIT_DAYS) {
      const n = numberValue(it);
      if (n !== null && Number.isInteger(n) && n >= 1) {
        days = n * UNIT_DAYS[next.tag.unit as keyof typeof UNIT_DAYS] * (next.tag.n ?? 1);
        last = p + 1;
      }
    } else if (is(it, 'unit') && it.tag.unit in UNIT_DAYS) {
      days = UNIT_DAYS[it.tag.unit as keyof typeof UNIT_DAYS] * (it.tag.n ?? 1);
    } else if (is(it, 'per')) {
      days = UNIT_DAYS[it.tag.unit];
    }
    if (days !== null) {
      mark(used, p, last);
      return { days, pos: p };
    }
  }
  return null;
}
