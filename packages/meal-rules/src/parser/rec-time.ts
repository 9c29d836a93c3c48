import { type Item, is } from './tags.js';

// Clock times for dinner. Dinner is in the afternoon unless the sentence says
// morning, so "at 5.30", "half past five" and "halv seks" all mean 17:30.

export interface TimeHit {
  time: string;
  pos: number;
}

interface Clock {
  h: number;
  m: number;
  /** positions the phrase used */
  used: number[];
}

const isInt = (n: number, lo: number, hi: number) => Number.isInteger(n) && n >= lo && n <= hi;

function plainNumber(it: Item | undefined): number | null {
  if (!is(it, 'num') || it.tag.ordinal || (it.parts && it.parts.length !== 1)) return null;
  return it.tag.n;
}

/** "17:30", "5.30": a dotted pair is a time only where a time is expected, otherwise it may be a date (24.12). */
function digitalClock(seq: Item[], p: number, expectTime: boolean): Clock | null {
  const it = seq[p];
  // "kl 1730", "dinner at 1800" (only right after "at"/"kl": a bare 2027 is a year)
  if (is(it, 'num') && it.parts?.length === 1 && it.partLens?.[0] === 4 && is(seq[p - 1], 'at')) {
    const h = Math.floor(it.tag.n / 100);
    const m = it.tag.n % 100;
    return isInt(h, 0, 23) && isInt(m, 0, 59) ? { h, m, used: [p] } : null;
  }
  if (!is(it, 'num') || it.parts?.length !== 2 || it.partLens?.[1] !== 2) return null;
  const [h = -1, m = -1] = it.parts;
  const sep = it.seps?.[0];
  if (!isInt(h, 0, 23) || !isInt(m, 0, 59)) return null;
  const cued = sep === ':' || expectTime || is(seq[p - 1], 'at') || is(seq[p + 1], 'ampm');
  return cued && (sep === ':' || sep === '.') ? { h, m, used: [p] } : null;
}

/** "half past five", "quarter to six", "halv seks", "kvart over fem" */
function phraseClock(seq: Item[], p: number): Clock | null {
  const it = seq[p];
  const hour = plainNumber(seq[p + 1]);
  if (!is(it, 'tmod') || hour === null || !isInt(hour, 1, 12)) return null;
  switch (it.tag.mod) {
    case 'halfPast':
      return { h: hour, m: 30, used: [p, p + 1] };
    case 'quarterPast':
      return { h: hour, m: 15, used: [p, p + 1] };
    case 'quarterTo':
      return { h: hour - 1, m: 45, used: [p, p + 1] };
    default:
      return { h: hour - 1, m: 30, used: [p, p + 1] };
  }
}

const PAST_WORDS = new Set(['past', 'over', 'after']);
const TO_WORDS = new Set(['to', 'pa', 'before', 'til']);

/** "ten past five", "ti på seks", "fem over halv seks" — only where a time is expected */
function minutesClock(seq: Item[], p: number): Clock | null {
  const minutes = plainNumber(seq[p]);
  const link = seq[p + 1];
  if (minutes === null || !isInt(minutes, 1, 29) || !link) return null;
  const past = PAST_WORDS.has(link.text);
  if (!past && !TO_WORDS.has(link.text)) return null;
  const after = seq[p + 2];
  const half = is(after, 'tmod') && after.tag.mod === 'halfBefore';
  const hourPos = half ? p + 3 : p + 2;
  const hour = plainNumber(seq[hourPos]);
  if (hour === null || !isInt(hour, 1, 12)) return null;
  const base = half ? (hour - 1) * 60 + 30 : hour * 60;
  const total = past ? base + minutes : base - minutes;
  const used = half ? [p, p + 1, p + 2, p + 3] : [p, p + 1, p + 2];
  return { h: Math.floor(total / 60), m: total % 60, used };
}

