import { BaseModel } from '@svc/db';

/** One row of `waitlist`, as account deletion touches it. */
export class WaitlistModel extends BaseModel {
  static override tableName = 'waitlist';
  declare id: string;
  declare accountId: string | null;
  declare emailNormalized: string | null;
}
