import { createHash } from 'node:crypto';
import { BaseModel, rowSchema, TimestampSchema } from '@svc/db';
import { type PushDevice, PushDeviceSchema, type PushPlatform } from '../schemas.js';

/** The key of a token: tokens can be longer than a btree entry may be. */
export function tokenHash(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** A phone registered for push: one row of `push_devices` per token, keyed by the token's SHA-256. */
export class PushDeviceModel extends BaseModel {
  static override tableName = 'push_devices';
  static override idColumn = 'tokenHash';
  static override timestamps = ['lastSeenAt', 'createdAt', 'updatedAt'];
  static override jsonSchema = rowSchema(PushDeviceSchema, {
    userId: { type: 'string', format: 'uuid' },
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
  });

  declare tokenHash: Buffer;
  declare token: string;
  /** The account the phone belongs to now (an opaque id from @svc/accounts). */
  declare userId: string;
  declare platform: PushPlatform;
  declare provider: string;
  declare listChanges: boolean;
  declare householdNews: boolean;
  declare runDone: boolean;
  declare reminders: boolean;
  declare lastSeenAt: string;
  declare quietHours: { start: string; end: string } | null;
  declare createdAt: string;
  declare updatedAt: string;

  /** PushDeviceResponse: the row without its key, owner and bookkeeping. */
  toApi(): PushDevice {
    return {
      token: this.token,
      platform: this.platform,
      provider: this.provider,
      listChanges: this.listChanges,
      householdNews: this.householdNews,
      runDone: this.runDone,
      reminders: this.reminders,
      lastSeenAt: this.lastSeenAt,
      quietHours: this.quietHours ?? null,
    };
  }
}
