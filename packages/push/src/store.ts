import { readAheadKey, type SessionReadAhead } from '@svc/contracts';
import { apiColumnsSql, jsonRowSql, jsonRowsSql } from '@svc/db';
import { readAhead } from '@svc/http-kit';
import type { Knex } from 'knex';
import type { Pojo } from 'objection';
import { PushDeviceModel, tokenHash } from './models/index.js';
import { type DeviceSwitches, type PushDevice, PushDeviceSchema, type PushKind, type PushPlatform } from './schemas.js';

/** A registration as the store writes it: the provider already defaulted. */
export interface RegisterDevice {
  token: string;
  platform: PushPlatform;
  provider: string;
}

/**
 * What the push service needs from storage. Every lookup is the caller's own: a token registered
 * to another account is not found. Time comes in as `now`; the store holds no clock.
 */
export interface PushStore {
  /** Upsert by token, in one statement: new → all switches on; known → marked seen and handed to `userId`. */
  register(userId: string, device: RegisterDevice, now: Date): Promise<PushDevice>;
  get(userId: string, token: string): Promise<PushDevice | undefined>;
  setSwitches(userId: string, token: string, switches: DeviceSwitches, now: Date): Promise<PushDevice | undefined>;
  /** Hard delete; false when the token is not the caller's. */
  remove(userId: string, token: string): Promise<boolean>;
  /** The account's devices with `kind` switched on, most recently seen first. */
  devicesFor(userId: string, kind: PushKind): Promise<PushDevice[]>;
  /** Every device of the account, newest registration (`createdAt`) first. */
  list(userId: string): Promise<PushDevice[]>;
  /** Deletes every device of the account (inside `trx` when given); answers how many. */
  removeAll(userId: string, trx?: Knex.Transaction): Promise<number>;
}

/** The name of the device read the session statement loads ahead (GET /api/v1/me/devices/{token}). */
const DEVICE_READ_AHEAD = 'push_device_read';

/**
 * The columns of a PushDeviceResponse by name, aliased to the model's camelCase names, timestamps
 * formatted by PostgreSQL as the API writes them (so the model gets the values a read through
 * knex would give it).
 */
const DEVICE_READ_COLUMNS = apiColumnsSql('d', Object.keys(PushDeviceSchema.properties), PushDeviceModel.timestamps);

/**
 * GET of one of the caller's phones as a read the session statement loads in its own round trip
 * (SessionReadAhead, an account read): the row of the token (found by its hash, as `get` finds it,
 * and compared itself) when it belongs to the session's account, else null.
 */
export const deviceReadAhead: SessionReadAhead = {
  name: DEVICE_READ_AHEAD,
  path: '/api/v1/me/devices/{token}',
  scope: 'account',
  argFormat: 'text',
  select: (accountId, _id, _known, token) =>
    jsonRowSql(
      'push_devices d',
      DEVICE_READ_COLUMNS,
      `d.token_hash = sha256(convert_to(${token}, 'UTF8')) and d.user_id = ${accountId} and d.token = ${token}`,
    ),
};

/** The name of the devices list the session statement loads ahead (GET /api/v1/me/devices). */
const DEVICES_READ_AHEAD = 'push_devices_list';

/**
 * GET of the caller's phones as an account read the session statement loads in its own round
 * trip: the rows `list` reads, in its order, as one JSON array (`[]` for none).
 */
export const devicesReadAhead: SessionReadAhead = {
  name: DEVICES_READ_AHEAD,
  path: '/api/v1/me/devices',
  scope: 'account',
  select: (accountId) => jsonRowsSql('push_devices d', DEVICE_READ_COLUMNS, `d.user_id = ${accountId}`, 'd.created_at desc, d.token'),
};

/** PushStore on Objection: PushDeviceModel bound to the knex the host hands in. */
export class ObjectionPushStore implements PushStore {
  private readonly Device: typeof PushDeviceModel;

  constructor(knex: Knex) {
    this.Device = PushDeviceModel.bindKnex(knex);
  }

  private mine(userId: string, token: string) {
    // The token itself is compared too: equal hashes of different tokens must still not match.
    return this.Device.query().where({ tokenHash: tokenHash(token), userId, token });
  }

