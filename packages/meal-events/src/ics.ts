import type { PlannedDinner } from '@svc/contracts';
import ical, { foldLines, ICalEvent } from 'ical-generator';
import { DateTime } from 'luxon';
import { tzlib_get_ical_block } from 'timezones-ical-library';
import type { CalendarEvent } from './store/index.js';

/**
 * The VTIMEZONE of an IANA zone, from timezones-ical-library (kept up to date with the IANA
 * database), or null for a zone it does not know. The library answers a linked zone with its
 * canonical zone's block (Europe/Oslo → Europe/Berlin: the same rules since 1970, which is where
 * the block starts); the TZID is renamed to the zone asked for, so that `DTSTART;TZID=` and the
 * VTIMEZONE name the household's own zone, which is also what a calendar app shows.
 */
export function vtimezone(zone: string): string | null {
  // The library logs to the console for a zone it does not know; ask only for zones Intl knows too.
  if (!isKnownZone(zone)) return null;
  const block = tzlib_get_ical_block(zone);
  if (!Array.isArray(block) || typeof block[0] !== 'string' || !block[0].includes('BEGIN:VTIMEZONE')) return null;
  const [text, tzidLine] = block as [string, string];
  const canonical = tzidLine.replace(/^TZID=/, '');
  if (canonical === zone) return text;
  return text.replace(/^TZID:.*$/m, `TZID:${zone}`).replace(/^X-LIC-LOCATION:.*$/m, `X-LIC-LOCATION:${zone}`);
}

function isKnownZone(zone: string): boolean {
  return DateTime.local({ zone }).isValid;
}

/**
 * ical-generator writes an end as DTEND only; the contract gives each meal `DURATION:PT1H` (an hour
 * from the serving time, whatever the clocks do that night). The event's own lines are not folded
 * yet when this runs (the calendar folds the whole text once), so the line goes right after DTSTART.
 */
class MealCalendarEvent extends ICalEvent {
  override toString(): string {
    return super.toString().replace(/^(DTSTART[^\r\n]*\r\n)/m, '$1DURATION:PT1H\r\n');
  }
}

/** The event type, then the first line of the notes when there is one. */
export function summaryOf(event: Pick<CalendarEvent, 'eventType' | 'notes'>): string {
  const firstLine = event.notes.split(/\r\n|\r|\n/, 1)[0]?.trim() ?? '';
  return firstLine ? `${event.eventType}: ${firstLine}` : event.eventType;
}

export interface FeedInput {
  /** The household's IANA time zone. */
  zone: string;
  /** Host part of PUBLIC_BASE_URL: the right-hand side of every UID. */
  uidHost: string;
  events: CalendarEvent[];
  /** The current plans' dinners (from @svc/planner's PlannedDinners), after the events; none when left out. */
  dinners?: PlannedDinner[];
  /** DTSTAMP of the dinners (they carry no change time of their own): the same for the same feed version. */
  dinnerStamp?: Date;
}

/** The calendar's first part (its properties and the zone's VTIMEZONE when anything uses it), each event's text, and its end. */
function feedParts(input: FeedInput): { head: string; items: Iterable<string>; tail: string } {
  const zoneBlock = vtimezone(input.zone);
  // The calendar itself gets no zone name: ical-generator would then write DTSTAMP, CREATED and
  // LAST-MODIFIED as local times (RFC 5545 wants them in UTC), and TIMEZONE-ID after the VTIMEZONE.
  const calendar = ical({
    prodId: '//Household meal planner//Calendar feed//EN',
    name: 'Meals',
    scale: 'GREGORIAN',
    // No `ttl`: ical-generator writes REFRESH-INTERVAL after the VTIMEZONE, and RFC 5545 wants every
    // calendar property before the first component; apps poll subscriptions on their own schedule.
  });
  const dinners = input.dinners ?? [];
  // The calendar's own text without events, up to its END; the VTIMEZONE (as ical-generator writes
  // it for a zone its events use) goes right before where the events start.
  const bare = calendar.toString();
  const end = bare.lastIndexOf('END:VCALENDAR');
  const used = zoneBlock !== null && (input.events.length > 0 || dinners.length > 0);
  const head = bare.slice(0, end) + (used ? foldLines(`${zoneBlock.replace(/\r\n/g, '\n').replace(/\n/g, '\r\n').trim()}\r\n`) : '');
  // Without a VTIMEZONE (a zone the library lacks) the times are written in UTC, still the right instants.
  const timezone = zoneBlock ? input.zone : null;
  function* items(): Iterable<string> {
    for (const e of input.events) {
      const participants = e.participants.map((p) => p.name).join(', ');
      yield foldLines(
        new MealCalendarEvent(
          {
            id: `${e.id}@${input.uidHost}`,
            sequence: e.sequence,
            start: DateTime.fromISO(`${e.date}T${e.servingTime}`, { zone: input.zone }),
            timezone,
            stamp: new Date(e.updatedAt),
            created: new Date(e.createdAt),
            lastModified: new Date(e.updatedAt),
            summary: summaryOf(e),
            description: participants || null,
          },
          calendar,
        ).toString(),
      );
    }
    const stamp = input.dinnerStamp ?? new Date(0);
    for (const d of dinners) {
      yield foldLines(
        new MealCalendarEvent(
          {
            // One dinner a day of a plan: the plan and the date name it.
            id: `dinner-${d.planId}-${d.date}@${input.uidHost}`,
            start: DateTime.fromISO(`${d.date}T${d.servingTime}`, { zone: input.zone }),
            timezone,
            stamp,
            summary: d.dishName,
          },
          calendar,
        ).toString(),
      );
    }
  }
  // ical-generator ends the text at END:VCALENDAR; RFC 5545 ends every content line with CRLF.
  return { head, items: items(), tail: 'END:VCALENDAR\r\n' };
}

/**
 * The household's meals as an iCalendar object (RFC 5545): one VEVENT per meal event at its date
 * and serving time in the household's zone (`DTSTART;TZID=`), with that zone's VTIMEZONE, then one
 * per planned dinner. Every line ends in CRLF and is folded at 75 octets (ical-generator's
 * `foldLines`: by UTF-8 length, never inside a character). DTSTAMP is the event's last change, not
 * the time of the request, so the same events always give the same text.
 */
export function renderFeed(input: FeedInput): string {
  const { head, items, tail } = feedParts(input);
  return head + [...items].join('') + tail;
}

/** Time the renderer works before it lets the event loop serve others (a few ms: other requests wait at most that long). */
const SLICE_MS = 4;

/**
 * The same text as `renderFeed`, in chunks, handing the event loop back between slices of a few
 * milliseconds: the largest household's feed (bounded by HOUSEHOLD_BOUNDS) takes seconds of CPU,
 * and the instance keeps answering everything else meanwhile.
 */
export async function* renderFeedChunks(input: FeedInput): AsyncGenerator<string> {
  const { head, items, tail } = feedParts(input);
  let chunk = head;
  let since = performance.now();
  for (const item of items) {
    chunk += item;
    if (performance.now() - since >= SLICE_MS) {
      yield chunk;
      chunk = '';
      await new Promise<void>((resolve) => setImmediate(resolve));
      since = performance.now();
    }
  }
  yield chunk + tail;
}
