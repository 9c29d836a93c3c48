import { createHash } from 'node:crypto';
import type { Clock } from '@svc/contracts';
import type { Knex } from 'knex';
import type { DeviceSwitches, PushDevice, PushDeviceStore, PushKind, PushPlatform, RegisterDevice } from './PushDeviceStore.js';

interface DeviceRow {
  token: string;
  userId: string;
  platform: PushPlatform;
  provider: string;
  listChanges: boolean;
  householdNews: boolean;
  runDone: boolean;
  reminders: boolean;
  lastSeenAt: Date;
}

const COLUMNS = ['token', 'userId', 'platform', 'provider', 'listChanges', 'householdNews', 'runDone', 'reminders', 'lastSeenAt'];

/** Each kind names its column here, so a kind never reaches SQL as text. */
const KIND_COLUMN: Record<PushKind, string> = {
  listChanges: 'listChanges',
  householdNews: 'householdNews',
  runDone: 'runDone',
  reminders: 'reminders',
};

/** The key of a token: tokens can be longer than a btree entry may be. */
export function tokenHash(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

function toDevice(row: DeviceRow): PushDevice {
  return {
    token: row.token,
    platform: row.platform,
    provider: row.provider,
    listChanges: row.listChanges,
    householdNews: row.householdNews,
    runDone: row.runDone,
    reminders: row.reminders,
    lastSeenAt: row.lastSeenAt.toISOString(),
  };
}

/** Push devices on knex; one row per token, keyed by the token's SHA-256. */
export class KnexPushDeviceStore implements PushDeviceStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
  ) {}

  private mine(userId: string, token: string) {
    // The token itself is compared too: equal hashes of different tokens must still not match.
    return this.knex('pushDevices').where({ tokenHash: tokenHash(token), userId, token });
  }

  async register(userId: string, device: RegisterDevice): Promise<PushDevice> {
    const now = this.clock.now();
    const k = this.knex;
    // Same owner: the phone's own switches stay. A new owner starts like a new phone (all on):
    // the switches were the previous person's choices.
    const keepIfSameOwner = (column: string) => k.raw('case when ?? = excluded.user_id then ?? else true end', ['pushDevices.userId', `pushDevices.${column}`]);
    // One statement, atomic under concurrency: parallel PUTs of a token leave exactly one row.
    const rows = (await k('pushDevices')
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
      .returning(COLUMNS)) as DeviceRow[];
    return toDevice(rows[0]!);
  }

  async get(userId: string, token: string): Promise<PushDevice | undefined> {
    const row = (await this.mine(userId, token).first(COLUMNS)) as DeviceRow | undefined;
    return row && toDevice(row);
  }

  async setSwitches(userId: string, token: string, switches: DeviceSwitches): Promise<PushDevice | undefined> {
    const rows = (await this.mine(userId, token)
      .update({
        listChanges: switches.listChanges,
        householdNews: switches.householdNews,
        runDone: switches.runDone,
        // Left out or null keeps the value: an older client that knows three switches must not turn reminders off.
        ...(typeof switches.reminders === 'boolean' ? { reminders: switches.reminders } : {}),
        updatedAt: this.clock.now(),
      })
      .returning(COLUMNS)) as DeviceRow[];
    return rows[0] && toDevice(rows[0]);
  }

  async remove(userId: string, token: string): Promise<boolean> {
    return (await this.mine(userId, token).delete()) > 0;
  }

  async devicesFor(userId: string, kind: PushKind): Promise<PushDevice[]> {
    if (!Object.hasOwn(KIND_COLUMN, kind)) throw new TypeError(`Unknown push kind: ${String(kind)}`);
    const rows = (await this.knex('pushDevices')
      .select(COLUMNS)
      .where({ userId, [KIND_COLUMN[kind]]: true })
      .orderBy([{ column: 'lastSeenAt', order: 'desc' }, { column: 'token' }])) as DeviceRow[];
    return rows.map(toDevice);
  }
}
