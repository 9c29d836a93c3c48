import type { Knex } from 'knex';
import type { QuietHours } from './quiet-hours.js';
import type { PushKind } from './schemas.js';

/** The device column of each kind's switch. */
export const SWITCH_COLUMN: Record<PushKind, string> = {
  listChanges: 'list_changes',
  householdNews: 'household_news',
  runDone: 'run_done',
  reminders: 'reminders',
};

/** A phone of a fan-out, with its notification, as `fanOutPhones` reads them. */
export type FanOutRow = {
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
export type DeliveryOutcome = 'sent' | 'gone' | 'refused' | 'held';

/** A delivery's phone and notification, as `deliveries` reads them. */
export type DeliveryRow = Record<string, unknown> & {
  token: string;
  platform: 'ios' | 'android';
  provider: string;
  kind: PushKind;
  recipient: boolean;
  household_id: string;
};

/** A phone's householdNews state, as `lockDigestDevice` reads it under the row lock. */
export interface DigestDevice {
  token: string;
  platform: 'ios' | 'android';
  provider: string;
  user_id: string;
  household_news: boolean;
  quiet_hours: QuietHours | null;
  news_held_from: Date | null;
  news_held_until: Date | null;
}

/** A householdNews held for a phone, as `heldNews` reads it. */
export interface HeldNews {
  id: string;
  household_id: string;
  title: string;
  body: string;
  time_zone_id: string;
  language: string;
}

/** A notification as `insertNotification` writes it. */
export interface NotificationRow {
  id: string;
  householdId: string;
  kind: PushKind;
  title: string;
  body: string;
  data: Record<string, unknown>;
  createdAt: Date;
  timeZoneId: string;
  language: string;
}

/**
 * The SQL of notifications (push_notifications, push_inbox, push_deliveries and the householdNews
 * columns of push_devices): one method per statement. NotificationService keeps the flow; a method
 * that takes `trx` runs inside the caller's transaction.
 */
export class NotificationStore {
  constructor(private readonly knex: Knex) {}

  transaction<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return this.knex.transaction(fn);
  }

  /** Deletes the household's notifications created before `before` (their inbox rows cascade). */
  async pruneHousehold(trx: Knex.Transaction, householdId: string, before: Date): Promise<void> {
    await trx.raw('delete from push_notifications where household_id = ? and created_at < ?', [householdId, before]);
  }

  /** Inserts the notification; false when its id is already stored (nothing written). */
  async insertNotification(trx: Knex.Transaction, n: NotificationRow): Promise<boolean> {
    const inserted = await trx.raw(
      `insert into push_notifications (id, household_id, kind, title, body, data, created_at, time_zone_id, language)
       values (?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?) on conflict (id) do nothing`,
      [n.id, n.householdId, n.kind, n.title, n.body, JSON.stringify(n.data), n.createdAt, n.timeZoneId, n.language],
    );
    return inserted.rowCount !== 0;
  }

  /** Puts the notification in each person's inbox. */
  async addToInbox(trx: Knex.Transaction, people: string[], notificationId: string, now: Date): Promise<void> {
    await trx.raw('insert into push_inbox (user_id, notification_id, created_at) select unnest(?::uuid[]), ?, ?', [people, notificationId, now]);
  }

  /** The phones (token hashes, hex) of `people` that want `kind`. */
  async phonesWanting(trx: Knex.Transaction, people: string[], kind: PushKind): Promise<string[]> {
    const column = SWITCH_COLUMN[kind];
    const devices = await trx.raw(
      `select encode(token_hash, 'hex') as t from push_devices where user_id = any(?::uuid[]) and ${column} and provider in ('fcm', 'apns')`,
      [people],
    );
    return devices.rows.map((r: { t: string }) => r.t);
  }

  /** The phones of the fan-outs of `ids` not yet done, by notification: one SELECT. */
  async fanOutPhones(ids: string[]): Promise<Map<string, FanOutRow[]>> {
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

  /** Records what fan-outs are done with: one INSERT. */
  async recordDeliveries(done: { n: string; t: string; outcome: DeliveryOutcome }[]): Promise<void> {
    await this.knex.raw(
      `insert into push_deliveries (notification_id, token_hash, outcome)
       select n, decode(t, 'hex'), o from unnest(?::uuid[], ?::text[], ?::text[]) as k(n, t, o)
       on conflict do nothing`,
      [done.map((d) => d.n), done.map((d) => d.t), done.map((d) => d.outcome)],
    );
  }

  /** Records the phones (token hashes, hex) held by their quiet hours; answers those not recorded before. */
  async recordHeld(trx: Knex.Transaction, notificationId: string, tokenHashes: string[]): Promise<Set<string>> {
    const { rows } = await trx.raw(
      `insert into push_deliveries (notification_id, token_hash, outcome)
       select ?, decode(t, 'hex'), 'held' from unnest(?::text[]) as k(t)
       on conflict do nothing returning encode(token_hash, 'hex') as t`,
      [notificationId, tokenHashes],
    );
    return new Set((rows as { t: string }[]).map((r) => r.t));
  }

  /** The phone and notification of each delivery (`t` token hash hex, `n` notification id), keyed `${t} ${n}`: one SELECT. */
  async deliveries(keys: { n: string; t: string }[]): Promise<Map<string, DeliveryRow>> {
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

  /** Deletes the device of a token gone, only as it was sent: a phone registered again meanwhile under the same token stays. */
  async deleteGoneDevice(tokenHashHex: string, token: string): Promise<void> {
    await this.knex.raw('delete from push_devices where token_hash = decode(?, ?) and token = ?', [tokenHashHex, 'hex', token]);
  }

  /** The phone's householdNews state under its row lock; undefined when the phone is gone. */
  async lockNewsState(trx: Knex.Transaction, t: string): Promise<{ news_sent_at: Date | null; news_held_until: Date | null } | undefined> {
    const { rows } = await trx.raw(`select news_sent_at, news_held_until from push_devices where token_hash = decode(?, 'hex') for update`, [t]);
    return rows[0] as { news_sent_at: Date | null; news_held_until: Date | null } | undefined;
  }

  /** Another news held: the held ones start at the earliest. */
  async holdFromEarliest(trx: Knex.Transaction, t: string, createdAt: Date): Promise<void> {
    await trx.raw(`update push_devices set news_held_from = least(news_held_from, ?) where token_hash = decode(?, 'hex')`, [createdAt, t]);
  }

  async markNewsSent(trx: Knex.Transaction, t: string, now: Date): Promise<void> {
    await trx.raw(`update push_devices set news_sent_at = ? where token_hash = decode(?, 'hex')`, [now, t]);
  }

  async holdNews(trx: Knex.Transaction, t: string, until: Date, from: Date): Promise<void> {
    await trx.raw(`update push_devices set news_held_until = ?, news_held_from = ? where token_hash = decode(?, 'hex')`, [until, from, t]);
  }

  /** The phone a digest is for, under its row lock; undefined when it is gone. */
  async lockDigestDevice(trx: Knex.Transaction, t: string): Promise<DigestDevice | undefined> {
    const { rows } = await trx.raw(
      `select token, platform, provider, user_id, household_news, quiet_hours, news_held_from, news_held_until
         from push_devices where token_hash = decode(?, 'hex') for update`,
      [t],
    );
    return rows[0] as DigestDevice | undefined;
  }

  /** The householdNews in the person's inbox from `from` to `now`, oldest first. */
  async heldNews(trx: Knex.Transaction, userId: string, from: Date, now: Date): Promise<HeldNews[]> {
    const held = await trx.raw(
      `select n.id, n.household_id, n.title, n.body, n.time_zone_id, n.language
         from push_inbox i join push_notifications n on n.id = i.notification_id
        where i.user_id = ? and n.kind = 'householdNews' and i.created_at >= ? and i.created_at <= ?
        order by i.created_at, i.notification_id`,
      [userId, from, now],
    );
    return held.rows as HeldNews[];
  }

  async extendNewsHold(trx: Knex.Transaction, t: string, until: Date): Promise<void> {
    await trx.raw(`update push_devices set news_held_until = ? where token_hash = decode(?, 'hex')`, [until, t]);
  }

  /** The held news are taken: nothing held, sent now. */
  async releaseNews(trx: Knex.Transaction, t: string, now: Date): Promise<void> {
    await trx.raw(`update push_devices set news_held_from = null, news_held_until = null, news_sent_at = ? where token_hash = decode(?, 'hex')`, [now, t]);
  }

  async newsHeldUntil(t: string): Promise<Date> {
    const { rows } = await this.knex.raw(`select news_held_until from push_devices where token_hash = decode(?, 'hex')`, [t]);
    return rows[0].news_held_until as Date;
  }

  /** `limit` inbox rows of the person from `since`, newest first, after the position `after` when given. */
  async inboxPage(userId: string, since: Date, after: [string, string] | undefined, limit: number): Promise<Record<string, unknown>[]> {
    const { rows } = await this.knex.raw(
      `select n.id, n.household_id, n.kind, n.title, n.body, n.data, i.created_at, i.read_at
         from push_inbox i join push_notifications n on n.id = i.notification_id
        where i.user_id = ? and i.created_at >= ? ${after ? 'and (i.created_at, i.notification_id) < (?::timestamptz, ?::uuid)' : ''}
        order by i.created_at desc, i.notification_id desc
        limit ?`,
      [userId, since, ...(after ?? []), limit],
    );
    return rows as Record<string, unknown>[];
  }

  /** Marks `upTo` and every older unread item of the person's inbox read; false when `upTo` is no item of theirs. */
  async markRead(userId: string, upTo: string, now: Date): Promise<boolean> {
    const { rowCount } = await this.knex.raw(
      `with target as (select created_at, notification_id from push_inbox where user_id = ? and notification_id = ?),
            marked as (
              update push_inbox i set read_at = ? from target t
               where i.user_id = ? and i.read_at is null and (i.created_at, i.notification_id) <= (t.created_at, t.notification_id)
              returning 1)
       select 1 from target`,
      [userId, upTo, now, userId],
    );
    return Boolean(rowCount);
  }

  /** Deletes the person's inbox rows. */
  async deleteInbox(trx: Knex.Transaction, userId: string): Promise<void> {
    await trx.raw('delete from push_inbox where user_id = ?', [userId]);
  }
}