  async register(userId: string, device: RegisterDevice, now: Date): Promise<PushDevice> {
    const k = this.Device.knex();
    // Same owner: the phone's own switches stay. A new owner starts like a new phone (all on):
    // the switches were the previous person's choices.
    const keepIfSameOwner = (column: string) => k.raw('case when ?? = excluded.user_id then ?? else true end', ['pushDevices.userId', `pushDevices.${column}`]);
    // One statement, atomic under concurrency: parallel PUTs of a token leave exactly one row.
    // (Objection has no upsert of its own; the model's knex builder writes it.)
    const rows = await k('pushDevices')
      .insert({
        tokenHash: tokenHash(device.token),
        token: device.token,
        userId,
        platform: device.platform,
        provider: device.provider,
        listChanges: true,
        householdNews: true,
        runDone: true,
        reminders: true,
        lastSeenAt: now,
        createdAt: now,
        updatedAt: now,
      })
      .onConflict('tokenHash')
      .merge({
        listChanges: keepIfSameOwner('listChanges'),
        householdNews: keepIfSameOwner('householdNews'),
        runDone: keepIfSameOwner('runDone'),
        reminders: keepIfSameOwner('reminders'),
        createdAt: k.raw('case when ?? = excluded.user_id then ?? else excluded.created_at end', ['pushDevices.userId', 'pushDevices.createdAt']),
        userId: k.raw('excluded.user_id'),
        platform: k.raw('excluded.platform'),
        provider: k.raw('excluded.provider'),
        lastSeenAt: k.raw('excluded.last_seen_at'),
        updatedAt: k.raw('excluded.updated_at'),
      })
      .returning('*');
    return this.Device.fromDatabaseJson(rows[0]).toApi();
  }

  async get(userId: string, token: string): Promise<PushDevice | undefined> {
    // GET of the caller's own phone: the session read loaded it ahead (no statement of its own).
    const lent = readAhead(DEVICE_READ_AHEAD, readAheadKey(undefined, token)) as Pojo | undefined;
    if (lent) return this.Device.fromDatabaseJson(lent).toApi();
    return (await this.mine(userId, token).first())?.toApi();
  }

  async setSwitches(userId: string, token: string, switches: DeviceSwitches, now: Date): Promise<PushDevice | undefined> {
    const rows = await this.mine(userId, token)
      .patch({
        listChanges: switches.listChanges,
        householdNews: switches.householdNews,
        runDone: switches.runDone,
        // Left out or null keeps the value: an older client that knows three switches must not turn reminders off.
        ...(typeof switches.reminders === 'boolean' ? { reminders: switches.reminders } : {}),
        // Left out keeps them; null clears them. Stored as HH:mm (HH:mm:ss is accepted on input).
        ...(switches.quietHours !== undefined
          ? { quietHours: switches.quietHours && ({ start: switches.quietHours.start.slice(0, 5), end: switches.quietHours.end.slice(0, 5) } as never) }
          : {}),
        updatedAt: now.toISOString(),
      })
      .returning('*');
    return rows[0]?.toApi();
  }

  async remove(userId: string, token: string): Promise<boolean> {
    return (await this.mine(userId, token).delete()) > 0;
  }

  async list(userId: string): Promise<PushDevice[]> {
    // GET of the caller's phones: the session read loaded them ahead (no statement of its own).
    const lent = readAhead(DEVICES_READ_AHEAD, readAheadKey(undefined)) as Pojo[] | undefined;
    if (lent) return lent.map((row) => this.Device.fromDatabaseJson(row).toApi());
    // The token breaks ties, so two phones registered in the same millisecond keep one order.
    const rows = await this.Device.query()
      .where({ userId })
      .orderBy([{ column: 'createdAt', order: 'desc' }, { column: 'token' }]);
    return rows.map((row) => row.toApi());
  }

  async removeAll(userId: string, trx?: Knex.Transaction): Promise<number> {
    return this.Device.query(trx).where({ userId }).delete();
  }

  async devicesFor(userId: string, kind: PushKind): Promise<PushDevice[]> {
    // Each kind names its column: a kind never reaches SQL as text.
    const column = { listChanges: 'listChanges', householdNews: 'householdNews', runDone: 'runDone', reminders: 'reminders' }[kind];
    if (!column) throw new TypeError(`Unknown push kind: ${String(kind)}`);
    const rows = await this.Device.query()
      .where({ userId, [column]: true })
      .orderBy([{ column: 'lastSeenAt', order: 'desc' }, { column: 'token' }]);
    return rows.map((row) => row.toApi());
  }
}
