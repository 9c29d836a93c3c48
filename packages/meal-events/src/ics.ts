import type { PlannedDinner } from '@svc/contracts';
import ical, { ICalEvent } from 'ical-generator';
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

/**
 * Lines folded at 75 octets (RFC 5545 3.1), exactly as ical-generator's `foldLines` folds them (a
 * test holds the two equal): by UTF-8 length, never inside a character (nor a surrogate pair), a
 * continuation line starting with one space. Its `foldLines` makes a TextEncoder per character,
 * which is most of the cost of a large feed; this counts the bytes from the code unit.
 */
export function foldLines(input: string): string {
  const lines = input.split('\r\n');
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n]!;
    // ASCII at most 74 long: nothing to fold (the common line).
    if (line.length <= 74 && Buffer.byteLength(line) === line.length) continue;
    let out = '';
    let from = 0;
    let c = 0;
    for (let i = 0; i < line.length; i++) {
      const start = i;
      const code = line.charCodeAt(i);
      let size: number;
      if (code < 0x80) size = 1;
      else if (code < 0x800) size = 2;
      else if (code >= 0xd800 && code <= 0xdbff && i + 1 < line.length) {
        // A high surrogate takes the next code unit with it, as ical-generator does (4 bytes for a pair, 3 for a lone low half after it).
        const next = line.charCodeAt(++i);
        size = next >= 0xdc00 && next <= 0xdfff ? 4 : 3 + (next < 0x80 ? 1 : next < 0x800 ? 2 : 3);
      } else size = 3;
      c += size;
      if (c > 74) {
        out += `${line.slice(from, start)}\r\n `;
        from = start;
        c = size;
      }
    }
    lines[n] = out + line.slice(from);
  }
  return lines.join('\r\n');
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

/** What every VEVENT of one feed shares. */
interface FeedContext {
  calendar: ReturnType<typeof ical>;
  zone: string;
  uidHost: string;
  /** The zone for DTSTART;TZID, or null (no VTIMEZONE known: the times are written in UTC, still the right instants). */
  timezone: string | null;
}

/** The calendar's first part (its properties, and the zone's VTIMEZONE when `used`: something is in the feed) and what its events share. */
function feedHead(zone: string, uidHost: string, used: boolean): { head: string; context: FeedContext } {
  const zoneBlock = vtimezone(zone);
  // The calendar itself gets no zone name: ical-generator would then write DTSTAMP, CREATED and
  // LAST-MODIFIED as local times (RFC 5545 wants them in UTC), and TIMEZONE-ID after the VTIMEZONE.
  const calendar = ical({
    prodId: '//Household meal planner//Calendar feed//EN',
    name: 'Meals',
    scale: 'GREGORIAN',
    // No `ttl`: ical-generator writes REFRESH-INTERVAL after the VTIMEZONE, and RFC 5545 wants every
    // calendar property before the first component; apps poll subscriptions on their own schedule.
  });
  // The calendar's own text without events, up to its END; the VTIMEZONE (as ical-generator writes
  // it for a zone its events use) goes right before where the events start.
  const bare = calendar.toString();
  const block = used && zoneBlock !== null ? foldLines(`${zoneBlock.replace(/\r\n/g, '\n').replace(/\n/g, '\r\n').trim()}\r\n`) : '';
  return { head: bare.slice(0, bare.lastIndexOf('END:VCALENDAR')) + block, context: { calendar, zone, uidHost, timezone: zoneBlock ? zone : null } };
}

/** ical-generator ends the text at END:VCALENDAR; RFC 5545 ends every content line with CRLF. */
const TAIL = 'END:VCALENDAR\r\n';

function eventText(e: CalendarEvent, c: FeedContext): string {
  const participants = e.participants.map((p) => p.name).join(', ');
  return foldLines(
    new MealCalendarEvent(
      {
        id: `${e.id}@${c.uidHost}`,
        sequence: e.sequence,
        start: DateTime.fromISO(`${e.date}T${e.servingTime}`, { zone: c.zone }),
        timezone: c.timezone,
        stamp: new Date(e.updatedAt),
        created: new Date(e.createdAt),
        lastModified: new Date(e.updatedAt),
        summary: summaryOf(e),
        description: participants || null,
      },
      c.calendar,
    ).toString(),
  );
}

function dinnerText(d: PlannedDinner, stamp: Date, c: FeedContext): string {
  return foldLines(
    new MealCalendarEvent(
      {
        // One dinner a day of a plan: the plan and the date name it.
        id: `dinner-${d.planId}-${d.date}@${c.uidHost}`,
        start: DateTime.fromISO(`${d.date}T${d.servingTime}`, { zone: c.zone }),
        timezone: c.timezone,
        stamp,
        summary: d.dishName,
      },
      c.calendar,
    ).toString(),
  );
}

/**
 * The household's meals as an iCalendar object (RFC 5545): one VEVENT per meal event at its date
 * and serving time in the household's zone (`DTSTART;TZID=`), with that zone's VTIMEZONE, then one
 * per planned dinner. Every line ends in CRLF and is folded at 75 octets (by UTF-8 length, never
 * inside a character). DTSTAMP is the event's last change, not the time of the request, so the
 * same events always give the same text.
 */
export function renderFeed(input: FeedInput): string {
  const dinners = input.dinners ?? [];
  const { head, context } = feedHead(input.zone, input.uidHost, input.events.length > 0 || dinners.length > 0);
  const stamp = input.dinnerStamp ?? new Date(0);
  return head + input.events.map((e) => eventText(e, context)).join('') + dinners.map((d) => dinnerText(d, stamp, context)).join('') + TAIL;
}

/** Time the renderer works before it lets the event loop serve others (a few ms: other requests wait at most about that long). */
const SLICE_MS = 4;

/** `renderFeed`'s input with the events as pages that arrive one after another (the feed reads its window a page at a time). */
export interface FeedStreamInput extends Omit<FeedInput, 'events'> {
  pages: AsyncIterable<CalendarEvent[]>;
}

/**
 * The same text as `renderFeed`, in chunks, each page of events rendered as it arrives and let go
 * (so the heap holds one page, not the window) and the event loop handed back between slices of
 * a few milliseconds: the largest household's feed (bounded by HOUSEHOLD_BOUNDS) takes seconds of
 * CPU, and the instance keeps answering everything else meanwhile.
 */
export async function* renderFeedChunks(input: FeedStreamInput): AsyncGenerator<string> {
  const dinners = input.dinners ?? [];
  const pages = input.pages[Symbol.asyncIterator]();
  let page = await pages.next();
  // Whether anything is in the feed decides the VTIMEZONE: known from the first page.
  const { head, context } = feedHead(input.zone, input.uidHost, (!page.done && page.value.length > 0) || dinners.length > 0);
  let chunk = head;
  let since = performance.now();
  const slice = async () => {
    await new Promise<void>((resolve) => setImmediate(resolve));
    since = performance.now();
  };
  for (; !page.done; page = await pages.next()) {
    for (const e of page.value) {
      chunk += eventText(e, context);
      if (performance.now() - since >= SLICE_MS) {
        yield chunk;
        chunk = '';
        await slice();
      }
    }
    since = performance.now();
  }
  const stamp = input.dinnerStamp ?? new Date(0);
  for (const d of dinners) {
    chunk += dinnerText(d, stamp, context);
    if (performance.now() - since >= SLICE_MS) {
      yield chunk;
      chunk = '';
      await slice();
    }
  }
  yield chunk + TAIL;
}
