import { BaseModel, objection, rowSchema, TimestampSchema } from '@svc/db';
import type { SignInMethod } from '../AccountSessionStore.js';
import { type SessionResponse, SessionResponseSchema } from '../schemas.js';
import { AccountModel } from './AccountModel.js';

/**
 * One row of `account_sessions` (the `sid`, `sess`, `expire` layout express-session used, plus the columns GET /me/sessions
 * reads). `sid` is the session id, a secret: it never leaves the package; `publicId` is the handle.
 */
export class AccountSessionModel extends BaseModel {
  static override tableName = 'account_sessions';
  static override idColumn = 'sid';
  static override timestamps = ['expire', 'createdAt', 'lastSeenAt'];
  static override jsonSchema = rowSchema(SessionResponseSchema, {
    sid: { type: 'string' },
    sess: { type: 'object' },
    expire: TimestampSchema,
    accountId: { type: ['string', 'null'], format: 'uuid' },
    publicId: { type: 'string', format: 'uuid' },
    createdAt: { type: ['string', 'null'], format: 'date-time' },
    lastSeenAt: { type: ['string', 'null'], format: 'date-time' },
    method: { type: ['string', 'null'] },
  });
  /** The session's account, whose current security stamp a live session holds (`sessionsRead` matches it). */
  static override relationMappings = () => ({
    account: {
      relation: objection.Model.BelongsToOneRelation,
      modelClass: AccountModel,
      join: { from: 'account_sessions.account_id', to: 'accounts.id' },
    },
  });

  declare sid: string;
  declare sess: { accountId?: string; stamp?: string } & Record<string, unknown>;
  declare expire: string;
  declare accountId: string | null;
  declare publicId: string;
  declare createdAt: string | null;
  declare lastSeenAt: string | null;
  declare userAgent: string | null;
  declare method: SignInMethod | null;

  /** SessionResponse; `current`: whether this is the session of the request asking. */
  toApi(current: boolean): SessionResponse {
    const createdAt = this.createdAt ?? this.expire;
    return {
      id: this.publicId,
      createdAt,
      lastSeenAt: this.lastSeenAt ?? createdAt,
      userAgent: this.userAgent,
      method: this.method ?? 'password',
      current,
    };
  }
}
