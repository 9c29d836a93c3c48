import { BaseModel, rowSchema, TimestampSchema } from '@svc/db';

/**
 * One row of `spent_external_cookies`: the id (jti) of an external sign-in cookie that the
 * callback has spent. Spending is an insert that ignores a conflict on the id (the store's
 * statement), so a copied cookie value signs in at most once.
 */
export class SpentExternalCookieModel extends BaseModel {
  static override tableName = 'spent_external_cookies';
  static override idColumn = 'jti';
  static override timestamps = ['expiresAt'];
  static override jsonSchema = rowSchema(
    {},
    {
      jti: { type: 'string' },
      expiresAt: TimestampSchema,
    },
  );

  declare jti: string;
  /** The cookie's own expiry; housekeeping deletes the row a day later. */
  declare expiresAt: string;
}
