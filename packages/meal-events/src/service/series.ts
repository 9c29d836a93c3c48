import type { Clock, HouseholdProfiles, RandomBytes } from '@svc/contracts';
import type { JobQueue } from '@svc/jobs';
import { DateTime } from 'luxon';
import { v4 as uuidV4 } from 'uuid';
import { HOUSEHOLD_BOUNDS, type HouseholdBounds, SERIES_LIMITS } from '../schemas.js';
import { addDays, MAX_AHEAD, occurrences } from '../series/rule.js';
import type { SeriesStore, StoredSeries } from '../store/index.js';
import { reminderInstant } from './reminders.js';

/** Today in the household's zone (UTC should a zone be unknown to this runtime), and the window's last day, 366 days after it. */
export function windowOf(now: Date, timeZoneId: string): { today: string; horizon: string } {
  const zone = DateTime.local({ zone: timeZoneId }).isValid ? timeZoneId : 'UTC';
  const today = DateTime.fromJSDate(now, { zone }).startOf('day');
  return { today: today.toISODate()!, horizon: today.plus({ days: SERIES_LIMITS.windowDays }).toISODate()! };
}

/** The queue of the daily window extension (created by this package's `queues` migrations). */
export const SERIES_EXTEND_QUEUE = 'meal-events-series-extend';
/** Seconds an extension run may take before another instance takes the job over. */
export const SERIES_EXTEND_EXPIRY_SECONDS = 900;

export interface SeriesExtenderOptions {
  series: SeriesStore;
  clock: Clock;
  /** The household's time zone, from @svc/households. */
  profiles: HouseholdProfiles;
  random: RandomBytes;
  /** Series per transaction (default 200). The occurrences' reminders are enqueued by their INSERT itself (meal-events' `jobSources`). */
  batch?: number;
  /** How large a household may grow (HOUSEHOLD_BOUNDS unless given): occurrences past a bound wait for room. */
  bounds?: Partial<HouseholdBounds>;
}

/**
 * Writes every series' occurrences up to 366 days after today in its household's zone. Safe to
 * run anywhere and in parallel: each batch of series is taken FOR UPDATE SKIP LOCKED (a series
 * another extender holds is left to it), and an occurrence is inserted ON CONFLICT (series_id,
 * original_date) DO NOTHING, so however many extenders run, each occurrence is written once.
 * Occurrences listed in `exceptions` (deleted on their own) are not written again.
 */
export class SeriesExtender {
  private readonly options: Required<Omit<SeriesExtenderOptions, 'bounds'>>;
  private readonly bounds: HouseholdBounds;

  constructor(options: SeriesExtenderOptions) {
    this.options = { batch: 200, ...options };
    this.bounds = { ...HOUSEHOLD_BOUNDS, ...options.bounds };
  }

