import { BaseModel, rowSchema, TimestampSchema } from '@svc/db';
import { type LinkedIdentity, LinkedIdentitySchema } from '../schemas.js';

/** One row of `account_identities`: a Google or Apple identity linked to an account. */
export class AccountIdentityModel extends BaseModel {
  static override tableName = 'account_identities';
  static override timestamps = ['createdAt'];
  static override jsonSchema = rowSchema(LinkedIdentitySchema, {
    id: { type: 'string', format: 'uuid' },
    accountId: { type: 'string', format: 'uuid' },
    subject: { type: 'string' },
    emailVerified: { type: 'boolean' },
    createdAt: TimestampSchema,
  });

  declare id: string;
  declare accountId: string;
  declare provider: LinkedIdentity['provider'];
  /** The provider's user id: never shown (it is how the provider knows the person, not ours to hand out). */
  declare subject: string;
  declare email: string | null;
  declare emailVerified: boolean;
  declare createdAt: string;

  toApi(): LinkedIdentity {
    return { provider: this.provider, email: this.email, linkedAt: this.createdAt };
  }
}
