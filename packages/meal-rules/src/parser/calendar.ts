import type { Weekday } from './types.js';

// Plain calendar arithmetic on YYYY-MM-DD strings, in UTC so the machine's
// time zone never shifts a date.

export interface Ymd {
  y: number;
  m: number;
  d: number;
}

/** Monday first: the order weekday lists are written in. */
export const WEEK: readonly Weekday[] = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const BY_JS_DAY: readonly Weekday[] = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

export function daysInMonth(y: number, m: number): number {
  return new Date(Date.UTC(y, m, 0)).getUTCDate();
}

export function isValidYmd(y: number, m: number, d: number): boolean {
  return Number.isInteger(y) && Number.isInteger(m) && Number.isInteger(d) && y >= 1000 && y <= 9999 && m >= 1 && m <= 12 && d >= 1 && d <= daysInMonth(y, m);
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

export function toIso({ y, m, d }: Ymd): string {
  return `${pad(y, 4)}-${pad(m)}-${pad(d)}`;
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})$/;

export function parseIso(s: unknown): Ymd | null {
  if (typeof s !== 'string') return null;
  const m = ISO.exec(s);
  if (!m) return null;
  const ymd = { y: Number(m[1]), m: Number(m[2]), d: Number(m[3]) };
  return isValidYmd(ymd.y, ymd.m, ymd.d) ? ymd : null;
}

export function todayUtc(): Ymd {
  const now = new Date();
  return { y: now.getUTCFullYear(), m: now.getUTCMonth() + 1, d: now.getUTCDate() };
}

export function addDays(date: Ymd, days: number): Ymd {
  const t = new Date(Date.UTC(date.y, date.m - 1, date.d + days));
  return { y: t.getUTCFullYear(), m: t.getUTCMonth() + 1, d: t.getUTCDate() };
}

export function weekdayOf(date: Ymd): Weekday {
  return BY_JS_DAY[new Date(Date.UTC(date.y, date.m - 1, date.d)).getUTCDay()] as Weekday;
}

/** month/day compared within a year */
export function compareMonthDay(a: { m: number; d: number }, b: { m: number; d: number }): number {
  return a.m !== b.m ? a.m - b.m : a.d - b.d;
}

/** The first date with this month and day on or after today (29 February waits for a leap year). */
export function nextOccurrence(m: number, d: number, today: Ymd): Ymd | null {
  let y = compareMonthDay({ m, d }, today) >= 0 ? today.y : today.y + 1;
  for (let tries = 0; tries < 8; tries++, y++) if (isValidYmd(y, m, d)) return { y, m, d };
  return null;
}

export function sortWeekdays(days: Iterable<Weekday>): Weekday[] {
  const set = new Set(days);
  return WEEK.filter((d) => set.has(d));
}
