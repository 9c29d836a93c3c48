import { declareLink, declareRead, type Pojo, type ReadDeclaration, type ReadLink } from '@svc/db';
import { AccountIdentityModel, AccountModel, AccountSessionModel } from './models/index.js';

/** An account's display name, lent to other packages' declared reads (GET …/members names members by it), as `AccountDirectory.profiles` reads it. */
export const accountNameLink: ReadLink = declareLink({ model: AccountModel, key: 'id', field: 'displayName' });

/** An account's current security stamp: a session signed in under another one is over. */
const accountStamp: ReadLink = declareLink({ model: AccountModel, key: 'id', field: 'securityStamp' });

/**
 * GET /me/sessions: the caller's live sessions (unexpired by the statement's clock, holding the
 * account's current security stamp), newest sign-in first, each with the columns
 * `AccountSessionModel.toApi` makes a SessionResponse of (its fallbacks for rows written before the
 * columns existed included) and whether it is the session being read (`current`).
 */
/** What `identitiesRead` loads: the identities' rows, or with second factors lent the rows and their summary. */
export type LoadedIdentities = Pojo[] | { rows: Pojo[]; totpConfirmedAt: string | null; passkeys: number };

export const sessionsRead: ReadDeclaration<Pojo[]> = declareRead({
  name: 'accounts_sessions',
  model: AccountSessionModel,
  scope: { account: 'accountId' },
  fields: ['publicId', 'createdAt', 'expire', 'lastSeenAt', 'userAgent', 'method', { name: 'current', session: 'sid' }],
  unexpired: 'expire',
  matches: [{ column: 'sess', key: 'stamp', link: accountStamp, by: 'accountId' }],
  list: { orderBy: [{ column: 'createdAt', order: 'desc' }, { column: 'publicId' }] },
});

/**
 * The fields of the caller's second factors another package lends to GET /me/logins' read (from
 * @svc/sign-in-factors, handed in by the host): when TOTP was confirmed (on when not null) and how
 * many passkeys the account has.
 */
export interface SecondFactorLinks {
  /** When TOTP was confirmed: on when not null. */
  readonly totpConfirmedAt: ReadLink;
  /** How many passkeys the account has (a counting link). */
  readonly passkeys: ReadLink;
}

/**
 * GET /me/logins: the caller's linked identities, oldest link first (the account's `hasPassword`
 * comes with the session), and with `secondFactors` their summary, in the same statement: the value
 * is then `{ rows, totpConfirmedAt, passkeys }`.
 */
export function identitiesRead(secondFactors?: SecondFactorLinks): ReadDeclaration<LoadedIdentities> {
  return declareRead({
    name: 'accounts_identities',
    model: AccountIdentityModel,
    scope: { account: 'accountId' },
    fields: ['provider', 'email', 'createdAt'],
    list: { orderBy: [{ column: 'createdAt' }, { column: 'id' }] },
    ...(secondFactors && { withAccount: { totpConfirmedAt: secondFactors.totpConfirmedAt, passkeys: secondFactors.passkeys } }),
  });
}
