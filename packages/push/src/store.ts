import { standaloneRead } from '@svc/db';
import { loadStandalone } from '@svc/http-kit';
import type { Knex } from 'knex';
import type { Pojo } from 'objection';
import { PushDeviceModel, tokenHash } from './models/index.js';
import { deviceRead, devicesRead } from './reads.js';
import type { DeviceSwitches, PushDevice, PushKind, PushPlatform } from './schemas.js';

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
  /**
   * Upsert by token, in one statement: new → all switches on; known → marked seen and handed to
   * `userId`. Undefined (and nothing written) when the person would then have more devices than
   * `maxDevices` (DEVICES_PER_PERSON when left out); exact under parallel registrations of the
   * person (the statement's trigger counts under the person's lock).
   */
  register(userId: string, device: RegisterDevice, now: Date, maxDevices?: number): Promise<PushDevice | undefined>;
  /**
   * The caller's phone of `token`. `loaded`: the row of the declared read `deviceRead`, when the
   * kernel loaded it with the caller (`loadedRead(req, read)` of the route; `false`: none): made into the answer by the model
   * as a queried row is, without a statement of its own. Without it, the same declared read is run as
   * a statement of its own.
   */
  get(userId: string, token: string, loaded?: Pojo | false): Promise<PushDevice | undefined>;
  setSwitches(userId: string, token: string, switches: DeviceSwitches, now: Date): Promise<PushDevice | undefined>;
  /** Hard delete; false when the token is not the caller's. */
  remove(userId: string, token: string): Promise<boolean>;
  /** The account's devices with `kind` switched on, most recently seen first. */
  devicesFor(userId: string, kind: PushKind): Promise<PushDevice[]>;
  /** Every device of the account, newest registration (`createdAt`) first; `loaded`: the rows of `devicesRead`, as for `get`. */
  list(userId: string, loaded?: Pojo[]): Promise<PushDevice[]>;
  /** Deletes every device of the account (inside `trx` when given); answers how many. */
  removeAll(userId: string, trx?: Knex.Transaction): Promise<number>;
}

/**
 * The SQLSTATE the registering statement's trigger raises when a person would have more devices
 * than the bound (migration 20261202130000_push_devices_per_person_bound): the trigger takes the
 * person's lock and counts, so a registration is one statement and a refused one writes nothing.
 */
const OVER_BOUND = 'PUBND';

/**
 * GET /me/devices and GET /me/devices/{token} when the kernel lent nothing (a bearer path, a token
 * it does not read ahead): the same declared reads as statements of their own, so a device has one
 * SQL however it is loaded.
 */
const DEVICE = standaloneRead(deviceRead);
const DEVICES = standaloneRead(devicesRead);

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

  async register(userId: string, device: RegisterDevice, now: Date, maxDevices?: number): Promise<PushDevice | undefined> {
    try {
      return await this.upsert(this.Device.knex(), userId, device, now, maxDevices);
    } catch (err) {
      // The registering statement's own trigger counted the person's devices under their lock (see OVER_BOUND).
      if ((err as { code?: string }).code === OVER_BOUND) return undefined;
      throw err;
    }
  }

  private async upsert(k: Knex, userId: string, device: RegisterDevice, now: Date, maxDevices?: number): Promise<PushDevice> {
    // Same owner: the phone's own switches stay. A new owner starts like a new phone (all on):
    // the switches were the previous person's choices.
    const keepIfSameOwner = (column: string) => k.raw('case when ?? = excluded.user_id then ?? else true end', ['pushDevices.userId', `pushDevices.${column}`]);
    // One statement, atomic under concurrency: parallel PUTs of a token leave exactly one row.
    // (Objection has no upsert of its own; the model's knex builder writes it.)
    const rows = await k('pushDevices')
      .insert({
        tokenHash: tokenHash(device.token),
        token: device.token,
        // The bound the trigger holds, set for this statement only (transaction-local) as it writes the owner.
        userId:
          maxDevices === undefined ? userId : k.raw(`(select ?::uuid where set_config('push.max_devices', ?, true) is not null)`, [userId, String(maxDevices)]),
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

  async get(userId: string, token: string, loaded?: Pojo | false): Promise<PushDevice | undefined> {
    const row = loaded ?? (await loadStandalone<Pojo | false>(this.Device.knex(), DEVICE, { account: userId, arg: token }));
    return row ? this.Device.fromDatabaseJson(row).toApi() : undefined;
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

  async list(userId: string, loaded?: Pojo[]): Promise<PushDevice[]> {
    const rows = loaded ?? (await loadStandalone<Pojo[]>(this.Device.knex(), DEVICES, { account: userId })) ?? [];
    return rows.map((row) => this.Device.fromDatabaseJson(row).toApi());
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
