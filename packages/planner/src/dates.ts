const DAY_MS = 86_400_000;

/** `date` (YYYY-MM-DD) moved by `days`. */
export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/** Whole days from `a` to `b` (both YYYY-MM-DD). */
export function daysBetween(a: string, b: string): number {
  return Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / DAY_MS);
}

/** 0 for Sunday … 6 for Saturday. */
export function weekdayIndex(date: string): number {
  return new Date(`${date}T00:00:00Z`).getUTCDay();
}

const formats = new Map<string, Intl.DateTimeFormat>();

/** The calendar date of `instant` in the IANA zone `zone` (YYYY-MM-DD). */
export function localDate(instant: Date, zone: string): string {
  let format = formats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' });
    formats.set(zone, format);
  }
  return format.format(instant);
}

/** The Monday of the week (Monday to Sunday) that holds `instant` in the zone. */
export function mondayOf(instant: Date, zone: string): string {
  const today = localDate(instant, zone);
  return addDays(today, -((weekdayIndex(today) + 6) % 7));
}
