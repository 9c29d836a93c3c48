import { BaseModel } from '@svc/db';

/** One row of `waitlist`: someone waiting for intake, by account or (before sign-up) by address. */
export class WaitlistModel extends BaseModel {
  static override tableName = 'waitlist';
  static override timestamps = ['createdAt'];
  declare id: string;
  declare accountId: string | null;
  declare emailNormalized: string | null;
  declare reason: string;
  declare createdAt: string;
}