  /** One pass over every series that is behind; answers the occurrences written. */
  async extendAll(): Promise<{ series: number; written: number }> {
    const { series: store, clock, profiles, random, batch } = this.options;
    const now = clock.now();
    // The latest horizon of any zone (UTC+14): series whose window reaches it are done.
    const bound = DateTime.fromJSDate(now, { zone: 'UTC' })
      .plus({ days: SERIES_LIMITS.windowDays + 1 })
      .toISODate()!;
    const zones = new Map<string, string>();
    let after: string | null = null;
    let seen = 0;
    let written = 0;
    for (;;) {
      // The batch's bookkeeping is kept only once its transaction committed (a deadlock's victim runs again).
      const batchResult = await store.transaction(async (trx) => {
        const rows = await store.behind(bound, after, batch, trx);
        if (!rows.length) return { count: 0, last: after, written: 0 };
        const writes: { seriesId: string; id: string; date: string; remindAt: Date | null }[] = [];
        const windows: { id: string; writtenThrough: string }[] = [];
        const due: { s: StoredSeries; zone: string; horizon: string; dates: string[] }[] = [];
        for (const s of rows) {
          // The dates of a series are computed synchronously (rrule): one series per turn of the
          // event loop, so requests on this instance are not held behind a whole batch.
          await new Promise<void>((resolve) => setImmediate(resolve));
          let zone = zones.get(s.householdId);
          if (zone === undefined) {
            zone = (await profiles(s.householdId).catch(() => ({ timeZoneId: 'UTC' }))).timeZoneId;
            zones.set(s.householdId, zone);
          }
          const { horizon } = windowOf(now, zone);
          if (horizon <= s.writtenThrough) continue;
          due.push({ s, zone, horizon, dates: newDates(s, horizon) });
        }
        // A household at its bounds gets what fits, earliest first; a series cut short keeps its
        // window before the first date left out, so that date is written once there is room.
        const households = [...new Set(due.filter((d) => d.dates.length).map((d) => d.s.householdId))].sort();
        const room = households.length
          ? await store.room(households, addDays(now.toISOString().slice(0, 10), -31), this.bounds, trx)
          : new Map<string, number>();
        for (const { s, zone, horizon, dates } of due) {
          const t = s.template;
          let left = room.get(s.householdId) ?? 0;
          const fits = dates.slice(0, left);
          for (const date of fits) {
            const id = uuidV4({ random: random(16) });
            writes.push({ seriesId: s.id, id, date, remindAt: reminderInstant(date, t.servingTime, t.reminderMinutes, zone) });
          }
          left -= fits.length;
          room.set(s.householdId, left);
          const through = fits.length < dates.length ? addDays(dates[fits.length]!, -1) : horizon;
          if (through > s.writtenThrough) windows.push({ id: s.id, writtenThrough: through });
        }
        // What fits was counted above under the households' locks; the INSERT's trigger holds the same bounds.
        const n = await store.writeOccurrences(writes, now, trx, this.bounds);
        await store.setWrittenThrough(windows, trx);
        return { count: rows.length, last: rows.at(-1)!.id, written: n.written };
      });
      seen += batchResult.count;
      written += batchResult.written;
      after = batchResult.last;
      if (batchResult.count < batch) return { series: seen, written };
    }
  }
}

/** The series' occurrences after its window up to `horizon`, without its exceptions. */
function newDates(s: StoredSeries, horizon: string): string[] {
  const exceptions = new Set(s.exceptions);
  const from = DateTime.fromISO(s.writtenThrough).plus({ days: 1 }).toISODate()!;
  return occurrences(s.repeat, s.template.date, from, horizon).filter((d) => !exceptions.has(d));
}

/** pg-boss cron of the extension (UTC): each day just after midnight, one job for the whole cluster. */
const SERIES_EXTEND_CRON = '5 0 * * *';

/**
 * The daily extension through @svc/jobs: pg-boss's cron sends one job a day for the cluster
 * (`schedule`), which any instance's runner takes; and an instance that starts calls `tick`, which
 * enqueues the day's extension unless one was already claimed that UTC day (a row per day, in the
 * same transaction as the job), so a day whose cron time passed with every instance down is still
 * extended. `define` registers the handler.
 */
export class SeriesScheduler {
  constructor(
    private readonly queue: JobQueue,
    private readonly extender: SeriesExtender,
    private readonly series: SeriesStore,
    private readonly clock: Clock,
  ) {}

  /** Registers the extension's handler on the queue (every instance). */
  define(): void {
    this.queue.define(SERIES_EXTEND_QUEUE, async () => void (await this.extender.extendAll()), { expireInSeconds: SERIES_EXTEND_EXPIRY_SECONDS });
  }

  /** Enqueues today's extension unless an instance already did; true when this call did. */
  async tick(): Promise<boolean> {
    const now = this.clock.now();
    const day = now.toISOString().slice(0, 10);
    return this.series.claimDay(day, now, async (trx) => {
      await this.queue.enqueue(SERIES_EXTEND_QUEUE, { day }, { trx });
    });
  }

  /** Schedules the daily extension (after `define`) and ticks once now; the queue's `stop` ends it. */
  async schedule(cron = SERIES_EXTEND_CRON): Promise<boolean> {
    await this.queue.schedule(SERIES_EXTEND_QUEUE, cron);
    return this.tick();
  }
}

export { MAX_AHEAD };
