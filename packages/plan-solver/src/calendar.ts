import type { Weekday } from './types.js';

const WEEKDAYS: readonly Weekday[] = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const DAY_MS = 86_400_000;

/** Days since 1970-01-01 of a YYYY-MM-DD date (UTC, so no zone shifts a day). */
export function dayNumber(date: string): number {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return Math.round(Date.UTC(y, m - 1, d) / DAY_MS);
}

export function dateOf(dayNum: number): string {
  return new Date(dayNum * DAY_MS).toISOString().slice(0, 10);
}

export function weekdayOf(dayNum: number): Weekday {
  // 1970-01-01 was a Thursday.
  return WEEKDAYS[(((dayNum + 4) % 7) + 7) % 7]!;
}

/** Minutes since midnight of HH:mm. */
export function minutesOf(time: string): number {
  const [h, m] = time.split(':').map(Number) as [number, number];
  return h * 60 + m;
}
