import { BaseModel } from '@svc/db';

/** One row of `account_tokens` (mailed links, stored hashed), as account deletion touches it. */
export class AccountTokenModel extends BaseModel {
  static override tableName = 'account_tokens';
  declare id: string;
  declare accountId: string;
  declare purpose: string;
  declare email: string;
  declare emailNormalized: string;
}
