/** The calendar date (YYYY-MM-DD) at `now` in an IANA time zone; UTC when the zone is unknown to this runtime. */
export function todayIn(timeZone: string, now: Date): string {
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
  } catch {
    return now.toISOString().slice(0, 10);
  }
  const parts = format.formatToParts(now);
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year').padStart(4, '0')}-${part('month')}-${part('day')}`;
}
