import { InputError } from '@svc/http-kit';
import * as rruleModule from 'rrule';
import { type RepeatInput, type RepeatRule, SERIES_LIMITS, WEEKDAYS, type Weekday } from '../schemas.js';

// rrule ships CommonJS for Node: its named exports reach an ES module through the default export
// (tsx and Node differ in whether they also lend them as names).
const { RRule } = ((rruleModule as unknown as { default?: typeof rruleModule }).default ?? rruleModule) as typeof rruleModule;

const FREQUENCIES = { daily: RRule.DAILY, weekly: RRule.WEEKLY, monthly: RRule.MONTHLY } as const;
const RRULE_DAYS = [RRule.MO, RRule.TU, RRule.WE, RRule.TH, RRule.FR, RRule.SA, RRule.SU];

/** A calendar date (YYYY-MM-DD) as the UTC midnight rrule counts in: dates carry no zone, so DST cannot move one. */
function utc(date: string): Date {
  return new Date(`${date}T00:00:00.000Z`);
}

function ymd(d: Date): string {
  return d.toISOString().slice(0, 10);
}

/** `date` plus `days` calendar days. */
export function addDays(date: string, days: number): string {
  return ymd(new Date(utc(date).getTime() + days * 86_400_000));
}

/** Mon…Sun of a calendar date. */
export function weekdayOf(date: string): Weekday {
  return WEEKDAYS[(utc(date).getUTCDay() + 6) % 7]!;
}

function invalid(field: string, message: string): InputError {
  return new InputError('validation_failed', `The body is not valid: ${field} ${message}`, [{ field, message, in: 'body' }]);
}

/**
 * The rule as stored and answered: every member present, `byDay` Monday first for a weekly rule
 * (default the weekday of `date`) and null otherwise. 400 naming the field when `until` and
 * `count` are both given, `byDay` is given to a rule that is not weekly, or `date` does not fit.
 */
export function normalizeRule(input: RepeatInput, date: string): RepeatRule {
  const until = input.until ?? null;
  const count = input.count ?? null;
  if (until !== null && count !== null) throw invalid('repeat.count', 'must not be given together with repeat.until');
  const byDayGiven = input.byDay !== undefined && input.byDay !== null;
  if (byDayGiven && input.frequency !== 'weekly') throw invalid('repeat.byDay', 'is for a weekly rule only');
  let byDay: Weekday[] | null = null;
  if (input.frequency === 'weekly') {
    const days = new Set<Weekday>(byDayGiven ? (input.byDay as Weekday[]) : [weekdayOf(date)]);
    byDay = WEEKDAYS.filter((d) => days.has(d));
    if (!days.has(weekdayOf(date))) throw invalid('date', `is a ${weekdayOf(date)}, not one of repeat.byDay`);
  }
  if (until !== null && until < date) throw invalid('repeat.until', 'is before date: the rule makes no occurrence');
  return { frequency: input.frequency, interval: input.interval ?? 1, byDay, until, count };
}

/**
 * Every occurrence of the rule whose first is `first`, dated `from` to `to` (inclusive), earliest
 * first. `count` counts from the first occurrence whatever `from` is; `until` is inclusive; a
 * monthly rule repeats the day of the month of `first` and skips months without it (RFC 5545).
 */
export function occurrences(rule: RepeatRule, first: string, from: string, to: string): string[] {
  const end = rule.until !== null && rule.until < to ? rule.until : to;
  if (end < from || end < first) return [];
  const r = new RRule({
    freq: FREQUENCIES[rule.frequency],
    interval: rule.interval,
    dtstart: utc(first),
    wkst: RRule.MO,
    count: rule.count,
    until: rule.until === null ? null : utc(rule.until),
    byweekday: rule.byDay === null ? null : rule.byDay.map((d) => RRULE_DAYS[WEEKDAYS.indexOf(d)]!),
    bymonthday: rule.frequency === 'monthly' ? [utc(first).getUTCDate()] : null,
  });
  return r.between(utc(from < first ? first : from), utc(end), true).map(ymd);
}

/** Most occurrences one creation writes (those not dated today: a daily series may start today). */
export const MAX_AHEAD = SERIES_LIMITS.occurrencesAhead;
