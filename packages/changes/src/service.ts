import type { Caller, ChangeResource, Clock, HouseholdAccess } from '@svc/contracts';
import { VersionedAnswers } from '@svc/db';
import { GoneError, type KernelChecked } from '@svc/http-kit';
import type { JobQueue } from '@svc/jobs';
import { ChangesCursor } from './cursor.js';
import type { ChangesStore } from './store.js';

/** Deletions are kept this long; a cursor from before the oldest forgotten one answers 410. */
export const DELETIONS_KEPT_MS = 90 * 24 * 60 * 60 * 1000;
/** The queue of the daily purge of old deletions (created by `queues`). */
export const CHANGES_PURGE_QUEUE = 'changes-purge';
/** Rendered pages kept per instance by default (their UTF-8 bytes): some 80 pages of 100 events. */
export const DEFAULT_CHANGES_PAGE_CACHE_BYTES = 4 * 1024 * 1024;

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

/** A ChangesAnswer as the UTF-8 bytes of the JSON the route sends (encoded once, sent as they are), with their length. */
export interface RenderedChanges {
  readonly body: Buffer;
  readonly bytes: number;
}

export interface ChangesServiceOptions {
  /** Made with every kind's `ChangeValueRead` (the owning packages' declared reads): it reads each upsert's value with its page. */
  store: ChangesStore;
  access: HouseholdAccess;
  clock: Clock;
  /** Signs the cursors (`since`, `nextCursor`) to the household they were handed out for. */
  cursorSecret: string;
  /** Rendered pages kept, by household, position and limit, under the counter version they were read at; 0 keeps none. */
  pageCacheBytes?: number;
}

function rendered(answer: ChangesAnswer): RenderedChanges {
  const body = Buffer.from(JSON.stringify(answer));
  return { body, bytes: body.length };
}

/** The answer of a poll with nothing new: `since` is a cursor that held (`<digits>.<base64url>`), JSON as it is. */
function nothingNew(since: string): RenderedChanges {
  const body = Buffer.from(`{"items":[],"nextCursor":"${since}"}`);
  return { body, bytes: body.length };
}

/** The counter's `last` in a version `last.purgedThrough` ("0": none yet). */
function lastOf(version: string): bigint {
  const dot = version.indexOf('.');
  return BigInt(dot < 0 ? version : version.slice(0, dot));
}

/** GET …/changes: any member; values read with the page, by the owning packages' declared reads. */
export class ChangesService {
  private readonly cursors: ChangesCursor;
  private readonly pages: VersionedAnswers<RenderedChanges>;

  constructor(private readonly options: ChangesServiceOptions) {
    this.cursors = new ChangesCursor(options.cursorSecret);
    this.pages = new VersionedAnswers(options.pageCacheBytes ?? DEFAULT_CHANGES_PAGE_CACHE_BYTES, (page) => page.bytes);
  }

  /**
   * One page, as the JSON text of ChangesResponse: the caller's membership (from the session's
   * statement, which loads the caller's memberships), the cursor (signed for this household), then
   * the page with its values in one statement. `loaded`: the household counter's version
   * `changesRead` loaded with the caller. With it, a poll with nothing new (`since` at the last
   * position) is answered without a statement, and a page rendered before at that version is
   * answered again (every recorded change and every purge move the version in the writing
   * transaction, whichever instance or script wrote).
   */
  async list(
    caller: Caller,
    householdId: string,
    since: string | undefined,
    limit: number,
    loaded?: KernelChecked<{ version: string }>,
  ): Promise<RenderedChanges> {
    const { store, access } = this.options;
    await access.roleOf(caller, householdId);
    const position = since === undefined ? '0' : this.cursors.decode(householdId, since);
    const version = loaded?.version;
    const key = `${householdId}\n${since === undefined ? 'start' : position}\n${limit}`;
    if (typeof version === 'string') {
      // A signed cursor is never past its household's last position: at it, nothing is new.
      if (since !== undefined && BigInt(position) >= lastOf(version)) return nothingNew(since);
      const held = this.pages.get(key, version);
      if (held) return held;
    }
    const page = await store.page(householdId, position, limit);
    if (since !== undefined && BigInt(position) < BigInt(page.purgedThrough))
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
    const nextCursor = lastRow ? this.cursors.encode(householdId, lastRow.position) : (since ?? this.cursors.encode(householdId, page.last));
    const answer = rendered({ items, nextCursor });
    if (page.keepable) this.pages.set(key, page.version, answer);
    return answer;
  }

  /** Forgets deletions older than 90 days (the purge job's work). */
  purge(): Promise<number> {
    return this.options.store.purgeDeletions(new Date(this.options.clock.now().getTime() - DELETIONS_KEPT_MS));
  }
}

/** pg-boss cron of the purge (UTC): every 6 hours, one job for the whole cluster. */
const CHANGES_PURGE_CRON = '7 */6 * * *';

/** The purge through the job queue: scheduled with pg-boss's cron (`JobQueue.schedule`), any instance runs it. */
export class ChangesPurgeScheduler {
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

  /** Schedules the purge (after `define`, before or after the queue's `start`); the queue's `stop` ends it. */
  schedule(cron = CHANGES_PURGE_CRON): Promise<void> {
    return this.queue.schedule(CHANGES_PURGE_QUEUE, cron);
  }
}
