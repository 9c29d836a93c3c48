import { BaseModel, rowSchema, TimestampSchema } from '@svc/db';

/**
 * One row of `spent_identity_tokens`: a native Apple identity token already used to sign in.
 * Spending is an insert that ignores a conflict on the key (the store's statement), so of two
 * parallel sign-ins with one token exactly one finds its row inserted.
 */
export class SpentIdentityTokenModel extends BaseModel {
  static override tableName = 'spent_identity_tokens';
  static override idColumn = 'key';
  static override timestamps = ['expiresAt'];
  static override jsonSchema = rowSchema(
    {},
    {
      key: { type: 'string' },
      expiresAt: TimestampSchema,
    },
  );

  /** `'apple:nonce:'` + the token's nonce, or `'apple:token:'` + SHA-256 of a token without one. */
  declare key: string;
  /** The token's own expiry; housekeeping deletes the row a day later. */
  declare expiresAt: string;
}
