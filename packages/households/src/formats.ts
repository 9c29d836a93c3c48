/**
 * The value formats of household settings that a JSON Schema cannot say on its own: time zones,
 * countries, language tags, times of day, and calendar dates and months in a household's zone.
 */
import ct from 'countries-and-timezones';
import { LINKS, ZONE_TAB } from './zone-countries.js';

function resolvable(id: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: id });
    return true;
  } catch {
    return false;
  }
}

/** ICU's own (canonical) time-zone ids. */
const CANONICAL_ZONES = new Set(Intl.supportedValuesOf('timeZone'));

/**
 * Every id of the server's own time-zone database: what GET /time-zones lists and exactly what a
 * household accepts. `Intl.supportedValuesOf` gives ICU's canonical ids, which are CLDR's and
 * often the old names (Asia/Calcutta, Europe/Kiev, Asia/Saigon); the current IANA names a phone
 * sends (Asia/Kolkata, Europe/Kyiv, Asia/Ho_Chi_Minh) and links such as UTC resolve in the same
 * database, so the IANA ids of countries-and-timezones that ICU resolves are added.
 *
 * Only the ids ICU does not list are tried: each try loads that zone into ICU for the life of the
 * process, so trying them all would cost RSS at start (docs/benchmarks.md, "What the bench settled").
 */
export const TIME_ZONE_IDS: readonly string[] = Object.freeze([
  ...new Set([...CANONICAL_ZONES, ...Object.keys(ct.getAllTimezones({ deprecated: true })).filter((id) => CANONICAL_ZONES.has(id) || resolvable(id))]),
]);
const TIME_ZONES = new Set(TIME_ZONE_IDS);

export function isKnownTimeZone(id: string): boolean {
  return TIME_ZONES.has(id);
}

/** The country used when a time zone belongs to no country. */
export const UNKNOWN_COUNTRY = 'ZZ';

/**
 * The zone's own country (the contract wants one country per zone), as tzdata's zone.tab gives it: Europe/London GB,
 * Europe/Berlin DE, America/Phoenix US. Not the countries that USE the zone, which is what
 * countries-and-timezones lists (London: GB, GG, IM, JE; Berlin: DE, DK, NO, SE, SJ since tzdata
 * merged zones whose clocks agree). A link (Asia/Calcutta, US/Eastern, Japan) answers like its
 * zone. `ZZ` for zones of no country: UTC, GMT, Etc/*, Factory and the POSIX-style CET, EST,
 * EST5EDT…, which tzdata now links to some city's zone only for their clocks.
 */
export function countryOfTimeZone(timeZoneId: string): string {
  return ZONE_TAB.get(timeZoneId) ?? ZONE_TAB.get(LINKS.get(timeZoneId) ?? '') ?? UNKNOWN_COUNTRY;
}

/**
 * An ISO 3166-1 alpha-2 code, upper case, or undefined when it names no country. Lower case is
 * accepted and upper-cased; `ZZ` (unknown, what a new household gets when its zone belongs to no
 * country) is accepted so a client can send back what it read.
 */
export function normaliseCountry(value: string): string | undefined {
  const code = value.trim().toUpperCase();
  if (!/^[A-Z]{2}$/.test(code)) return undefined;
  if (code === UNKNOWN_COUNTRY) return code;
  return ct.getCountry(code) ? code : undefined;
}

export const MEASUREMENT_SYSTEMS = ['Metric', 'Imperial', 'UsCustomary'] as const;
export type MeasurementSystem = (typeof MEASUREMENT_SYSTEMS)[number];
export const DRY_GOODS_MEASURES = ['Weight', 'Volume'] as const;
export type DryGoodsMeasure = (typeof DRY_GOODS_MEASURES)[number];
export const PANTRY_WEIGHTS = ['Low', 'Normal', 'High'] as const;
export type PantryWeight = (typeof PANTRY_WEIGHTS)[number];

export function measurementSystemFor(country: string): MeasurementSystem {
  return country === 'US' ? 'UsCustomary' : 'Metric';
}

export function dryGoodsMeasureFor(system: MeasurementSystem): DryGoodsMeasure {
  return system === 'UsCustomary' ? 'Volume' : 'Weight';
}

/** The canonical form of a BCP 47 tag (`en-gb` → `en-GB`), or undefined when it is not one. */
export function canonicalLanguage(tag: string): string | undefined {
  try {
    const [canonical] = Intl.getCanonicalLocales(tag.trim());
    return canonical;
  } catch {
    return undefined;
  }
}

/** `HH:mm` or `HH:mm:ss`, 24-hour (answers are always `HH:mm`). Schemas use it as `pattern`. */
export const TIME_OF_DAY_PATTERN = '^([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?$';

/** `HH:mm` of a time of day given as `HH:mm` or `HH:mm:ss` (seconds are dropped, never rounded). */
export function toHourMinute(time: string): string {
  return time.slice(0, 5);
}

const dayFormats = new Map<string, Intl.DateTimeFormat>();

function dayFormat(timeZoneId: string): Intl.DateTimeFormat {
  let f = dayFormats.get(timeZoneId);
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', { timeZone: timeZoneId, year: 'numeric', month: '2-digit', day: '2-digit' });
    dayFormats.set(timeZoneId, f);
  }
  return f;
}

/** The calendar date (`YYYY-MM-DD`) that `at` falls on in the time zone. */
export function calendarDateIn(timeZoneId: string, at: Date): string {
  const parts = Object.fromEntries(
    dayFormat(timeZoneId)
      .formatToParts(at)
      .map((p) => [p.type, p.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day}`;
}

/** The calendar month (`YYYY-MM`) that `at` falls in, in the time zone: the AI allowance's period. */
export function calendarMonthIn(timeZoneId: string, at: Date): string {
  return calendarDateIn(timeZoneId, at).slice(0, 7);
}
