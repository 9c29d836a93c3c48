import { createHash } from 'node:crypto';
import type { Clock, HouseholdMemberAccounts, SendReminder } from '@svc/contracts';
import { type JobQueue, RunLater } from '@svc/jobs';
import type { Knex } from 'knex';
import { DateTime } from 'luxon';
import type { StoredParticipant } from '../store/index.js';

/** The queue of meal events' reminders (created by this package's `queues` migrations). */
export const REMINDER_QUEUE = 'meal-events-reminders';
/** Seconds a reminder run may take before another instance takes the job over. */
export const REMINDER_EXPIRE_SECONDS = 120;

/** An IANA zone this runtime knows, else UTC (as the series window does). */
export function knownZone(timeZoneId: string): string {
  return DateTime.local({ zone: timeZoneId }).isValid ? timeZoneId : 'UTC';
}

/**
 * When an event reminds: its serving time on its date in the household's zone, less `minutes`
 * (an absolute span, so a reminder across a DST change still comes that many minutes before);
 * null when it has no reminder. A serving time in a DST gap moves forward as the clocks did.
 */
export function reminderInstant(date: string, servingTime: string, minutes: number | null | undefined, zone: string): Date | null {
  if (minutes === null || minutes === undefined) return null;
  const serving = DateTime.fromISO(`${date}T${servingTime.slice(0, 5)}`, { zone: knownZone(zone) });
  return serving.minus({ minutes }).toJSDate();
}

/** A reminder job: the event and the instant it was enqueued for. */
interface ReminderJob {
  /** household id */
  h: string;
  /** event id */
  e: string;
  /** the reminder's instant, ISO: the job sends only while the event still has it */
  at: string;
}

export interface EventRemindersOptions {
  knex: Knex;
  jobs: JobQueue;
  clock: Clock;
  /** The accounts of the household's members by member id (@svc/households). */
  memberAccounts: HouseholdMemberAccounts;
  /** Sends a due reminder (@svc/push). */
  send: SendReminder;
}

/**
 * Reminders of meal events (decisions.md §8): one job per event and instant on @svc/jobs' queue,
 * enqueued by the statement that writes the instant (a trigger @svc/jobs installs from this
 * package's `jobSources`). A change of the event
 * writes a new instant (and enqueues it); the job of the old instant finds the event changed (or
 * gone) when it runs and sends nothing, so a moved or cancelled reminder needs no job removed.
 * A reminder whose instant has passed when it is written is not enqueued.
 */
export class EventReminders {
  constructor(private readonly options: EventRemindersOptions) {}

  /**
   * The household's time zone was written (inside `trx`): every pending reminder (instant still
   * ahead of `now`) is derived again from its event's local date and serving time in `timeZoneId`,
   * in one UPDATE; the moved ones get their new jobs from that UPDATE itself (`jobSources`:
   * `onUpdateOf: ['reminder_at']`) and their old jobs find the instant changed and send nothing. A
   * reminder the move puts in the past is dropped (`reminder_at` null), not sent late. Unchanged
   * instants (the same zone written again) are not touched.
   */
  async zoneWritten(householdId: string, timeZoneId: string, now: Date, trx: Knex.Transaction): Promise<void> {
    const zone = knownZone(timeZoneId);
    const instant = `(((date + serving_time) at time zone ?) - make_interval(mins => reminder_minutes))`;
    await trx.raw(
      `update meal_events set reminder_at = case when ${instant} > ?::timestamptz then ${instant} end
        where household_id = ?::uuid and reminder_at > ?::timestamptz and reminder_minutes is not null
          and reminder_at is distinct from ${instant}`,
      [zone, now, zone, householdId, now, zone],
    );
  }

  /** Registers the reminder handler on the queue (every instance). */
  define(): void {
    this.options.jobs.define<ReminderJob>(REMINDER_QUEUE, (job) => this.run(job), { expireInSeconds: REMINDER_EXPIRE_SECONDS });
  }

  /**
   * A reminder due: sent only while the event still reminds at this instant. Recipients: the
   * participants who are members with an account; when the event names no member (guests only, or
   * members without accounts), every member with an account; participants whose member has left are
   * skipped (and do not make the event one that names no member).
   */
  private async run(job: ReminderJob): Promise<void> {
    const { rows } = await this.options.knex.raw(
      `select to_char(date, 'YYYY-MM-DD') as date, to_char(serving_time, 'HH24:MI') as "servingTime", event_type as "eventType",
              reminder_minutes as minutes, participants
         from meal_events where household_id = ?::uuid and id = ?::uuid and reminder_at = ?::timestamptz`,
      [job.h, job.e, job.at],
    );
    const event = rows[0] as { date: string; servingTime: string; eventType: string; minutes: number; participants: StoredParticipant[] } | undefined;
    if (!event) return; // changed, deleted, or its reminder removed since
    const at = new Date(job.at);
    const early = at.getTime() - this.options.clock.now().getTime();
    if (early > 0) throw new RunLater(early);
    const accounts = await this.options.memberAccounts(job.h);
    const linked = event.participants.filter((p) => p.memberId !== null).map((p) => p.memberId!.toLowerCase());
    let userIds = [...new Set(linked.flatMap((m) => (accounts.has(m) ? [accounts.get(m)!] : [])))];
    const departed = event.participants.some((p) => p.memberId === null && p.formerMemberId);
    if (!userIds.length && !departed) userIds = [...new Set(accounts.values())];
    if (!userIds.length) return;
    await this.options.send({
      id: reminderNotificationId(job.e, job.at),
      householdId: job.h,
      eventId: job.e,
      date: event.date,
      servingTime: event.servingTime,
      eventType: event.eventType,
      minutes: event.minutes,
      userIds,
      at,
    });
  }
}

/** The notification id of one reminder (event and instant), the same on every run: a rerun stores and sends nothing twice. */
export function reminderNotificationId(eventId: string, at: string): string {
  const b = createHash('sha256')
    .update(`meal-event-reminder\u0000${eventId}\u0000${new Date(at).toISOString()}`)
    .digest();
  b[6] = (b[6]! & 0x0f) | 0x50;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = b.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
