import { createHash, randomUUID } from 'node:crypto';
import type {
  AccountDeletionStep,
  Clock,
  HouseholdAccountIds,
  HouseholdNews,
  HouseholdNewsEvent,
  HouseholdProfiles,
  SendReminder,
  Transaction,
} from '@svc/contracts';
import { type FieldIssue, InputError, isUuid, NotFoundError } from '@svc/http-kit';
import { GiveUp, type JobContext, type JobQueue, RetryLater, RunLater } from '@svc/jobs';
import type { Knex } from 'knex';
import { DELIVERY_EXPIRE_SECONDS, DELIVERY_QUEUE, DIGEST_QUEUE, FANOUT_QUEUE, NEWS_QUEUE } from './migrations.js';
import { type DeliveryOutcome, type DeliveryRow, type FanOutRow, NotificationStore, SWITCH_COLUMN } from './notification-store.js';
import type { PushLogger } from './providers/file.js';
import type { PushMessage, PushProvider } from './providers/types.js';
import { type QuietHours, quietWaitMs } from './quiet-hours.js';
import type { PushKind } from './schemas.js';
import { fill, newsText, reminderText, TEXTS, textLanguage } from './texts.js';

/** What the inbox keeps, and for how long. */
export const INBOX_DAYS = 30;
const DAY_MS = 86_400_000;

/** The limits of a notification (characters for title and body, bytes of JSON for data). */
export const NOTIFICATION_LIMITS = { title: 100, body: 500, dataBytes: 2048 } as const;

/** A notification to a household's people. */
export interface NewNotification {
  kind: PushKind;
  title: string;
  body: string;
  data?: Record<string, unknown>;
  /** This person is not told (the one who acted). */
  excludeUserId?: string;
}

/** An inbox item, as GET /api/v1/me/notifications answers it. */
export interface InboxItem {
  id: string;
  householdId: string;
  kind: PushKind;
  title: string;
  body: string;
  data: Record<string, unknown>;
  createdAt: string;
  readAt: string | null;
}

/** The providers by the name a device stores (`fcm`, `apns`); a device whose provider is not here is never delivered to. */
export type PushProviders = Partial<Record<'fcm' | 'apns', PushProvider>>;

export interface NotificationServiceOptions {
  knex: Knex;
  clock: Clock;
  jobs: JobQueue;
  /** The accounts of a household's members (@svc/households). */
  accountIds: HouseholdAccountIds;
  /** A household's language and zone; throws NotFoundError for an unknown household (@svc/households). */
  profiles: HouseholdProfiles;
  providers: PushProviders;
  logger: PushLogger;
  /** Ids of new notifications (default crypto.randomUUID). */
  newId?: () => string;
  /** Display names of accounts (@svc/accounts' directory), for householdNews; none: "someone". */
  displayNames?: (userIds: string[]) => Promise<Map<string, string>>;
  /** A household's name, the title of its householdNews (undefined: the household is gone). */
  householdName?: (householdId: string) => Promise<string | undefined>;
}

/** householdNews to one phone: one message at once, then at most one more per minute. */
export const NEWS_BATCH_MS = 60_000;

interface NewsJob {
  e: HouseholdNewsEvent;
  /** the notification's id, made when the change was written (a rerun finds it stored and stops) */
  n: string;
  /** when the change was written: the notification's time */
  at: string;
}

interface DigestJob {
  t: string;
}

/** A fan-out job: one notification to every phone of its people that wants its kind. */
interface FanOutJob {
  /** notification id */
  n: string;
  /** a retry: only these phones (token hashes, hex), the ones a provider failed */
  t?: string[];
}

/** A delivery job: one notification to one phone (householdNews, and a phone held by its quiet hours). */
interface DeliveryJob {
  /** notification id */
  n: string;
  /** the device's token hash, hex */
  t: string;
}

/** The message of a notification to one phone. */
function messageOf(row: { token: string; platform: 'ios' | 'android'; kind: PushKind; household_id: string; [column: string]: unknown }): PushMessage {
  return {
    id: String(row.id),
    token: row.token,
    platform: row.platform,
    kind: row.kind,
    householdId: row.household_id,
    title: String(row.title),
    body: String(row.body),
    data: (row.data ?? {}) as Record<string, unknown>,
  };
}

