import type { Knex } from 'knex';
import type { Account, Db } from '../store.js';
import type { ProviderName } from './config.js';

export interface NewIdentityLink {
  accountId: string;
  provider: ProviderName;
  subject: string;
  email: string | null;
  emailVerified: boolean;
  createdAt: Date;
}

export interface NewAppCode {
  codeHash: Buffer;
  accountId: string;
  codeChallenge: string;
  redirectUri: string;
  /** The provider of the identity, for the session the exchange opens. */
  method: ProviderName;
  createdAt: Date;
  expiresAt: Date;
}

export interface SpentAppCode {
  accountId: string;
  codeChallenge: string;
  expiresAt: Date;
  /** Null for a code issued before the column existed. */
  method: ProviderName | null;
}

/** What social sign-in needs from storage besides the accounts themselves. A method that can join the caller's transaction takes it as its last argument `trx`. */
export interface IdentityStore {
  /** The account linked to this identity, in one query. */
  findLinkedAccount(provider: ProviderName, subject: string): Promise<Account | undefined>;
  /** Links the identity; a concurrent link of the same identity fails with a unique violation. */
  insertLink(link: NewIdentityLink, trx?: Db): Promise<void>;
  /** True when the account's owner unlinked this identity (DELETE /me/logins/{provider}) and has not linked it again. */
  wasUnlinked(accountId: string, provider: ProviderName, subject: string): Promise<boolean>;
  /** The identity is linked again (by the signed-in owner): it is no longer remembered as unlinked. */
  forgetUnlinked(accountId: string, provider: ProviderName, subject: string, trx?: Db): Promise<void>;
  insertAppCode(code: NewAppCode): Promise<void>;
  /**
   * Marks the code used and answers what it was bound to, or undefined when it is unknown or was
   * already used. One UPDATE … WHERE used_at IS NULL: of any number of concurrent callers exactly
   * one gets the row, whether or not its verifier then matches.
   */
  spendAppCode(codeHash: Buffer, now: Date): Promise<SpentAppCode | undefined>;
  /**
   * A code presented again after its first exchange (RFC 6749 §4.1.2): marks it replayed and deletes
   * the session its first exchange created, in one statement. Answers whether the code was known.
   */
  revokeReplayedAppCode(codeHash: Buffer, now: Date): Promise<boolean>;
  /**
   * Records the session the exchange created, so that a later replay of the code revokes it.
   */
  recordAppCodeSession(codeHash: Buffer, sessionId: string): Promise<void>;
  /**
   * Records a native identity token (by its nonce, or its hash) as used and answers true, or false
   * when it was used before. One INSERT … ON CONFLICT DO NOTHING RETURNING on the primary key.
   */
  spendIdentityToken(key: string, expiresAt: Date): Promise<boolean>;
  /** Deletes used identity-token keys a day past the token's expiry; answers how many. */
  pruneSpentIdentityTokens(now: Date): Promise<number>;
  /** Deletes codes expired over a day ago; answers how many. */
  prune(now: Date): Promise<number>;
  /**
   * Records an external cookie's id as spent and answers true, or false when it was spent before.
   * One INSERT … ON CONFLICT DO NOTHING RETURNING on the primary key: of any number of concurrent
   * callers with the same id exactly one gets true.
   */
  spendExternalCookie(jti: string, expiresAt: Date): Promise<boolean>;
  /** Deletes spent external-cookie ids a day past their cookie's expiry; answers how many. */
  pruneSpentExternalCookies(now: Date): Promise<number>;
  transaction<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T>;
}
