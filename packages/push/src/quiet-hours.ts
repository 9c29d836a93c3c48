/** A phone's quiet hours: local times of day (`HH:mm`) in the zone of the household a notification is about. */
export interface QuietHours {
  start: string;
  end: string;
}

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** Minutes past local midnight of `at` in `zone` (fractional: seconds and milliseconds count). */
function localMinutes(at: Date, zone: string): number {
  const parts = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' }).formatToParts(at);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return get('hour') * 60 + get('minute') + get('second') / 60 + at.getUTCMilliseconds() / 60_000;
}

/**
 * How long (ms) a notification must wait at `now` for the quiet hours to end; 0 outside them. A
 * window may cross midnight (22:00–07:00). The end is found as a local time of day, so a change
 * of UTC offset (DST) inside the window moves it with the clock on the wall.
 */
export function quietWaitMs(quiet: QuietHours | null | undefined, zone: string, now: Date): number {
  if (!quiet) return 0;
  const start = minutesOf(quiet.start);
  const end = minutesOf(quiet.end);
  if (start === end) return 0;
  const m = localMinutes(now, zone);
  const inside = start < end ? m >= start && m < end : m >= start || m < end;
  if (!inside) return 0;
  // The wall-clock distance to the end, then corrected by what the zone's clock says at that instant (DST).
  let at = now.getTime() + ((end - m + 1440) % 1440) * 60_000;
  for (let i = 0; i < 2; i++) {
    const off = ((end - localMinutes(new Date(at), zone) + 720 + 1440) % 1440) - 720;
    if (Math.abs(off) < 1 / 120) break;
    at += off * 60_000;
  }
  return Math.max(0, Math.round(at - now.getTime()));
}