/** "at 6", "kl 17", "six o'clock", "6 pm", "five thirty" */
function hourClock(seq: Item[], p: number, expectTime: boolean, continues: boolean, afterTime: boolean): Clock | null {
  const hour = plainNumber(seq[p]);
  if (hour === null || !isInt(hour, 0, 24)) return null;
  const prev = seq[p - 1];
  const next = seq[p + 1];
  // "6 pm": the am/pm word stays unused so format() can read it
  if (is(next, 'ampm')) return { h: hour % 24, m: 0, used: [p] };
  if (is(next, 'oclock')) return { h: hour % 24, m: 0, used: [p, p + 1] };
  // "…and 18 at weekends" after a dinner time: the bare hour continues the list
  // "…except Thursdays when it's 7"
  // "at 6, 6:30 or 7": a bare hour right after another time of the list
  const cued = (is(prev, 'at') && (prev.tag.strong === true || expectTime)) || (continues && p === 0) || (is(prev, 'when') && expectTime) || afterTime;
  const countsSomething = ['unit', 'times', 'per', 'month', 'cat', 'dinner'].includes(next?.tag.t ?? '');
  if (!cued || countsSomething) return null;
  const minutes = plainNumber(next);
  if (minutes !== null && isInt(minutes, 10, 59) && isInt(hour, 1, 12)) return { h: hour, m: minutes, used: [p, p + 1] };
  return { h: hour % 24, m: 0, used: [p] };
}

function format(clock: Clock, morning: boolean): string | null {
  let h = clock.h;
  if (h < 0) h += 12;
  if (morning && h === 12) h = 0;
  else if (!morning && h < 12) h += 12;
  if (!isInt(h, 0, 23) || !isInt(clock.m, 0, 59)) return null;
  return `${String(h).padStart(2, '0')}:${String(clock.m).padStart(2, '0')}`;
}

function saysMorning(seq: Item[], used: boolean[], from: number): boolean {
  for (let k = from; k < seq.length && k <= from + 3; k++) {
    const it = seq[k];
    if (is(it, 'ampm') && !used[k]) {
      used[k] = true;
      return !it.tag.pm;
    }
  }
  return false;
}

/**
 * @param expectTime the clause talks about dinner or eating (or continues a clause that did),
 *   so a bare "at 6" or "17.30" is a clock time
 * @param continues the clause only continues a dinner-time clause ("…og seks i helgene"),
 *   so even a bare hour at its start is a clock time
 */
const LIST_LINKS = new Set(['comma', 'or', 'and', 'slash']);

/** "17:30, 18 eller 18.30": the item before p (after a list link, and an "at" of its own) ends a time just found */
function followsTime(seq: Item[], p: number, lastEnd: number): boolean {
  let k = p - 1;
  if (is(seq[k], 'at')) k--;
  return k > lastEnd && LIST_LINKS.has(seq[k]?.tag.t ?? '') && k - 1 === lastEnd;
}

export function findTimes(seq: Item[], used: boolean[], expectTime: boolean, continues = false): TimeHit[] {
  const hits: TimeHit[] = [];
  let lastEnd = -2;
  for (let p = 0; p < seq.length; p++) {
    // "2/1 to 9/1" is a pair of dates, not "one to nine"
    if (used[p] || is(seq[p - 1], 'slash') || is(seq[p + 1], 'slash')) continue;
    const clock =
      digitalClock(seq, p, expectTime) ??
      phraseClock(seq, p) ??
      (expectTime ? minutesClock(seq, p) : null) ??
      hourClock(seq, p, expectTime, continues, followsTime(seq, p, lastEnd));
    if (!clock || clock.used.some((k) => used[k])) continue;
    const last = Math.max(...clock.used);
    const time = format(clock, saysMorning(seq, used, last + 1));
    if (!time) continue;
    for (const k of clock.used) used[k] = true;
    if (is(seq[p - 1], 'at')) used[p - 1] = true;
    hits.push({ time, pos: p });
    lastEnd = last;
    p = last;
  }
  return hits;
}
