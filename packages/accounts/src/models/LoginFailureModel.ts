import { BaseModel } from '@svc/db';

/** One row of `login_failures` (keyed by address): the wrong passwords of the window and the lock they started. */
export class LoginFailureModel extends BaseModel {
  static override tableName = 'login_failures';
  static override idColumn = 'emailNormalized';
  declare emailNormalized: string;
  declare failures: number;
  /** A Date (not in `timestamps`): the 423's Retry-After is computed from it, and a release compares it exactly. */
  declare lockedUntil: Date | null;
  declare updatedAt: Date;
}
