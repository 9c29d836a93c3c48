import { BaseModel, objection, rowSchema, TimestampSchema } from '@svc/db';
import { type ExportedAccount, ExportedAccountSchema } from '../schemas.js';
import { AccountIdentityModel } from './AccountIdentityModel.js';

/** One row of `accounts`. The password hash and the security stamp never leave the package. */
export class AccountModel extends BaseModel {
  static override tableName = 'accounts';
  static override timestamps = ['createdAt', 'updatedAt'];
  static override jsonSchema = rowSchema(ExportedAccountSchema, {
    emailNormalized: { type: ['string', 'null'] },
    passwordHash: { type: ['string', 'null'] },
    securityStamp: { type: 'string' },
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
  });
  /** Social sign-in finds the account of a linked identity by joining them. */
  static override relationMappings = () => ({
    identities: {
      relation: objection.Model.HasManyRelation,
      modelClass: AccountIdentityModel,
      join: { from: 'accounts.id', to: 'account_identities.account_id' },
    },
  });

  declare id: string;
  declare email: string | null;
  declare emailNormalized: string | null;
  declare displayName: string;
  declare passwordHash: string | null;
  declare emailConfirmed: boolean;
  declare securityStamp: string;
  declare createdAt: string;
  declare updatedAt: string;

  /** The account as the export shows it: no hash, no stamp. */
  toExport(): ExportedAccount {
    return {
      id: this.id,
      email: this.email,
      displayName: this.displayName,
      emailConfirmed: this.emailConfirmed,
      hasPassword: this.passwordHash !== null,
      createdAt: this.createdAt,
      updatedAt: this.updatedAt,
    };
  }
}
