import type { ChangeResource, Clock, HouseholdAccess } from '@svc/contracts';
import { GoneError } from '@svc/http-kit';
import type { JobQueue } from '@svc/jobs';
import type { ChangesStore } from './store.js';

/** Deletions are kept this long; a cursor from before the oldest forgotten one answers 410. */
export const DELETIONS_KEPT_MS = 90 * 24 * 60 * 60 * 1000;
/** The queue of the daily purge of old deletions (created by `queues`). */
export const CHANGES_PURGE_QUEUE = 'changes-purge';

export interface ChangeItem {
  resource: ChangeResource;
  id: string;
  change: 'upsert' | 'delete';
  at: string;
  value: unknown;
}

export interface ChangesAnswer {
  items: ChangeItem[];
  nextCursor: string;
}

export interface ChangesServiceOptions {
  /** Made with every kind's `ChangeValueRead` (the owning packages' declared reads): it reads each upsert's value with its page. */
  store: ChangesStore;
  access: HouseholdAccess;
  clock: Clock;
}

/** GET …/changes: any member; values read with the page, by the owning packages' declared reads. */
export class ChangesService {
  constructor(private readonly options: ChangesServiceOptions) {}

  /**
   * One page: the caller's membership (from the session's statement, which loads the caller's
   * memberships), then the page with its values in one statement.
   */
  async list(userId: string, householdId: string, since: string | undefined, limit: number): Promise<ChangesAnswer> {
    const { store, access } = this.options;
    await access.roleOf(userId, householdId);
    const page = await store.page(householdId, since ?? '0', limit);
    if (since !== undefined && BigInt(since) < BigInt(page.purgedThrough))
      throw new GoneError('cursor_expired', 'Deletions after this cursor were forgotten (kept 90 days): read everything again, without since');
    const items: ChangeItem[] = [];
    for (const r of page.rows) {
      if (r.change === 'delete') {
        items.push({ resource: r.resource, id: r.id, change: 'delete', at: r.at, value: null });
        continue;
      }
      // No row (not possible within the page's one snapshot, kept all the same): its deletion comes on a later page.
      if (r.value === undefined) continue;
      items.push({ resource: r.resource, id: r.id, change: 'upsert', at: r.at, value: r.value });
    }
    const lastRow = page.rows.at(-1);
    const nextCursor = lastRow ? lastRow.position : (since ?? page.last);
    return { items, nextCursor };
  }

  /** Forgets deletions older than 90 days (the purge job's work). */
  purge(): Promise<number> {
    return this.options.store.purgeDeletions(new Date(this.options.clock.now().getTime() - DELETIONS_KEPT_MS));
  }
}

/** The daily purge through the job queue: every instance enqueues now and then (the purge is idempotent), any instance runs it. */
export class ChangesPurgeScheduler {
  private timer: NodeJS.Timeout | undefined;

  /** `alsoPurge`: other housekeeping of the same rhythm the host hands in (the Idempotency-Keys past their 24 h). */
  constructor(
    private readonly queue: JobQueue,
    private readonly service: ChangesService,
    private readonly alsoPurge: readonly (() => Promise<unknown>)[] = [],
  ) {}

  define(): void {
    this.queue.define(
      CHANGES_PURGE_QUEUE,
      async () => {
        await this.service.purge();
        for (const purge of this.alsoPurge) await purge();
      },
      { expireInSeconds: 600 },
    );
  }

  tick(): Promise<string> {
    return this.queue.enqueue(CHANGES_PURGE_QUEUE, {});
  }

  start(everyMs = 6 * 3_600_000, onError: (err: unknown) => void = () => {}): void {
    const run = () => void this.tick().catch(onError);
    run();
    this.timer = setInterval(run, everyMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
