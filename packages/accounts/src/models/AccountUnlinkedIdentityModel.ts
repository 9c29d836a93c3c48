import { BaseModel, rowSchema, TimestampSchema } from '@svc/db';

/**
 * One row of `account_unlinked_identities`: a Google or Apple identity its owner unlinked from the
 * account (DELETE /me/logins/{provider}). Social sign-in never links it to that account again by
 * its address alone; only the owner, signed in to the account, links it back (and the row goes).
 * Written by the person store's upsert; read by the identity store.
 */
export class AccountUnlinkedIdentityModel extends BaseModel {
  static override tableName = 'account_unlinked_identities';
  static override idColumn = ['accountId', 'provider', 'subject'];
  static override timestamps = ['unlinkedAt'];
  static override jsonSchema = rowSchema(
    {},
    {
      accountId: { type: 'string', format: 'uuid' },
      provider: { type: 'string', enum: ['google', 'apple'] },
      subject: { type: 'string' },
      unlinkedAt: TimestampSchema,
    },
  );

  declare accountId: string;
  declare provider: 'google' | 'apple';
  declare subject: string;
  declare unlinkedAt: string;
}
