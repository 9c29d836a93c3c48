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

/** A phone of a fan-out, with its notification, as `fanOut` reads them. */
type FanOutRow = {
  key_n: string;
  /** token hash, hex */
  t: string;
  token: string;
  platform: 'ios' | 'android';
  provider: string;
  quiet_hours: QuietHours | null;
  id: string;
  household_id: string;
  kind: PushKind;
  title: string;
  body: string;
  data: Record<string, unknown> | null;
  time_zone_id: string;
};

/** What the fan-out is done with for a phone (push_deliveries.outcome). */
type DeliveryOutcome = 'sent' | 'gone' | 'refused' | 'held';

/** A delivery job: one notification to one phone (householdNews, and a phone held by its quiet hours). */
interface DeliveryJob {
  /** notification id */
  n: string;
  /** the device's token hash, hex */
  t: string;
}

/** A delivery's phone and notification, as `deliver` reads them. */
type DeliveryRow = Record<string, unknown> & {
  token: string;
  platform: 'ios' | 'android';
  provider: string;
  kind: PushKind;
  recipient: boolean;
  household_id: string;
};

const SWITCH_COLUMN: Record<PushKind, string> = {
  listChanges: 'list_changes',
  householdNews: 'household_news',
  runDone: 'run_done',
  reminders: 'reminders',
};

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
  private readonly knex: Knex;
  private readonly clock: Clock;
  private readonly jobs: JobQueue;
  private readonly providers: PushProviders;
  private readonly logger: PushLogger;
  private readonly newId: () => string;
  private readonly deliveryReads: PerTurn<DeliveryJob, Map<string, DeliveryRow>>;
  private readonly fanOutReads: PerTurn<string, Map<string, FanOutRow[]>>;
  private readonly records: PerTurn<{ n: string; t: string; outcome: DeliveryOutcome }, void>;

  constructor(private readonly options: NotificationServiceOptions) {
    this.knex = options.knex;
    this.clock = options.clock;
    this.jobs = options.jobs;
    this.providers = options.providers;
    this.logger = options.logger;
    this.newId = options.newId ?? randomUUID;
    this.deliveryReads = new PerTurn((keys) => this.readDeliveries(keys));
    this.fanOutReads = new PerTurn((ids) => this.readFanOuts(ids));
    this.records = new PerTurn((done) => this.record(done));
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
    return trx ? run(trx as Knex.Transaction) : this.knex.transaction(run);
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
    await trx.raw('delete from push_notifications where household_id = ? and created_at < ?', [householdId, new Date(now.getTime() - INBOX_DAYS * DAY_MS)]);
    // A news job run again (its instance died after the commit) finds its notification stored: nothing more to do.
    const inserted = await trx.raw(
      `insert into push_notifications (id, household_id, kind, title, body, data, created_at, time_zone_id, language)
       values (?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?) on conflict (id) do nothing`,
      [id, householdId, input.kind, input.title, input.body, JSON.stringify(input.data ?? {}), now, household.timeZoneId, household.language],
    );
    if (inserted.rowCount === 0 || people.length === 0) return;
    await trx.raw('insert into push_inbox (user_id, notification_id, created_at) select unnest(?::uuid[]), ?, ?', [people, id, now]);
    if (input.kind !== 'householdNews') {
      await this.jobs.enqueue<FanOutJob>(FANOUT_QUEUE, { n: id }, { trx });
      return;
    }
    const column = SWITCH_COLUMN[input.kind];
    const devices = await trx.raw(
      `select encode(token_hash, 'hex') as t from push_devices where user_id = any(?::uuid[]) and ${column} and provider in ('fcm', 'apns')`,
      [people],
    );
    const jobs: DeliveryJob[] = devices.rows.map((r: { t: string }) => ({ n: id, t: r.t }));
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

  /** The phones of fan-outs that start in the same turn, by notification: one SELECT. */
  private async readFanOuts(ids: string[]): Promise<Map<string, FanOutRow[]>> {
    const { rows } = (await this.knex.raw(
      `select k.n as key_n, encode(d.token_hash, 'hex') as t, d.token, d.platform, d.provider, d.quiet_hours,
              n.id, n.household_id, n.kind, n.title, n.body, n.data, n.time_zone_id
         from unnest(?::uuid[]) as k(n)
         join push_notifications n on n.id = k.n
         join push_inbox i on i.notification_id = n.id
         join push_devices d on d.user_id = i.user_id
        where d.provider in ('fcm', 'apns')
          and case n.kind when 'listChanges' then d.list_changes when 'householdNews' then d.household_news when 'runDone' then d.run_done else d.reminders end
          and not exists (select 1 from push_deliveries x where x.notification_id = n.id and x.token_hash = d.token_hash)`,
      [ids],
    )) as { rows: FanOutRow[] };
    const byId = new Map<string, FanOutRow[]>();
    for (const row of rows) {
      const list = byId.get(row.key_n);
      if (list) list.push(row);
      else byId.set(row.key_n, [row]);
    }
    return byId;
  }

  /** Records what fan-outs are done with, for every phone done in the same turn: one INSERT. */
  private async record(done: { n: string; t: string; outcome: DeliveryOutcome }[]): Promise<void> {
    await this.knex.raw(
      `insert into push_deliveries (notification_id, token_hash, outcome)
       select n, decode(t, 'hex'), o from unnest(?::uuid[], ?::text[], ?::text[]) as k(n, t, o)
       on conflict do nothing`,
      [done.map((d) => d.n), done.map((d) => d.t), done.map((d) => d.outcome)],
    );
  }

  /** Hands phones in their quiet hours to delivery jobs of their own, due when the hours end (once each, however often this runs). */
  private async hold(n: string, held: { data: DeliveryJob; at: Date }[]): Promise<void> {
    await this.knex.transaction(async (trx) => {
      const { rows } = await trx.raw(
        `insert into push_deliveries (notification_id, token_hash, outcome)
         select ?, decode(t, 'hex'), 'held' from unnest(?::text[]) as k(t)
         on conflict do nothing returning encode(token_hash, 'hex') as t`,
        [n, held.map((h) => h.data.t)],
      );
      const fresh = new Set((rows as { t: string }[]).map((r) => r.t));
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

  private async readDeliveries(keys: DeliveryJob[]): Promise<Map<string, DeliveryRow>> {
    const r = (await this.knex.raw(
      `select k.t as key_t, k.n as key_n, d.token, d.platform, d.provider, d.list_changes, d.household_news, d.run_done, d.reminders, d.quiet_hours,
              n.id, n.household_id, n.kind, n.title, n.body, n.data, n.time_zone_id, n.created_at,
              exists (select 1 from push_inbox i where i.notification_id = n.id and i.user_id = d.user_id) as recipient
         from unnest(?::text[], ?::uuid[]) as k(t, n)
         join push_notifications n on n.id = k.n
         join push_devices d on d.token_hash = decode(k.t, 'hex')`,
      [keys.map((k) => k.t), keys.map((k) => k.n)],
    )) as { rows: (DeliveryRow & { key_t: string; key_n: string })[] };
    return new Map(r.rows.map((row) => [`${row.key_t} ${row.key_n}`, row]));
  }

  /** Sends one message; a token the provider calls gone deletes its device. */
  private async sendTo(provider: PushProvider, message: PushMessage, tokenHashHex: string, context: JobContext): Promise<'sent' | 'gone'> {
    const outcome = await provider.send(message, context.signal);
    if (outcome === 'gone') {
      // Only the token as it was sent: a phone registered again meanwhile under the same token stays.
      await this.knex.raw('delete from push_devices where token_hash = decode(?, ?) and token = ?', [tokenHashHex, 'hex', message.token]);
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
    return this.knex.transaction(async (trx) => {
      const { rows } = await trx.raw(`select news_sent_at, news_held_until from push_devices where token_hash = decode(?, 'hex') for update`, [t]);
      const device = rows[0] as { news_sent_at: Date | null; news_held_until: Date | null } | undefined;
      if (!device) return 'held';
      if (device.news_held_until) {
        await trx.raw(`update push_devices set news_held_from = least(news_held_from, ?) where token_hash = decode(?, 'hex')`, [createdAt, t]);
        return 'held';
      }
      const batchEnd = device.news_sent_at ? device.news_sent_at.getTime() + NEWS_BATCH_MS : 0;
      const until = quietMs > 0 ? now.getTime() + quietMs : batchEnd > now.getTime() ? batchEnd : 0;
      if (until === 0) {
        await trx.raw(`update push_devices set news_sent_at = ? where token_hash = decode(?, 'hex')`, [now, t]);
        return 'send';
      }
      await trx.raw(`update push_devices set news_held_until = ?, news_held_from = ? where token_hash = decode(?, 'hex')`, [new Date(until), createdAt, t]);
      await this.jobs.enqueue<DigestJob>(DIGEST_QUEUE, { t }, { trx, delayMs: until - now.getTime() });
      return 'held';
    });
  }

  /** The householdNews held for one phone, as one message (or as itself when only one was held). */
  private async digest(job: DigestJob, context: JobContext): Promise<void> {
    const now = this.clock.now();
    const taken = await this.knex.transaction(async (trx) => {
      const { rows } = await trx.raw(
        `select token, platform, provider, user_id, household_news, quiet_hours, news_held_from, news_held_until
           from push_devices where token_hash = decode(?, 'hex') for update`,
        [job.t],
      );
      const device = rows[0] as
        | {
            token: string;
            platform: 'ios' | 'android';
            provider: string;
            user_id: string;
            household_news: boolean;
            quiet_hours: QuietHours | null;
            news_held_from: Date | null;
            news_held_until: Date | null;
          }
        | undefined;
      if (!device?.news_held_from) return undefined;
      const held = await trx.raw(
        `select n.id, n.household_id, n.title, n.body, n.time_zone_id, n.language
           from push_inbox i join push_notifications n on n.id = i.notification_id
          where i.user_id = ? and n.kind = 'householdNews' and i.created_at >= ? and i.created_at <= ?
          order by i.created_at, i.notification_id`,
        [device.user_id, device.news_held_from, now],
      );
      const items = held.rows as { id: string; household_id: string; title: string; body: string; time_zone_id: string; language: string }[];
      const last = items[items.length - 1];
      // Still in quiet hours (in the zone of the latest news): held until they end.
      const quiet = last ? quietWaitMs(device.quiet_hours, last.time_zone_id, now) : 0;
      if (quiet > 0) {
        await trx.raw(`update push_devices set news_held_until = ? where token_hash = decode(?, 'hex')`, [new Date(now.getTime() + quiet), job.t]);
        return 'later' as const;
      }
      await trx.raw(`update push_devices set news_held_from = null, news_held_until = null, news_sent_at = ? where token_hash = decode(?, 'hex')`, [
        now,
        job.t,
      ]);
      return device.household_news && last ? { device, items, last } : undefined;
    });
    if (taken === 'later') {
      const { rows } = await this.knex.raw(`select news_held_until from push_devices where token_hash = decode(?, 'hex')`, [job.t]);
      throw new RunLater(Math.max(0, (rows[0].news_held_until as Date).getTime() - now.getTime()));
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
    const { rows } = await this.knex.raw(
      `select n.id, n.household_id, n.kind, n.title, n.body, n.data, i.created_at, i.read_at
         from push_inbox i join push_notifications n on n.id = i.notification_id
        where i.user_id = ? and i.created_at >= ? ${after ? 'and (i.created_at, i.notification_id) < (?::timestamptz, ?::uuid)' : ''}
        order by i.created_at desc, i.notification_id desc
        limit ?`,
      [userId, since, ...(after ?? []), limit + 1],
    );
    const page = (rows as Record<string, unknown>[]).slice(0, limit).map(
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
    const { rowCount } = await this.knex.raw(
      `with target as (select created_at, notification_id from push_inbox where user_id = ? and notification_id = ?),
            marked as (
              update push_inbox i set read_at = ? from target t
               where i.user_id = ? and i.read_at is null and (i.created_at, i.notification_id) <= (t.created_at, t.notification_id)
              returning 1)
       select 1 from target`,
      [userId, upTo, this.clock.now(), userId],
    );
    if (!rowCount) throw new NotFoundError('not_found', 'No such notification in your inbox');
  }

  /** The inbox's part in deleting an account: the person's inbox rows, inside the deletion's transaction. */
  readonly deletionStep: AccountDeletionStep = {
    deleteAccountData: async (userId: string, trx: Transaction): Promise<void> => {
      await (trx as Knex.Transaction).raw('delete from push_inbox where user_id = ?', [userId]);
    },
  };
}
