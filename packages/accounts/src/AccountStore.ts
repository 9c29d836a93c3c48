import type { Knex } from 'knex';
import type { TokenPurpose } from './tokens.js';

/** An account row. Internal: the API sees it through `toUserResponse` / `MeResponse`. */
export interface Account {
  id: string;
  email: string | null;
  emailNormalized: string | null;
  displayName: string;
  passwordHash: string | null;
  emailConfirmed: boolean;
  securityStamp: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewAccount {
  email: string | null;
  emailNormalized: string | null;
  displayName: string;
  passwordHash: string | null;
  emailConfirmed: boolean;
  securityStamp: string;
}

export interface TokenRow {
  id: string;
  accountId: string;
  purpose: TokenPurpose;
  email: string;
  emailNormalized: string;
  createdAt: Date;
  expiresAt: Date;
  usedAt: Date | null;
}

export interface NewToken {
  accountId: string;
  purpose: TokenPurpose;
  tokenHash: Buffer;
  email: string;
  emailNormalized: string;
  origin?: 'forgot_password' | 'email_change_notice';
  createdAt: Date;
  expiresAt: Date;
}

/** A mail row for the outbox (see Mailer). */
export interface OutboxMail {
  kind: string;
  recipient: string;
  subject: string;
  textBody: string;
  htmlBody: string;
}

export interface WaitlistEntry {
  email: string | null;
  accountId: string | null;
  reason: string;
  createdAt: string;
}

/** A query runner: the pool, or a transaction. */
export type Db = Knex | Knex.Transaction;

/** What the account logic needs from storage. Methods taking `trx` run inside the caller's transaction. */
export interface AccountStore {
  transaction<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T>;

  findById(id: string, db?: Db): Promise<Account | undefined>;
  findByEmail(emailNormalized: string, db?: Db): Promise<Account | undefined>;
  /** The row, locked FOR UPDATE until `trx` ends (serialises the token flows of one account). */
  lockById(trx: Knex.Transaction, id: string): Promise<Account | undefined>;
  /** Inserts the account unless its address is taken; undefined when it was (races included). */
  insertIfNew(trx: Knex.Transaction, account: NewAccount, now: Date): Promise<Account | undefined>;
  updateDisplayName(id: string, displayName: string, now: Date): Promise<Account | undefined>;
  update(
    id: string,
    changes: Partial<Pick<Account, 'email' | 'emailNormalized' | 'passwordHash' | 'emailConfirmed' | 'securityStamp'>>,
    now: Date,
    db?: Db,
  ): Promise<Account | undefined>;
  /** True when another account signs in with that address. */
  emailTaken(emailNormalized: string, exceptId: string, db?: Db): Promise<boolean>;

  /** The row of that address, locked FOR UPDATE until `trx` ends; undefined when the address has no account. */
  lockByEmail(trx: Knex.Transaction, emailNormalized: string): Promise<Account | undefined>;
  /**
   * ONE statement whatever `send` is, so that a branch that mails and one that does not cost the
   * same (enumeration). When `send`: `token` (if any) is inserted, retiring every other live token
   * of its account and purpose (a newer link replaces the older ones), and the mail goes into the
   * outbox. When not: nothing is written.
   */
  writeMail(trx: Knex.Transaction, m: { send: boolean; token?: NewToken; mail: OutboxMail; now: Date }): Promise<void>;
  /** The token row if it is unused and unexpired, matches purpose, account and address; not spent. */
  findLiveToken(
    q: { tokenHash: Buffer; purpose: TokenPurpose; accountId: string; emailNormalized?: string; now: Date },
    db?: Db,
  ): Promise<TokenRow | undefined>;
  /** Marks the matching live token used; undefined when there was none (already spent: only one caller wins). */
  spendToken(trx: Db, q: { tokenHash: Buffer; purpose: TokenPurpose; accountId: string; emailNormalized?: string; now: Date }): Promise<TokenRow | undefined>;
  /** Marks every live token of these purposes used (one statement). */
  retireTokens(trx: Db, accountId: string, purposes: readonly TokenPurpose[], now: Date): Promise<void>;
  /** When the newest token of that purpose (and origin) was issued. */
  lastTokenIssuedAt(trx: Db, accountId: string, purpose: TokenPurpose, origin?: string): Promise<Date | undefined>;

  /**
   * Counts one request for unasked mail against each key (`to:<address>`, `ip:<address>`) in one
   * statement, restarting a key's count when its window (`windowMs`) has passed; answers the
   * counts after this request, by key.
   */
  countUnaskedMail(trx: Db, keys: string[], windowMs: number, now: Date): Promise<Map<string, number>>;

  /**
   * Reserves one password attempt for `key` BEFORE the password is checked (one statement, so it
   * holds across connections and instances): answers the attempt's place in the window and the
   * lock it started (when it was the `maxFailures`-th), or undefined while a lock runs. A lock that
   * has run out starts a new window. A running lock is never extended.
   */
  reserveLoginAttempt(key: string, maxFailures: number, lockUntil: Date, now: Date): Promise<{ failures: number; lockedUntil: Date | null } | undefined>;
  /**
   * The password was right: the count starts again. A lock started by another attempt meanwhile
   * stays; a lock this attempt started itself (`ownLock`) is lifted.
   */
  releaseLoginAttempt(key: string, ownLock: Date | null): Promise<void>;
  /** When the lock of `key` ends (null: none recorded), for the 423's Retry-After. */
  lockEnd(key: string): Promise<Date | null>;
  clearLoginFailures(key: string, db?: Db): Promise<void>;

  /** Links waitlist entries made for this address before the account existed. */
  linkWaitlist(trx: Db, accountId: string, emailNormalized: string): Promise<void>;
  addToWaitlist(accountId: string, reason: string, now: Date): Promise<boolean>;
  listWaitlist(): Promise<WaitlistEntry[]>;
  /** Deletes what no rule reads any more; answers rows deleted per table. */
  prune(now: Date): Promise<Record<string, number>>;
  profiles(ids: string[]): Promise<Map<string, { id: string; email: string | null; displayName: string }>>;
}
