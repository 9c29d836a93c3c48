import { createHash } from 'node:crypto';
import { gunzip } from 'node:zlib';
import { ADULT_ROLES, type Caller, type Clock, type HouseholdAccess, type HouseholdProfiles, type PlannedDinners, type RandomBytes } from '@svc/contracts';
import type { Pojo } from '@svc/db';
import { assertRole, type KernelChecked, NotFoundError, ServiceUnavailableError, systemRandom } from '@svc/http-kit';
import { LRUCache } from 'lru-cache';
import { DateTime } from 'luxon';
import pLimit, { type LimitFunction } from 'p-limit';
import { type FeedDatabase, FeedRenderTimeout, type RenderedFeed, renderCompressed, renderInProcess, renderInWorker, windowPages } from '../feed-render.js';
import { FEED_TOKEN_BYTES, FeedTokenSealer, feedTokenHash, isFeedTokenForm } from '../feed-token.js';
import { vtimezone } from '../ics.js';
import type { CalendarFeed } from '../schemas.js';
import type { CalendarFeedStore, MealEventStore, StoredCalendarFeed } from '../store/index.js';

export interface CalendarFeedServiceOptions {
  feeds: CalendarFeedStore;
  /** The events the feed shows. */
  events: MealEventStore;
  clock: Clock;
  /** Membership and role of the caller, from @svc/households. */
  access: HouseholdAccess;
  /** The household's time zone, from @svc/households. */
  profiles: HouseholdProfiles;
  /** PUBLIC_BASE_URL: the origin of feed URLs, and its host the right-hand side of every UID. */
  publicBaseUrl: string;
  /** Key material for sealing stored tokens; the host derives it from SESSION_SECRET. */
  tokenSecret: string;
  /** Source of tokens and IVs; the system's unless given. */
  random?: RandomBytes;
  /** Bytes of rendered feeds this instance keeps (by ETag, gzip-compressed); 32 MiB unless given. */
  cacheBytes?: number;
  /** The current plans' dinners, from @svc/planner; left out: the feed shows events only. */
  dinners?: PlannedDinners;
  /** Render off this thread (true unless given; false renders on this thread, in slices). */
  renderInWorker?: boolean;
  /**
   * The database `events` reads (its URL and connection options): the rendering then runs in a
   * process of its own that reads the window itself over a connection of its own, and no row of
   * it reaches this process. Without it the window is read here and handed to a worker thread page
   * by page.
   */
  database?: FeedDatabase;
  /** Longest a rendering may take before it is stopped (503, `Retry-After`); 60 s unless given. */
  renderTimeoutMs?: number;
  /** The rendering's nice value (Linux, 1–19: below the event loop's priority); unset: the event loop's. */
  renderNice?: number;
  /**
   * Renderings at once on this instance (2 unless given); more wait their turn. Each is a process
   * of its own of up to ~100 MB for the largest household, so many households' feeds asked for at
   * once must not start one each.
   */
  rendersAtOnce?: number;
}

/** A feed ready to answer: its validator now, its text when asked for. */
export interface FeedAnswer {
  /** Weak ETag: the same events (and planned dinners) give the same calendar. */
  etag: string;
  /**
   * The calendar, rendered once per ETag and instance (parallel requests share one rendering), in
   * slices that hand the event loop back, then kept compressed while the cache has room.
   */
  rendered(): Promise<RenderedFeed>;
  /** The iCalendar text itself (tests; the route sends `rendered()`). */
  body(): Promise<string>;
}

/** Events the feed reads at a time (a page of the largest household's window is a few MB of rows). */
const WINDOW_PAGE = 250;

/** Days of meals the feed holds before and after today (in the household's time zone). */
export const FEED_WINDOW = { daysBefore: 31, daysAfter: 366 } as const;

const noFeed = () => new NotFoundError('not_found', 'This household has no calendar feed');
const unknownToken = () => new NotFoundError('not_found', 'No calendar feed has this address (it may have been replaced or deleted)');

/**
 * The household's calendar feed: a secret URL (a 256-bit token) that calendar apps subscribe to
 * without signing in. One feed per household; a new one retires the old at once. The token is
 * stored only as its SHA-256 (the lookup key) and sealed (so adults can read the URL again); the
 * feed is built on every request from the events of the window, so a change shows on the next
 * poll. No HTTP here.
 */