/**
 * The inbox's page cursor: the position of the page's last item and a digest of the account whose
 * inbox it came from, so a cursor works only on that person's list (decisions.md §2: anything else
 * is 400 `invalid_cursor`). It needs no secret: a person can only ever read their own inbox, and
 * every part is checked before it reaches SQL.
 */
function accountTag(userId: string): string {
  return createHash('sha256').update(`@svc/push inbox cursor\n${userId.toLowerCase()}`).digest('base64url').slice(0, 16);
}

function encodeCursor(userId: string, createdAt: string, id: string): string {
  return Buffer.from(JSON.stringify([1, createdAt, id, accountTag(userId)])).toString('base64url');
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function decodeCursor(userId: string, cursor: string): [string, string] {
  try {
    if (/^[A-Za-z0-9_-]+$/.test(cursor)) {
      const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
      if (Array.isArray(value) && value.length === 4 && value[0] === 1 && typeof value[1] === 'string' && ISO_INSTANT.test(value[1]))
        if (!Number.isNaN(Date.parse(value[1])) && isUuid(String(value[2])) && value[3] === accountTag(userId)) return [value[1], String(value[2])];
    }
  } catch {
    /* below */
  }
  throw new InputError('invalid_cursor', 'The cursor was not handed out by this service for this list', [
    { field: 'cursor', in: 'query', message: 'is not a cursor this service handed out for this list' },
  ]);
}

/**
 * What callers ask for within one turn of the event loop, served by one call (one statement): the
 * runner starts a fetched batch of jobs at once, and provider answers arrive together.
 */
class PerTurn<K, R> {
  private pending: { keys: K[]; result: Promise<R> } | undefined;
  constructor(private readonly run: (keys: K[]) => Promise<R>) {}

  add(key: K): Promise<R> {
    let batch = this.pending;
    if (!batch) {
      const keys: K[] = [];
      const result = new Promise<R>((resolve, reject) => {
        setImmediate(() => {
          this.pending = undefined;
          this.run(keys).then(resolve, reject);
        });
      });
      batch = { keys, result };
      this.pending = batch;
    }
    batch.keys.push(key);
    return batch.result;
  }
}

/**
 * Notifications: who gets one (every member with an account but the one excluded), the inbox
 * that keeps it per person for 30 days, and the delivery to each phone that wants its kind — one
 * fan-out job per notification on @svc/jobs' queue (householdNews: one job per phone, for its
 * batching), enqueued in the transaction that stores the notification, so a notification is
 * either stored and on its way to every phone or not at all. The fan-out records each phone it is
 * done with (push_deliveries), so a run again never sends one phone the notification twice.
 */
export class NotificationService {
  private readonly rows: NotificationStore;
  private readonly clock: Clock;
  private readonly jobs: JobQueue;
  private readonly providers: PushProviders;
  private readonly logger: PushLogger;
  private readonly newId: () => string;
  private readonly deliveryReads: PerTurn<DeliveryJob, Map<string, DeliveryRow>>;
  private readonly fanOutReads: PerTurn<string, Map<string, FanOutRow[]>>;
  private readonly records: PerTurn<{ n: string; t: string; outcome: DeliveryOutcome }, void>;

  constructor(private readonly options: NotificationServiceOptions) {
    this.rows = new NotificationStore(options.knex);
    this.clock = options.clock;
    this.jobs = options.jobs;
    this.providers = options.providers;
    this.logger = options.logger;
    this.newId = options.newId ?? randomUUID;
    this.deliveryReads = new PerTurn((keys) => this.rows.deliveries(keys));
    this.fanOutReads = new PerTurn((ids) => this.rows.fanOutPhones(ids));
    this.records = new PerTurn((done) => this.rows.recordDeliveries(done));
    this.jobs.define<FanOutJob>(FANOUT_QUEUE, (job, context) => this.fanOut(job, context), { expireInSeconds: DELIVERY_EXPIRE_SECONDS });
    this.jobs.define<DeliveryJob>(DELIVERY_QUEUE, (job, context) => this.deliver(job, context), { expireInSeconds: DELIVERY_EXPIRE_SECONDS });
    this.jobs.define<NewsJob>(NEWS_QUEUE, (job) => this.announce(job), { expireInSeconds: DELIVERY_EXPIRE_SECONDS });
    this.jobs.define<DigestJob>(DIGEST_QUEUE, (job, context) => this.digest(job, context), { expireInSeconds: DELIVERY_EXPIRE_SECONDS });
  }

  /**
   * The householdNews capability (@svc/contracts' HouseholdNews) @svc/households calls inside the
   * transaction of a change: one INSERT (a job); the notification is written and sent after the
   * commit, to the members as they are then (a removed member is no longer told). An event with an
   * `id` is the notification's id: the same news told again is stored and sent once. Without `trx`
   * (a job after the commit) the notification is written and its fan-out enqueued at once.
   */
  readonly news: HouseholdNews = async ({ id, ...event }, trx) => {
    const n = id !== undefined && isUuid(id) ? id.toLowerCase() : this.newId();
    const job: NewsJob = { e: event, n, at: this.clock.now().toISOString() };
    // No transaction: the caller is a job after the commit (a rename's), so the news is written now, not by another job.
    if (!trx) return this.announce(job);
    await this.jobs.enqueue<NewsJob>(NEWS_QUEUE, job, { trx: trx as Knex.Transaction });
  };

  /**
   * The SendReminder capability (@svc/contracts) @svc/meal-events' reminder job calls when a meal
   * event's reminder is due: a `reminders` notification (in the household's language) for those of
   * `userIds` who are still members with an account, in their inboxes and on its way to their
   * phones that want reminders (quiet hours do not hold it). The same reminder sent again (its job
   * run twice) finds its notification stored and sends nothing more. A household gone: nothing.
   */
  readonly remind: SendReminder = async (reminder) => {
    let language: string;
    try {
      language = (await this.options.profiles(reminder.householdId)).preferredLanguage;
    } catch (err) {
      if (err instanceof NotFoundError) return;
      throw err;
    }
    const text = reminderText(textLanguage(language), reminder);
    await this.send(
      reminder.householdId,
      {
        kind: 'reminders',
        ...text,
        data: { eventId: reminder.eventId, date: reminder.date, servingTime: reminder.servingTime, reminderMinutes: reminder.minutes },
      },
      undefined,
      reminder.id,
      this.clock.now(),
      reminder.userIds,
    );
  };

  /** Writes the news of one change (in the household's language) and sends it like any notification. */
  private async announce(job: NewsJob): Promise<void> {
    const { e } = job;
    let language: string;
    try {
      language = (await this.options.profiles(e.householdId)).preferredLanguage;
    } catch (err) {
      if (err instanceof NotFoundError) return; // the household is gone: nobody to tell
      throw err;
    }
    const lang = textLanguage(language);
    const ids = [e.actorUserId, e.subjectUserId].filter((id): id is string => typeof id === 'string');
    const names = (await this.options.displayNames?.(ids)) ?? new Map<string, string>();
    const household = (await this.options.householdName?.(e.householdId)) ?? '';
    const text = newsText(lang, e, {
      actor: names.get(e.actorUserId),
      subject: e.subjectUserId ? names.get(e.subjectUserId) : e.subjectName,
      household,
    });
    await this.send(
      e.householdId,
      { kind: 'householdNews', ...text, data: { event: e.type }, excludeUserId: e.actorUserId },
      undefined,
      job.n,
      new Date(job.at),
    );
  }

  /** Checks a notification's size limits (400 validation_failed beyond them). */
  static check(input: NewNotification): void {
    const issues: FieldIssue[] = [];
    if ([...input.title].length > NOTIFICATION_LIMITS.title) issues.push({ field: 'title', in: 'body', message: 'at most 100 characters' });
    if ([...input.body].length > NOTIFICATION_LIMITS.body) issues.push({ field: 'body', in: 'body', message: 'at most 500 characters' });
    if (input.data !== undefined && Buffer.byteLength(JSON.stringify(input.data)) > NOTIFICATION_LIMITS.dataBytes)
      issues.push({ field: 'data', in: 'body', message: 'at most 2,048 bytes as JSON' });
    if (issues.length) throw new InputError('validation_failed', 'The notification is over a limit', issues);
  }

  /**
   * Sends a notification to a household's people: stored, put in each person's inbox, and on its
   * way to each of their phones that wants the kind. Inside `trx` when given. 404 for an unknown household.
   */
  async send(
    householdId: string,
    input: NewNotification,
    trx?: Transaction,
    id = this.newId(),
    at = this.clock.now(),
    only?: readonly string[],
  ): Promise<{ id: string; recipients: number }> {
    NotificationService.check(input);
    if (!isUuid(householdId)) throw new NotFoundError('not_found', 'No such household');
    const profile = await this.options.profiles(householdId); // 404 for an unknown household
    const run = async (t: Knex.Transaction) => {
      const wanted = only && new Set(only);
      const people = (await this.options.accountIds(householdId, t)).filter((p: string) => p !== input.excludeUserId && (!wanted || wanted.has(p)));
      await this.store(t, id, { householdId, timeZoneId: profile.timeZoneId, language: profile.preferredLanguage }, input, people, at);
      return { id, recipients: people.length };
    };
    return trx ? run(trx as Knex.Transaction) : this.rows.transaction(run);
  }

  /**
   * Stores the notification and the inbox rows, and enqueues its fan-out job (householdNews: one
   * delivery per phone that wants the kind, each batched on its own).
   */
  private async store(
    trx: Knex.Transaction,
    id: string,
    household: { householdId: string; timeZoneId: string; language: string },
    input: NewNotification,
    people: string[],
    now: Date,
  ): Promise<void> {
    const { householdId } = household;
    // The household's notifications older than the inbox keeps go as a new one arrives (their inbox rows cascade).
    await this.rows.pruneHousehold(trx, householdId, new Date(now.getTime() - INBOX_DAYS * DAY_MS));
    // A news job run again (its instance died after the commit) finds its notification stored: nothing more to do.
    const inserted = await this.rows.insertNotification(trx, {
      id,
      householdId,
      kind: input.kind,
      title: input.title,
      body: input.body,
      data: input.data ?? {},
      createdAt: now,
      timeZoneId: household.timeZoneId,
      language: household.language,
    });
    if (!inserted || people.length === 0) return;
    await this.rows.addToInbox(trx, people, id, now);
    if (input.kind !== 'householdNews') {
      await this.jobs.enqueue<FanOutJob>(FANOUT_QUEUE, { n: id }, { trx });
      return;
    }
    const jobs: DeliveryJob[] = (await this.rows.phonesWanting(trx, people, input.kind)).map((t) => ({ n: id, t }));
    await this.jobs.enqueueMany(DELIVERY_QUEUE, jobs, { trx });
  }

  /**
   * One notification to one phone. The phone is asked again: a phone deleted, switched off for the
   * kind, or handed to an account the notification was not for since is skipped. A provider that
   * calls the token gone deletes the device.
   */
  private async deliver(job: DeliveryJob, context: JobContext): Promise<void> {
    const row = await this.readDelivery(job);
    if (!row || !row.recipient || !row[SWITCH_COLUMN[row.kind]]) return;
    const provider = this.providers[row.provider as 'fcm' | 'apns'];
    if (!provider) return;
    const now = this.clock.now();
    // Quiet hours hold every kind but reminders; householdNews held are merged into one message.
    const quiet = row.kind === 'reminders' ? 0 : quietWaitMs(row.quiet_hours as QuietHours | null, String(row.time_zone_id), now);
    if (row.kind === 'householdNews') {
      if ((await this.gateNews(job.t, now, row.created_at as Date, quiet)) === 'held') return;
    } else if (quiet > 0) {
      throw new RunLater(quiet);
    }
    await this.sendTo(provider, messageOf(row), job.t, context);
  }

  /**
   * One notification to every phone of its people that wants its kind (read now: a phone deleted,
   * switched off or handed to another account since is left out), all at once. Each phone it is
   * done with is recorded (push_deliveries): sent, gone (the device is deleted), refused for good
   * (logged), or held by its quiet hours (handed to a delivery job of its own, due when they end).
   * Phones a provider failed (429, 5xx, time-out) are retried as one job of just those phones,
   * with backoff and Retry-After; a run again after a crash skips every phone recorded.
   */
  private async fanOut(job: FanOutJob, context: JobContext): Promise<void> {
    let phones = (await this.fanOutReads.add(job.n)).get(job.n) ?? [];
    if (job.t) {
      const only = new Set(job.t);
      phones = phones.filter((p) => only.has(p.t));
    }
    const now = this.clock.now();
    const held: { data: DeliveryJob; at: Date }[] = [];
    const sends: Promise<void>[] = [];
    const failed: string[] = [];
    let retryAfterMs: number | undefined;
    let lastError = '';
    for (const row of phones) {
      const provider = this.providers[row.provider as 'fcm' | 'apns'];
      if (!provider) continue;
      const quiet = row.kind === 'reminders' ? 0 : quietWaitMs(row.quiet_hours, row.time_zone_id, now);
      if (quiet > 0) {
        held.push({ data: { n: job.n, t: row.t }, at: new Date(now.getTime() + quiet) });
        continue;
      }
      sends.push(
        this.sendTo(provider, messageOf(row), row.t, context).then(
          (outcome) => this.records.add({ n: job.n, t: row.t, outcome }),
          (err: Error) => {
            if (err instanceof GiveUp) {
              this.logger.warn(
                { provider: provider.name, device: row.t.slice(0, 12), notification: job.n, err: { message: err.message } },
                'push refused for good',
              );
              return this.records.add({ n: job.n, t: row.t, outcome: 'refused' });
            }
            failed.push(row.t);
            lastError = err.message;
            if (err instanceof RetryLater && err.retryAfterMs !== undefined) retryAfterMs = Math.max(retryAfterMs ?? 0, err.retryAfterMs);
          },
        ),
      );
    }
    if (held.length) await this.hold(job.n, held);
    await Promise.all(sends);
    if (failed.length)
      throw new RetryLater(`${failed.length} of ${phones.length} phones: ${lastError}`, retryAfterMs, { n: job.n, t: failed } satisfies FanOutJob);
  }

  /** Hands phones in their quiet hours to delivery jobs of their own, due when the hours end (once each, however often this runs). */
  private async hold(n: string, held: { data: DeliveryJob; at: Date }[]): Promise<void> {
    await this.rows.transaction(async (trx) => {
      const fresh = await this.rows.recordHeld(
        trx,
        n,
        held.map((h) => h.data.t),
      );
      await this.jobs.enqueueAt<DeliveryJob>(
        DELIVERY_QUEUE,
        held.filter((h) => fresh.has(h.data.t)),
        { trx },
      );
    });
  }

  /**
   * The phone and notification of a delivery, read together with those of every other delivery
   * that starts in the same turn of the event loop (the runner starts a fetched batch at once):
   * one SELECT for the batch rather than one per delivery.
   */
  private async readDelivery(job: DeliveryJob): Promise<DeliveryRow | undefined> {
    return (await this.deliveryReads.add(job)).get(`${job.t} ${job.n}`);
  }

  /** Sends one message; a token the provider calls gone deletes its device. */
  private async sendTo(provider: PushProvider, message: PushMessage, tokenHashHex: string, context: JobContext): Promise<'sent' | 'gone'> {
    const outcome = await provider.send(message, context.signal);
    if (outcome === 'gone') {
      // Only the token as it was sent: a phone registered again meanwhile under the same token stays.
      await this.rows.deleteGoneDevice(tokenHashHex, message.token);
      this.logger.info({ provider: provider.name, device: tokenHashHex.slice(0, 12) }, 'push token gone: device deleted');
    }
    return outcome;
  }

  /**
   * Whether a householdNews goes to this phone now or is held (under the device's row lock, so
   * parallel deliveries agree): held while news are already held for it, during its quiet hours
   * (until they end), and within a minute of its last news (until that minute ends). The first
   * news that is held schedules the digest that sends them all as one message.
   */
  private async gateNews(t: string, now: Date, createdAt: Date, quietMs: number): Promise<'send' | 'held'> {
    return this.rows.transaction(async (trx) => {
      const device = await this.rows.lockNewsState(trx, t);
      if (!device) return 'held';
      if (device.news_held_until) {
        await this.rows.holdFromEarliest(trx, t, createdAt);
        return 'held';
      }
      const batchEnd = device.news_sent_at ? device.news_sent_at.getTime() + NEWS_BATCH_MS : 0;
      const until = quietMs > 0 ? now.getTime() + quietMs : batchEnd > now.getTime() ? batchEnd : 0;
      if (until === 0) {
        await this.rows.markNewsSent(trx, t, now);
        return 'send';
      }
      await this.rows.holdNews(trx, t, new Date(until), createdAt);
      await this.jobs.enqueue<DigestJob>(DIGEST_QUEUE, { t }, { trx, delayMs: until - now.getTime() });
      return 'held';
    });
  }

  /** The householdNews held for one phone, as one message (or as itself when only one was held). */
  private async digest(job: DigestJob, context: JobContext): Promise<void> {
    const now = this.clock.now();
    const taken = await this.rows.transaction(async (trx) => {
      const device = await this.rows.lockDigestDevice(trx, job.t);
      if (!device?.news_held_from) return undefined;
      const items = await this.rows.heldNews(trx, device.user_id, device.news_held_from, now);
      const last = items[items.length - 1];
      // Still in quiet hours (in the zone of the latest news): held until they end.
      const quiet = last ? quietWaitMs(device.quiet_hours, last.time_zone_id, now) : 0;
      if (quiet > 0) {
        await this.rows.extendNewsHold(trx, job.t, new Date(now.getTime() + quiet));
        return 'later' as const;
      }
      await this.rows.releaseNews(trx, job.t, now);
      return device.household_news && last ? { device, items, last } : undefined;
    });
    if (taken === 'later') {
      const until = await this.rows.newsHeldUntil(job.t);
      throw new RunLater(Math.max(0, until.getTime() - now.getTime()));
    }
    if (!taken) return;
    const { device, items, last } = taken;
    const provider = this.providers[device.provider as 'fcm' | 'apns'];
    if (!provider) return;
    const lang = textLanguage(last.language);
    const oneHousehold = items.every((i) => i.household_id === last.household_id);
    const joined = items.map((i) => i.body).join('\n');
    const message: PushMessage =
      items.length === 1
        ? {
            id: last.id,
            token: device.token,
            platform: device.platform,
            kind: 'householdNews',
            householdId: last.household_id,
            title: last.title,
            body: last.body,
            data: { event: 'news' },
          }
        : {
            id: last.id,
            token: device.token,
            platform: device.platform,
            kind: 'householdNews',
            householdId: last.household_id,
            title: oneHousehold ? last.title : TEXTS[lang].news,
            body: [...joined].length <= 500 ? joined : fill(TEXTS[lang].merged, { count: items.length }),
            data: { notificationIds: items.map((i) => i.id), count: items.length },
          };
    await this.sendTo(provider, message, job.t, context);
  }

  /** The caller's inbox, newest first (30 days), `limit` 1–100. */
  async inbox(userId: string, options: { cursor?: string; limit?: number } = {}): Promise<{ items: InboxItem[]; nextCursor: string | null }> {
    const limit = options.limit ?? 50;
    const after = options.cursor !== undefined ? decodeCursor(userId, options.cursor) : undefined;
    const since = new Date(this.clock.now().getTime() - INBOX_DAYS * DAY_MS);
    const rows = await this.rows.inboxPage(userId, since, after, limit + 1);
    const page = rows.slice(0, limit).map(
      (r): InboxItem => ({
        id: String(r.id),
        householdId: String(r.household_id),
        kind: r.kind as PushKind,
        title: String(r.title),
        body: String(r.body),
        data: (r.data ?? {}) as Record<string, unknown>,
        createdAt: (r.created_at as Date).toISOString(),
        readAt: r.read_at ? (r.read_at as Date).toISOString() : null,
      }),
    );
    const last = page[page.length - 1];
    return { items: page, nextCursor: rows.length > limit && last ? encodeCursor(userId, last.createdAt, last.id) : null };
  }

  /**
   * The `notifications` part of the data export (PersonalDataSources in @svc/contracts): the
   * person's inbox as GET /me/notifications answers it, newest first, a page of 100 at a time.
   */
  async *exportInbox(userId: string): AsyncIterable<InboxItem[]> {
    let cursor: string | undefined;
    for (;;) {
      const page = await this.inbox(userId, { cursor, limit: 100 });
      if (page.items.length) yield page.items;
      if (!page.nextCursor) return;
      cursor = page.nextCursor;
    }
  }

  /** Marks `upTo` and every older item of the caller's inbox read. 404 when `upTo` is no item of the caller's. */
  async markRead(userId: string, upTo: string): Promise<void> {
    if (!isUuid(upTo)) throw new NotFoundError('not_found', 'No such notification in your inbox');
    const found = await this.rows.markRead(userId, upTo, this.clock.now());
    if (!found) throw new NotFoundError('not_found', 'No such notification in your inbox');
  }

  /** The inbox's part in deleting an account: the person's inbox rows, inside the deletion's transaction. */
  readonly deletionStep: AccountDeletionStep = {
    deleteAccountData: async (userId: string, trx: Transaction): Promise<void> => {
      await this.rows.deleteInbox(trx as Knex.Transaction, userId);
    },
  };
}
