import { addDays, compareMonthDay, daysInMonth, isValidYmd, nextOccurrence, toIso, type Ymd } from './calendar.js';
import { type Item, is } from './tags.js';

// Named dates and date ranges. A date without a year is the next one on or
// after today; in a range the year is taken from the end date, and the start
// falls in the year before when it comes later in the calendar
// ("20 December to 5 January").

export interface DateHit {
  iso: string;
  pos: number;
}

export interface RangeHit {
  start: string;
  end: string;
  pos: number;
}

export interface DateFacts {
  dates: DateHit[];
  range: RangeHit | null;
  /** "from 1 July" with no end: a range no rule scope can hold */
  openStart: boolean;
}

/** A date as written: day always, month and year when given. */
interface Written {
  d: number;
  m?: number;
  y?: number;
  /** position after the date */
  next: number;
}

const isInt = (n: number | undefined, lo: number, hi: number): n is number => n !== undefined && Number.isInteger(n) && n >= lo && n <= hi;

function plainInt(it: Item | undefined): number | undefined {
  return is(it, 'num') && (!it.parts || it.parts.length === 1) ? it.tag.n : undefined;
}

function withYear(seq: Item[], w: Written): Written {
  const k = is(seq[w.next], 'comma') ? w.next + 1 : w.next;
  const y = plainInt(seq[k]);
  return isInt(y, 1000, 9999) && seq[k]?.parts ? { ...w, y, next: k + 1 } : w;
}

function numericDate(it: Item, p: number): Written | null {
  const parts = it.parts ?? [];
  const seps = it.seps ?? [];
  const [a, b, c] = parts;
  if (parts.length === 3 && seps[0] === '-' && seps[1] === '-') return { y: a, m: b, d: c ?? 0, next: p + 1 };
  if (parts.length === 3 && seps[0] === '.' && seps[1] === '.' && isInt(c, 0, 9999)) {
    return { d: a ?? 0, m: b, y: c < 100 ? 2000 + c : c, next: p + 1 };
  }
  if (parts.length === 2 && seps[0] === '.' && isInt(a, 1, 31) && isInt(b, 1, 12)) return { d: a, m: b, next: p + 1 };
  return null;
}

/**
 * "1/6", "15/6", "1/3/2027": day first, as in Norway and Britain; month first only when the
 * second number cannot be a month ("6/15").
 */
function slashDate(seq: Item[], used: boolean[], p: number): Written | null {
  const a = plainInt(seq[p]);
  const b = plainInt(seq[p + 2]);
  if (!is(seq[p + 1], 'slash') || a === undefined || b === undefined || used[p + 2]) return null;
  const [d, m] = b > 12 && a <= 12 ? [b, a] : [a, b];
  if (!isInt(d, 1, 31) || !isInt(m, 1, 12)) return null;
  const y = plainInt(seq[p + 4]);
  if (is(seq[p + 3], 'slash') && y !== undefined && (isInt(y, 1000, 9999) || isInt(y, 0, 99))) {
    return { d, m, y: y < 100 ? 2000 + y : y, next: p + 5 };
  }
  return { d, m, next: p + 3 };
}

function readDate(seq: Item[], used: boolean[], p: number, today: Ymd): Written | null {
  const it = seq[p];
  if (!it || used[p]) return null;
  if (is(it, 'relDay')) {
    const date = addDays(today, it.tag.offset);
    return { ...date, next: p + 1 };
  }
  if (is(it, 'holiday')) return withYear(seq, { d: it.tag.d, m: it.tag.m, next: p + 1 });
  if (is(it, 'month')) {
    const d = plainInt(seq[p + 1]);
    return isInt(d, 1, 31) && !used[p + 1] ? withYear(seq, { d, m: it.tag.m, next: p + 2 }) : null;
  }
  if (!is(it, 'num')) return null;
  if (it.parts && it.parts.length > 1) return numericDate(it, p);
  const slashed = slashDate(seq, used, p);
  if (slashed) return slashed;
  const d = it.tag.n;
  if (!isInt(d, 1, 31)) return null;
  const month = seq[p + 1];
  if (is(month, 'month') && !used[p + 1]) return withYear(seq, { d, m: month.tag.m, next: p + 2 });
  return { d, next: p + 1 };
}

