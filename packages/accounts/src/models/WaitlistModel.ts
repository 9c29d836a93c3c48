import { BaseModel, objection } from '@svc/db';
import { AccountModel } from './AccountModel.js';

/** One row of `waitlist`: someone waiting for intake, by account or (before sign-up) by address. */
export class WaitlistModel extends BaseModel {
  static override tableName = 'waitlist';
  static override timestamps = ['createdAt'];
  /** The store lists the waitlist with each linked account's current address (a join). */
  static override relationMappings = () => ({
    account: {
      relation: objection.Model.BelongsToOneRelation,
      modelClass: AccountModel,
      join: { from: 'waitlist.account_id', to: 'accounts.id' },
    },
  });
  declare id: string;
  declare accountId: string | null;
  declare emailNormalized: string | null;
  declare reason: string;
  declare createdAt: string;
}
