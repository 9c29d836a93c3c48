import { BaseModel } from '@svc/db';

/** One row of `login_failures` (keyed by address), as account deletion touches it. */
export class LoginFailureModel extends BaseModel {
  static override tableName = 'login_failures';
  static override idColumn = 'emailNormalized';
  declare emailNormalized: string;
}
