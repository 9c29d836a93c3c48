import { BaseModel, rowSchema, TimestampSchema } from '@svc/db';
import { CalendarFeedSchema } from '../schemas.js';

/**
 * One row of `calendar_feeds`: the current secret address of a household's calendar. Of the API
 * shape only `createdAt` is a column (the `url` is rebuilt from the sealed token).
 */
export class CalendarFeedModel extends BaseModel {
  static override tableName = 'calendar_feeds';
  static override idColumn = 'householdId';
  static override timestamps = ['createdAt'];
  static override binaries = ['tokenHash', 'sealedToken'];
  static override jsonSchema = rowSchema(CalendarFeedSchema, { householdId: { type: 'string', format: 'uuid' }, createdAt: TimestampSchema });

  /** The household (an opaque id from @svc/households); one feed per household. */
  declare householdId: string;
  /** SHA-256 of the token: the only form in which the feed route can find it. */
  declare tokenHash: Buffer;
  /** AES-256-GCM sealed token (IV, tag, ciphertext), so adults can read their address again. */
  declare sealedToken: Buffer;
  declare createdAt: string;
}
