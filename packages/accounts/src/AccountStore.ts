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

  insertToken(trx: Db, token: NewToken): Promise<void>;
  /** The token row if it is unused and unexpired, matches purpose, account and address; not spent. */
  findLiveToken(
    q: { tokenHash: Buffer; purpose: TokenPurpose; accountId: string; emailNormalized?: string; now: Date },
    db?: Db,
  ): Promise<TokenRow | undefined>;
  /** Marks the matching live token used; undefined when there was none (already spent: only one caller wins). */
  spendToken(trx: Db, q: { tokenHash: Buffer; purpose: TokenPurpose; accountId: string; emailNormalized?: string; now: Date }): Promise<TokenRow | undefined>;
  /** Marks every other live token of that purpose used. */
  spendAllTokens(trx: Db, accountId: string, purpose: TokenPurpose, now: Date): Promise<void>;
  /** When the newest token of that purpose (and origin) was issued. */
  lastTokenIssuedAt(trx: Db, accountId: string, purpose: TokenPurpose, origin?: string): Promise<Date | undefined>;

  lockedUntil(emailNormalized: string): Promise<Date | undefined>;
  /** Counts a wrong password; at `maxFailures` in a row the key locks until `lockUntil`. Never extends a running lock. */
  recordLoginFailure(emailNormalized: string, maxFailures: number, lockUntil: Date, now: Date): Promise<void>;
  clearLoginFailures(emailNormalized: string, db?: Db): Promise<void>;

  /** Links waitlist entries made for this address before the account existed. */
  linkWaitlist(trx: Db, accountId: string, emailNormalized: string): Promise<void>;
  addToWaitlist(accountId: string, reason: string, now: Date): Promise<boolean>;
  listWaitlist(): Promise<WaitlistEntry[]>;
  /** Deletes what no rule reads any more; answers rows deleted per table. */
  prune(now: Date): Promise<Record<string, number>>;
  profiles(ids: string[]): Promise<Map<string, { id: string; email: string | null; displayName: string }>>;
}