function resolve(w: Written, today: Ymd): Ymd | null {
  if (w.m === undefined) return null;
  if (w.y !== undefined) return isValidYmd(w.y, w.m, w.d) ? { y: w.y, m: w.m, d: w.d } : null;
  return nextOccurrence(w.m, w.d, today);
}

function resolveRange(a: Written, b: Written, today: Ymd): [Ymd, Ymd] | null {
  const am = a.m ?? b.m;
  const bm = b.m ?? a.m;
  if (am === undefined || bm === undefined) return null;
  const A = { d: a.d, m: am };
  const B = { d: b.d, m: bm };
  let ay = a.y;
  let by = b.y;
  const wraps = compareMonthDay(A, B) > 0;
  if (by === undefined && ay !== undefined) by = wraps ? ay + 1 : ay;
  if (by === undefined) by = nextOccurrence(B.m, B.d, today)?.y;
  if (by === undefined) return null;
  if (ay === undefined) ay = wraps ? by - 1 : by;
  if (!isValidYmd(ay, A.m, A.d) || !isValidYmd(by, B.m, B.d)) return null;
  const start = { y: ay, ...A };
  const end = { y: by, ...B };
  return toIso(start) <= toIso(end) ? [start, end] : null;
}

const RANGE_LINKS = new Set(['rangeTo', 'dash']);

function readRange(seq: Item[], used: boolean[], p: number, allowAnd: boolean, today: Ymd) {
  const a = readDate(seq, used, p, today);
  const link = a ? seq[a.next] : undefined;
  if (!a || !link || !(RANGE_LINKS.has(link.tag.t) || (allowAnd && is(link, 'and')))) return null;
  const b = readDate(seq, used, a.next + 1, today);
  if (!b || (a.m === undefined && b.m === undefined)) return null;
  const span = resolveRange(a, b, today);
  return span ? { start: toIso(span[0]), end: toIso(span[1]), next: b.next } : null;
}

/** "24 and 31 December": the days before the last share its month and year. */
function readList(seq: Item[], used: boolean[], p: number, today: Ymd): { dates: Ymd[]; next: number } | null {
  const written: Written[] = [];
  let w = readDate(seq, used, p, today);
  // a list of days longer than a month has no meaning; the cap keeps hostile input linear
  while (w && written.length < 31) {
    written.push(w);
    const link = seq[w.next];
    if (w.m !== undefined || !(is(link, 'and') || is(link, 'or') || is(link, 'comma'))) break;
    w = readDate(seq, used, w.next + 1, today);
  }
  const last = written[written.length - 1];
  if (!last || last.m === undefined) return null;
  const dates: Ymd[] = [];
  for (const x of written) {
    const date = resolve({ ...x, m: x.m ?? last.m, y: x.y ?? (x.m === undefined ? last.y : undefined) }, today);
    if (date) dates.push(date);
  }
  return { dates, next: last.next };
}

/** "in July", "i juli 2027": the whole month, the next one that has not ended yet. */
function monthRange(seq: Item[], p: number, today: Ymd): { start: string; end: string; next: number } | null {
  const month = seq[p + 1];
  if (!is(seq[p], 'in') || !is(month, 'month')) return null;
  const after = plainInt(seq[p + 2]);
  const year = isInt(after, 1000, 9999) ? after : undefined;
  // "in July 14" names a day, not the month
  if (after !== undefined && year === undefined) return null;
  const m = month.tag.m;
  const y = year ?? (m >= today.m ? today.y : today.y + 1);
  return { start: toIso({ y, m, d: 1 }), end: toIso({ y, m, d: daysInMonth(y, m) }), next: year ? p + 3 : p + 2 };
}

const LAST_WORDS = new Set(['last', 'siste']);

