import { createHmac } from 'node:crypto';
import type { RandomBytes } from '@svc/contracts';
import { type Infer, singleLine, TOKEN_SCOPES, type TypedSchema } from '@svc/http-kit';

/**
 * Personal access tokens (decisions.md §8): `mp_pat_` and 256 random bits, base64url. The prefix
 * lets secret scanners (GitHub's, gitleaks) recognise a leaked one; only a keyed hash is stored.
 */
export const ACCESS_TOKEN_PREFIX = 'mp_pat_';

/** The shape of every token this service makes: anything else is refused before any lookup. */
const ACCESS_TOKEN_FORMAT = /^mp_pat_[A-Za-z0-9_-]{43}$/;

/** `Authorization: Bearer <token>` (RFC 6750 §2.1: the scheme in any letter case, then one space or more). */
const BEARER_HEADER = /^bearer[ \t]+(\S+)[ \t]*$/i;

/** A new token: the prefix and 32 random bytes. */
export function newAccessToken(random: RandomBytes): string {
  return ACCESS_TOKEN_PREFIX + random(32).toString('base64url');
}

/**
 * The token in an `Authorization` header when it is a bearer of this service's token shape;
 * `false` for a bearer that is not (malformed: 401 without a lookup), undefined for no bearer.
 */
export function bearerToken(header: string | undefined): string | false | undefined {
  if (header === undefined || !/^bearer(?:[ \t]|$)/i.test(header)) return undefined;
  const m = BEARER_HEADER.exec(header);
  return m && ACCESS_TOKEN_FORMAT.test(m[1]!) ? m[1]! : false;
}

/**
 * The keyed hash a token is stored and looked up by: HMAC-SHA256 under the server's token key,
 * base64url. Looked up by equality on a unique index (the hash of a guess is not comparable to
 * anything without the key), never compared in application code.
 */
export function accessTokenHash(key: string, token: string): string {
  return createHmac('sha256', key).update(token, 'utf8').digest('base64url');
}

/** The key the token hashes are made with when the host gives none: derived from the session secret, one key per purpose. */
export function defaultAccessTokenKey(sessionSecret: string): string {
  return createHmac('sha256', sessionSecret).update('accounts-personal-access-tokens').digest('base64url');
}

/** How far ahead `expiresAt` may be: one year (decisions.md §8). */
export function latestExpiry(now: Date): Date {
  const at = new Date(now.getTime());
  at.setUTCFullYear(at.getUTCFullYear() + 1);
  return at;
}

export const ACCESS_TOKEN_NAME_MAX = 100;

const scope = { type: 'string', enum: TOKEN_SCOPES } as const;

export const CreateAccessTokenRequest = {
  type: 'object',
  required: ['name', 'scopes'],
  properties: {
    name: {
      type: 'string',
      minLength: 1,
      maxLength: ACCESS_TOKEN_NAME_MAX,
      ...singleLine,
      description: '1 to 100 characters, not blank; one line without control characters (else 400 validation_failed)',
    },
    scopes: {
      type: 'array',
      minItems: 1,
      maxItems: 20,
      items: scope,
      description: 'one or more of the scopes (a scope named twice counts once); none, or an unknown one: 400 validation_failed',
    },
    expiresAt: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'when it stops working: in the future and at most a year ahead (else 400 validation_failed); left out or null: never',
    },
  },
} as const satisfies TypedSchema;
export type CreateAccessTokenBody = Infer<typeof CreateAccessTokenRequest>;

const tokenProperties = {
  id: { type: 'string', format: 'uuid' },
  name: { type: 'string' },
  scopes: { type: 'array', items: scope },
  createdAt: { type: 'string', format: 'date-time' },
  expiresAt: { type: ['string', 'null'], format: 'date-time', description: 'null: never expires' },
  lastUsedAt: { type: ['string', 'null'], format: 'date-time', description: 'the minute of its latest use (seconds zero); null: never used' },
} as const;

export const AccessTokenResponseSchema = {
  title: 'AccessTokenResponse',
  type: 'object',
  required: ['id', 'name', 'scopes', 'createdAt', 'expiresAt', 'lastUsedAt'],
  properties: tokenProperties,
} as const satisfies TypedSchema;
export type AccessTokenResponse = Infer<typeof AccessTokenResponseSchema>;

export const CreatedAccessTokenResponseSchema = {
  title: 'CreatedAccessTokenResponse',
  type: 'object',
  required: ['id', 'name', 'scopes', 'token', 'createdAt', 'expiresAt', 'lastUsedAt'],
  properties: {
    ...tokenProperties,
    token: { type: 'string', description: 'the token (`mp_pat_…`), shown this once: only a keyed hash of it is kept' },
  },
} as const satisfies TypedSchema;
export type CreatedAccessTokenResponse = Infer<typeof CreatedAccessTokenResponseSchema>;

export const AccessTokenListResponseSchema = {
  title: 'AccessTokenListResponse',
  type: 'object',
  required: ['items'],
  properties: { items: { type: 'array', items: AccessTokenResponseSchema, description: 'newest first, expired ones included, never the token itself' } },
} as const satisfies TypedSchema;

export const AccessTokenIdParams = {
  type: 'object',
  required: ['tokenId'],
  properties: { tokenId: { type: 'string', format: 'uuid', description: 'the `id` of GET /me/tokens' } },
} as const satisfies TypedSchema;
