import { BaseModel, rowSchema, TimestampSchema } from '@svc/db';
import { type AccessTokenResponse, AccessTokenResponseSchema } from '../access-tokens.js';

/** One row of `personal_access_tokens`: a person's token, kept as its keyed hash (`tokenHash`, which never leaves the package). */
export class PersonalAccessTokenModel extends BaseModel {
  static override tableName = 'personal_access_tokens';
  static override timestamps = ['createdAt', 'expiresAt', 'lastUsedAt'];
  /** `scopes` is a text[] column, written as an array (not JSON). */
  static override jsonAttributes: string[] = [];
  static override jsonSchema = rowSchema(AccessTokenResponseSchema, {
    accountId: { type: 'string', format: 'uuid' },
    tokenHash: { type: 'string' },
    createdAt: TimestampSchema,
    expiresAt: { type: ['string', 'null'], format: 'date-time' },
    lastUsedAt: { type: ['string', 'null'], format: 'date-time' },
  });

  declare id: string;
  declare accountId: string;
  declare name: string;
  declare scopes: string[];
  declare tokenHash: string;
  declare createdAt: string;
  declare expiresAt: string | null;
  declare lastUsedAt: string | null;

  /** What GET /me/tokens answers for it (never the hash). */
  toApi(): AccessTokenResponse {
    return {
      id: this.id,
      name: this.name,
      scopes: this.scopes as AccessTokenResponse['scopes'],
      createdAt: this.createdAt,
      expiresAt: this.expiresAt,
      lastUsedAt: this.lastUsedAt,
    };
  }
}