export class CalendarFeedService {
  private readonly feeds: CalendarFeedStore;
  private readonly events: MealEventStore;
  private readonly clock: Clock;
  private readonly access: HouseholdAccess;
  private readonly profiles: HouseholdProfiles;
  private readonly random: RandomBytes;
  private readonly sealer: FeedTokenSealer;
  private readonly base: string;
  private readonly uidHost: string;
  private readonly rendered: LRUCache<string, RenderedFeed>;
  /** Renderings under way, by ETag: a request for one joins it. */
  private readonly rendering = new Map<string, Promise<RenderedFeed>>();
  private readonly dinners: PlannedDinners | undefined;
  private readonly inWorker: boolean;
  private readonly renderTimeoutMs: number;
  private readonly database: FeedDatabase | undefined;
  private readonly renderNice: number | undefined;
  private readonly renderSlots: LimitFunction;

  constructor(options: CalendarFeedServiceOptions) {
    this.feeds = options.feeds;
    this.events = options.events;
    this.clock = options.clock;
    this.access = options.access;
    this.profiles = options.profiles;
    this.random = options.random ?? systemRandom;
    this.sealer = new FeedTokenSealer(options.tokenSecret);
    const base = new URL(options.publicBaseUrl);
    this.base = base.toString().replace(/\/+$/, '');
    this.uidHost = base.host;
    this.rendered = new LRUCache<string, RenderedFeed>({ maxSize: options.cacheBytes ?? 32 * 1024 * 1024, sizeCalculation: (r) => r.gzip.length || 1 });
    this.dinners = options.dinners;
    this.inWorker = options.renderInWorker ?? true;
    this.renderTimeoutMs = options.renderTimeoutMs ?? 60_000;
    this.database = options.database;
    this.renderNice = options.renderNice;
    this.renderSlots = pLimit(options.rendersAtOnce ?? 2);
  }

  private urlOf(token: string): string {
    return `${this.base}/calendar/${token}.ics`;
  }

  /** A new secret URL for the household (Owner, Adult); the previous one stops working. */
  async create(caller: Caller, householdId: string): Promise<CalendarFeed> {
    assertRole(await this.access.roleOf(caller, householdId), ADULT_ROLES);
    const token = this.random(FEED_TOKEN_BYTES).toString('base64url');
    const sealed = this.sealer.seal(householdId, token, this.random(12));
    const stored = await this.feeds.replace(householdId, feedTokenHash(token), sealed, this.clock.now());
    return { url: this.urlOf(token), createdAt: stored.createdAt };
  }

  /**
   * The current URL (Owner, Adult: the contract keeps it from Juniors); 404 when there is none.
   * A token sealed under another secret (SESSION_SECRET was rotated) cannot be shown again: that
   * is 404 too, and a POST makes a new one (the old URL keeps working until then).
   */
  async get(caller: Caller, householdId: string, loaded?: KernelChecked<Pojo | false>): Promise<CalendarFeed> {
    assertRole(await this.access.roleOf(caller, householdId), ADULT_ROLES);
    // `loaded`: the row of `calendarFeedRead` (false: none) the read kernel loaded with the caller.
    const stored = await this.feeds.get(householdId, loaded);
    const token = stored && this.sealer.open(householdId, stored.sealedToken);
    if (!stored || token === undefined) throw noFeed();
    return { url: this.urlOf(token), createdAt: stored.createdAt };
  }

  /** Retires the URL (Owner, Adult). Idempotent: without a feed there is nothing to stop. */
  async remove(caller: Caller, householdId: string): Promise<void> {
    assertRole(await this.access.roleOf(caller, householdId), ADULT_ROLES);
    await this.feeds.remove(householdId);
  }

  /** The household's feed found by hash (no secret compared), or 404 for anything not current. */
  private async feedOf(token: string): Promise<StoredCalendarFeed> {
    if (!isFeedTokenForm(token)) throw unknownToken();
    return (await this.feeds.findByTokenHash(feedTokenHash(token))) ?? Promise.reject(unknownToken());
  }

