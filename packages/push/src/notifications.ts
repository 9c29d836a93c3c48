import { randomUUID } from 'node:crypto';
import type { AccountDeletionStep, Clock, HouseholdAccountIds, HouseholdProfiles, Transaction } from '@svc/contracts';
import { type FieldIssue, InputError, isUuid, NotFoundError } from '@svc/http-kit';
import type { JobContext, JobQueue } from '@svc/jobs';
import type { Knex } from 'knex';
import { DELIVERY_EXPIRE_SECONDS, DELIVERY_QUEUE } from './migrations.js';
import type { PushLogger } from './providers/file.js';
import type { PushMessage, PushProvider } from './providers/types.js';
import type { PushKind } from './schemas.js';

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
}

/** A delivery job: one notification to one phone. */
interface DeliveryJob {
  /** notification id */
  n: string;
  /** the device's token hash, hex */
  t: string;
}

const SWITCH_COLUMN: Record<PushKind, string> = {
  listChanges: 'list_changes',
  householdNews: 'household_news',
  runDone: 'run_done',
  reminders: 'reminders',
};

function encodeCursor(createdAt: string, id: string): string {
  return Buffer.from(JSON.stringify([createdAt, id])).toString('base64url');
}

function decodeCursor(cursor: string): [string, string] {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && !Number.isNaN(Date.parse(value[0])) && isUuid(String(value[1])))
      return [value[0], String(value[1])];
  } catch {
    /* below */
  }
  throw new InputError('validation_failed', 'cursor is not one this service gave', [{ field: 'cursor', in: 'query', message: 'unknown cursor' }]);
}

/**
 * Notifications: who gets one (every member with an account but the one excluded), the inbox
 * that keeps it per person for 30 days, and the delivery to each phone that wants its kind — one
 * job per notification and phone on @svc/jobs' queue, enqueued in the transaction that stores the
 * notification, so a notification is either stored and on its way to every phone or not at all.
 */
export class NotificationService {
  private readonly knex: Knex;
  private readonly clock: Clock;
  private readonly jobs: JobQueue;
  private readonly providers: PushProviders;
  private readonly logger: PushLogger;
  private readonly newId: () => string;

  constructor(private readonly options: NotificationServiceOptions) {
    this.knex = options.knex;
    this.clock = options.clock;
    this.jobs = options.jobs;
    this.providers = options.providers;
    this.logger = options.logger;
    this.newId = options.newId ?? randomUUID;
    this.jobs.define<DeliveryJob>(DELIVERY_QUEUE, (job, context) => this.deliver(job, context), { expireInSeconds: DELIVERY_EXPIRE_SECONDS });
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
  async send(householdId: string, input: NewNotification, trx?: Transaction): Promise<{ id: string; recipients: number }> {
    NotificationService.check(input);
    if (!isUuid(householdId)) throw new NotFoundError('not_found', 'No such household');
    await this.options.profiles(householdId); // 404 for an unknown household
    const run = async (t: Knex.Transaction) => {
      const people = (await this.options.accountIds(householdId, t)).filter((id: string) => id !== input.excludeUserId);
      const id = this.newId();
      await this.store(t, id, householdId, input, people);
      return { id, recipients: people.length };
    };
    return trx ? run(trx as Knex.Transaction) : this.knex.transaction(run);
  }

  /** Stores the notification and the inbox rows, and enqueues one delivery per phone that wants the kind. */
  private async store(trx: Knex.Transaction, id: string, householdId: string, input: NewNotification, people: string[]): Promise<void> {
    const now = this.clock.now();
    // The household's notifications older than the inbox keeps go as a new one arrives (their inbox rows cascade).
    await trx.raw('delete from push_notifications where household_id = ? and created_at < ?', [householdId, new Date(now.getTime() - INBOX_DAYS * DAY_MS)]);
    await trx.raw('insert into push_notifications (id, household_id, kind, title, body, data, created_at) values (?, ?, ?, ?, ?, ?::jsonb, ?)', [
      id,
      householdId,
      input.kind,
      input.title,
      input.body,
      JSON.stringify(input.data ?? {}),
      now,
    ]);
    if (people.length === 0) return;
    await trx.raw('insert into push_inbox (user_id, notification_id, created_at) select unnest(?::uuid[]), ?, ?', [people, id, now]);
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
    const { rows } = await this.knex.raw(
      `select d.token, d.platform, d.provider, d.list_changes, d.household_news, d.run_done, d.reminders,
              n.id, n.household_id, n.kind, n.title, n.body, n.data,
              exists (select 1 from push_inbox i where i.notification_id = n.id and i.user_id = d.user_id) as recipient
         from push_notifications n join push_devices d on d.token_hash = decode(?, 'hex')
        where n.id = ?`,
      [job.t, job.n],
    );
    const row = rows[0] as
      | (Record<string, unknown> & { token: string; platform: 'ios' | 'android'; provider: string; kind: PushKind; recipient: boolean; household_id: string })
      | undefined;
    if (!row || !row.recipient || !row[SWITCH_COLUMN[row.kind]]) return;
    const provider = this.providers[row.provider as 'fcm' | 'apns'];
    if (!provider) return;
    const message: PushMessage = {
      id: String(row.id),
      token: row.token,
      platform: row.platform,
      kind: row.kind,
      householdId: row.household_id,
      title: String(row.title),
      body: String(row.body),
      data: (row.data ?? {}) as Record<string, unknown>,
    };
    const outcome = await provider.send(message, context.signal);
    if (outcome === 'gone') {
      // Only the token as it was sent: a phone registered again meanwhile under the same token stays.
      await this.knex.raw('delete from push_devices where token_hash = decode(?, ?) and token = ?', [job.t, 'hex', row.token]);
      this.logger.info({ provider: provider.name, device: job.t.slice(0, 12) }, 'push token gone: device deleted');
    }
  }

  /** The caller's inbox, newest first (30 days), `limit` 1–100. */
  async inbox(userId: string, options: { cursor?: string; limit?: number } = {}): Promise<{ items: InboxItem[]; nextCursor: string | null }> {
    const limit = options.limit ?? 50;
    const after = options.cursor ? decodeCursor(options.cursor) : undefined;
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
    return { items: page, nextCursor: rows.length > limit && last ? encodeCursor(last.createdAt, last.id) : null };
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
