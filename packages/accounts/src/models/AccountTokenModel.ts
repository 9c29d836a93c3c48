import { BaseModel } from '@svc/db';
import type { TokenPurpose } from '../tokens.js';

/** One row of `account_tokens` (mailed links, stored hashed). */
export class AccountTokenModel extends BaseModel {
  static override tableName = 'account_tokens';
  static override timestamps = ['createdAt', 'expiresAt', 'usedAt'];
  declare id: string;
  declare accountId: string;
  declare purpose: TokenPurpose;
  declare tokenHash: Buffer;
  declare email: string;
  declare emailNormalized: string;
  /** Why a reset link was issued (`forgot_password`, `email_change_notice`); null for the other purposes. */
  declare origin: string | null;
  declare createdAt: string;
  declare expiresAt: string;
  declare usedAt: string | null;
}