  /**
   * The iCalendar text behind a feed URL: the household's events from 31 days before today to 366
   * days after, "today" being the date in the household's time zone now, and the current plans'
   * dinners of the same days.
   *
   * Calendar apps poll, and most polls find nothing changed, while rendering the largest household
   * the bounds allow takes seconds. So the ETag is computed from the household's events list
   * version (one number, moved by PostgreSQL with every change of its events), the planned
   * dinners' version, and everything else the text depends on (zone and its VTIMEZONE, window,
   * UID host): a matching If-None-Match is answered without reading the events, and the text is
   * rendered only when asked for, once per ETag and instance (parallel requests join one
   * rendering), in slices that never hold the event loop, and kept gzip-compressed while the cache
   * has room. The ETag is weak: it promises the same events, not the same bytes across versions of
   * this service.
   */
  async ics(token: string): Promise<FeedAnswer> {
    const feed = await this.feedOf(token);
    const householdId = feed.householdId;
    const [{ timeZoneId }, eventsVersion, dinnersVersion] = await Promise.all([
      this.profiles(householdId),
      this.events.listVersion(householdId),
      this.dinners ? this.dinners.version(householdId) : null,
    ]);
    // Households only store zones of the server's own database; should one ever be unknown here, the feed still answers, in UTC.
    const zone = DateTime.local({ zone: timeZoneId }).isValid ? timeZoneId : 'UTC';
    const today = DateTime.fromJSDate(this.clock.now(), { zone }).startOf('day');
    const from = today.minus({ days: FEED_WINDOW.daysBefore }).toISODate()!;
    const to = today.plus({ days: FEED_WINDOW.daysAfter }).toISODate()!;
    const etag = `W/"${createHash('sha256')
      .update(JSON.stringify([householdId, zone, vtimezone(zone), from, to, this.uidHost, eventsVersion, dinnersVersion]))
      .digest('base64url')}"`;
    const rendered = () => {
      const cached = this.rendered.get(etag);
      if (cached) return Promise.resolve(cached);
      let pending = this.rendering.get(etag);
      if (!pending) {
        pending = this.render(householdId, zone, from, to).finally(() => this.rendering.delete(etag));
        this.rendering.set(etag, pending);
        void pending.then(
          (r) => this.rendered.set(etag, r),
          () => {},
        );
      }
      return pending;
    };
    return {
      etag,
      rendered,
      body: async () => {
        const { gzip } = await rendered();
        return new Promise<string>((resolve, reject) => gunzip(gzip, (err, text) => (err ? reject(err) : resolve(text.toString('utf8')))));
      },
    };
  }

  /**
   * Reads the window and renders it, compressing as it goes (zlib works off the event loop).
   * Read after the version: an edit in between makes the text newer than its ETag, never older,
   * so the next poll (a new ETag) simply fetches it again.
   */
  private async render(householdId: string, zone: string, from: string, to: string): Promise<RenderedFeed> {
    const dinners = this.dinners ? await this.dinners.dinners(householdId) : [];
    const inWindow = dinners.filter((d) => d.date >= from && d.date <= to);
    // The window a page at a time, each rendered as it arrives and let go. The dinners' DTSTAMP:
    // the window's first instant, so the same version gives the same text.
    const feed = { zone, uidHost: this.uidHost, dinners: inWindow, dinnerStamp: new Date(`${from}T00:00:00Z`) };
    if (!this.inWorker) return renderCompressed({ ...feed, pages: windowPages(this.events, householdId, from, to, WINDOW_PAGE) });
    const options = { timeoutMs: this.renderTimeoutMs, nice: this.renderNice };
    const database = this.database;
    try {
      return await this.renderSlots(() =>
        database
          ? renderInProcess({ ...feed, window: { database, householdId, from, to, pageSize: WINDOW_PAGE } }, options)
          : renderInWorker({ ...feed, pages: windowPages(this.events, householdId, from, to, WINDOW_PAGE) }, options),
      );
    } catch (err) {
      if (err instanceof FeedRenderTimeout) throw new ServiceUnavailableError('The calendar could not be made in time; try again later');
      throw err;
    }
  }
}