function smallCount(it: Item | undefined, ordinal: boolean): number | undefined {
  if (!is(it, 'num') || (it.tag.ordinal === true) !== ordinal || (it.parts && it.parts.length !== 1)) return undefined;
  return isInt(it.tag.n, 1, 4) ? it.tag.n : undefined;
}

/**
 * "the first two weeks of July", "the last week of December", "de to første ukene i juli", "andre
 * uka i mars": weeks counted from the month's first day (or back from its last), as a range.
 */
function weekRange(seq: Item[], used: boolean[], p: number, today: Ymd): { start: string; end: string; next: number } | null {
  let k = p;
  let first: number | undefined;
  let weeks = 1;
  const last = LAST_WORDS.has(seq[k]?.text ?? '') && !used[k];
  if (last) k++;
  else if (smallCount(seq[k], true) !== undefined) first = smallCount(seq[k++], true);
  else if (smallCount(seq[k], false) !== undefined && smallCount(seq[k + 1], true) === 1) {
    // "de to første ukene"
    weeks = smallCount(seq[k], false) ?? 1;
    first = 1;
    k += 2;
  }
  if (!last && first === undefined) return null;
  const n = smallCount(seq[k], false);
  if (n !== undefined && is(seq[k + 1], 'unit')) {
    weeks = n;
    k++;
  }
  const unit = seq[k];
  if (!is(unit, 'unit') || unit.tag.unit !== 'week' || unit.tag.n !== undefined) return null;
  k++;
  if (is(seq[k], 'in')) k++;
  const month = seq[k];
  if (!is(month, 'month') || used.slice(p, k + 1).some(Boolean)) return null;
  const after = plainInt(seq[k + 1]);
  const year = isInt(after, 1000, 9999) && seq[k + 1]?.parts ? after : undefined;
  const m = month.tag.m;
  const y = year ?? (m >= today.m ? today.y : today.y + 1);
  const dim = daysInMonth(y, m);
  const startDay = last ? dim - 7 * weeks + 1 : ((first ?? 1) - 1) * 7 + 1;
  const endDay = last ? dim : Math.min(startDay + 7 * weeks - 1, dim);
  if (startDay < 1 || startDay > dim) return null;
  return { start: toIso({ y, m, d: startDay }), end: toIso({ y, m, d: endDay }), next: year ? k + 2 : k + 1 };
}

const UNTIL_WORDS = new Set(['up to', 'inntil', 'opp til', 'opptil']);

function markUsed(used: boolean[], from: number, to: number): void {
  for (let k = from; k < to; k++) used[k] = true;
}

export function findDates(seq: Item[], used: boolean[], today: Ymd): DateFacts {
  const facts: DateFacts = { dates: [], range: null, openStart: false };
  for (let p = 0; p < seq.length; p++) {
    if (used[p]) continue;
    const it = seq[p] as Item;
    const intro = is(it, 'from') || (is(it, 'quant') && it.tag.q === 'between');
    const range =
      weekRange(seq, used, p, today) ??
      (intro ? readRange(seq, used, p + 1, true, today) : null) ??
      monthRange(seq, p, today) ??
      readRange(seq, used, p, false, today);
    if (range) {
      facts.range ??= { start: range.start, end: range.end, pos: p };
      markUsed(used, p, range.next);
      p = range.next - 1;
      continue;
    }
    const until = is(it, 'rangeTo') || (is(it, 'quant') && UNTIL_WORDS.has(it.text));
    const list = readList(seq, used, until || is(it, 'from') ? p + 1 : p, today);
    if (!list) continue;
    const first = list.dates[0];
    if (until && first && list.dates.length === 1) {
      const start = toIso(today);
      if (toIso(first) >= start) facts.range ??= { start, end: toIso(first), pos: p };
    } else if (is(it, 'from')) {
      facts.openStart = true;
    } else {
      for (const date of list.dates) facts.dates.push({ iso: toIso(date), pos: p });
    }
    markUsed(used, p, list.next);
    p = list.next - 1;
  }
  return facts;
}
