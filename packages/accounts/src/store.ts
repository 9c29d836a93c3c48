import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
// Each model from its own file: the models' index reaches sessions.ts (AccountSessionModel), which imports this file.
import { AccountModel } from './models/AccountModel.js';
import { AccountTokenModel } from './models/AccountTokenModel.js';
import { LoginFailureModel } from './models/LoginFailureModel.js';
import { MailOutboxModel } from './models/MailOutboxModel.js';
import { UnaskedMailCountModel } from './models/UnaskedMailCountModel.js';
import { WaitlistModel } from './models/WaitlistModel.js';
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
  /** ISO 8601 (the model's `static timestamps`), like every timestamp a store answers. */
  createdAt: string;
  updatedAt: string;
}

/** An account to insert: the row without what the database and the store give it. */
export type NewAccount = Omit<Account, 'id' | 'createdAt' | 'updatedAt'>;

export interface TokenRow {
  id: string;
  accountId: string;
  purpose: TokenPurpose;
  email: string;
  emailNormalized: string;
  /** ISO 8601, as the model reads them. */
  createdAt: string;
  expiresAt: string;
  usedAt: string | null;
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

/** Which live token: its hash, purpose and account (and address, when the link names one), at `now`. */
export interface TokenQuery {
  tokenHash: Buffer;
  purpose: TokenPurpose;
  accountId: string;
  emailNormalized?: string;
  now: Date;
}

/** A query runner: the pool, or a transaction. */
export type Db = Knex | Knex.Transaction;

/**
 * What the account logic needs from storage. A method that can join the caller's transaction takes
 * it as its last argument `trx` (optional where the statement also makes sense on its own; the
 * row locks require one).
 */
export interface AccountStore {
  transaction<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T>;

  findById(id: string, trx?: Db): Promise<Account | undefined>;
  findByEmail(emailNormalized: string, trx?: Db): Promise<Account | undefined>;
  /** The row, locked FOR UPDATE until `trx` ends (serialises the token flows of one account). */
  lockById(id: string, trx: Knex.Transaction): Promise<Account | undefined>;
  /** Inserts the account unless its address is taken; undefined when it was (races included). */
  insertIfNew(account: NewAccount, now: Date, trx?: Db): Promise<Account | undefined>;
  updateDisplayName(id: string, displayName: string, now: Date): Promise<Account | undefined>;
  update(
    id: string,
    changes: Partial<Pick<Account, 'email' | 'emailNormalized' | 'displayName' | 'passwordHash' | 'emailConfirmed' | 'securityStamp'>>,
    now: Date,
    trx?: Db,
  ): Promise<Account | undefined>;
  /**
   * Replaces the password hash only while it is still `oldHash` (a password changed meanwhile
   * stays changed); the security stamp is kept: the password itself did not change.
   */
  replacePasswordHash(id: string, oldHash: string, newHash: string, now: Date): Promise<boolean>;
  /** True when another account signs in with that address. */
  emailTaken(emailNormalized: string, exceptId: string, trx?: Db): Promise<boolean>;

  /** The row of that address, locked FOR UPDATE until `trx` ends; undefined when the address has no account. */
  lockByEmail(emailNormalized: string, trx: Knex.Transaction): Promise<Account | undefined>;
  /**
   * ONE statement whatever `send` is, so that a branch that mails and one that does not cost the
   * same (enumeration). When `send`: `token` (if any) is inserted, retiring every other live token
   * of its account and purpose (a newer link replaces the older ones), and the mail goes into the
   * outbox. When not: nothing is written.
   */
  writeMail(m: { send: boolean; token?: NewToken; mail: OutboxMail; now: Date }, trx?: Db): Promise<void>;
  /** The token row if it is unused and unexpired, matches purpose, account and address; not spent. */
  findLiveToken(q: TokenQuery, trx?: Db): Promise<TokenRow | undefined>;
  /** Marks the matching live token used; undefined when there was none (already spent: only one caller wins). */
  spendToken(q: TokenQuery, trx?: Db): Promise<TokenRow | undefined>;
  /** Marks every live token of these purposes used (one statement). */
  retireTokens(accountId: string, purposes: readonly TokenPurpose[], now: Date, trx?: Db): Promise<void>;
  /** When the newest token of that purpose (and origin) was issued. */
  lastTokenIssuedAt(q: { accountId: string; purpose: TokenPurpose; origin?: string }, trx?: Db): Promise<Date | undefined>;

  /**
   * Counts one request for unasked mail to `recipient` (a canonical address), and from `ip` when
   * known, in one statement, restarting a count whose window (`windowMs`) has passed. The
   * recipient's count is of requests; the IP's is of DISTINCT recipients: the IP's row keeps the
   * first `perIp` recipients of its window (hashed), and `ipAllowed` says whether this recipient
   * is one of them (a person asking again for their own address is not a new one).
   */
  countUnaskedMail(
    request: { recipient: string; ip?: string; perIp: number },
    windowMs: number,
    now: Date,
    trx?: Db,
  ): Promise<{ recipientCount: number; ipCount?: number; ipAllowed?: boolean }>;

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
  /**
   * The password was right but a second step is due: the attempt gives its failure back without
   * resetting the count (a lock it started itself is lifted), so only the completed second step
   * resets it.
   */
  returnLoginAttempt(key: string, ownLock: Date | null): Promise<void>;
  /** When the lock of `key` ends (null: none recorded), for the 423's Retry-After. */
  lockEnd(key: string): Promise<Date | null>;
  clearLoginFailures(key: string, trx?: Db): Promise<void>;

  /** Links waitlist entries made for this address before the account existed. */
  linkWaitlist(accountId: string, emailNormalized: string, trx?: Db): Promise<void>;
  addToWaitlist(accountId: string, reason: string, now: Date): Promise<boolean>;
  listWaitlist(): Promise<WaitlistEntry[]>;
  /** Deletes what no rule reads any more; answers rows deleted per table. */
  prune(now: Date): Promise<Record<string, number>>;
  profiles(ids: string[]): Promise<Map<string, { id: string; email: string | null; displayName: string }>>;
}

/** The columns an Account is read with. */
export const ACCOUNT_COLUMNS = ['id', 'email', 'emailNormalized', 'displayName', 'passwordHash', 'emailConfirmed', 'securityStamp', 'createdAt', 'updatedAt'];
/** The nil UUID: a placeholder account id for statements that write nothing (see writeMail). */
const NIL_UUID = '00000000-0000-0000-0000-000000000000';

const TOKEN_COLUMNS = ['id', 'accountId', 'purpose', 'email', 'emailNormalized', 'createdAt', 'expiresAt', 'usedAt'];

/** The plain Account of a row the model read (no model instance leaves the store). */
export function toAccount(m: AccountModel): Account {
  return {
    id: m.id,
    email: m.email,
    emailNormalized: m.emailNormalized,
    displayName: m.displayName,
    passwordHash: m.passwordHash,
    emailConfirmed: m.emailConfirmed,
    securityStamp: m.securityStamp,
    createdAt: m.createdAt,
    updatedAt: m.updatedAt,
  };
}

function toTokenRow(m: AccountTokenModel): TokenRow {
  return {
    id: m.id,
    accountId: m.accountId,
    purpose: m.purpose,
    email: m.email,
    emailNormalized: m.emailNormalized,
    createdAt: m.createdAt,
    expiresAt: m.expiresAt,
    usedAt: m.usedAt,
  };
}

/**
 * AccountStore on Objection: the reads and writes of accounts, tokens, login failures and the
 * waitlist go through the package's models, bound once in the constructor (`Model.query(trx)`
 * joins a caller's transaction). The few statements Objection cannot express are written with the
 * bound model's knex and say why.
 */
export class ObjectionAccountStore implements AccountStore {
  private readonly Account: typeof AccountModel;
  private readonly Token: typeof AccountTokenModel;
  private readonly LoginFailure: typeof LoginFailureModel;
  private readonly Waitlist: typeof WaitlistModel;
  private readonly Outbox: typeof MailOutboxModel;
  private readonly UnaskedMailCount: typeof UnaskedMailCountModel;

  constructor(private readonly knex: Knex) {
    this.Account = AccountModel.bindKnex(knex);
    this.Token = AccountTokenModel.bindKnex(knex);
    this.LoginFailure = LoginFailureModel.bindKnex(knex);
    this.Waitlist = WaitlistModel.bindKnex(knex);
    this.Outbox = MailOutboxModel.bindKnex(knex);
    this.UnaskedMailCount = UnaskedMailCountModel.bindKnex(knex);
  }

  transaction<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return this.knex.transaction(fn);
  }

  async findById(id: string, trx?: Db): Promise<Account | undefined> {
    const row = await this.Account.query(trx).select(ACCOUNT_COLUMNS).findById(id);
    return row && toAccount(row);
  }

  async findByEmail(emailNormalized: string, trx?: Db): Promise<Account | undefined> {
    const row = await this.Account.query(trx).select(ACCOUNT_COLUMNS).where({ emailNormalized }).first();
    return row && toAccount(row);
  }

  async lockByEmail(emailNormalized: string, trx: Knex.Transaction): Promise<Account | undefined> {
    const row = await this.Account.query(trx).select(ACCOUNT_COLUMNS).where({ emailNormalized }).forUpdate().first();
    return row && toAccount(row);
  }

  async lockById(id: string, trx: Knex.Transaction): Promise<Account | undefined> {
    const row = await this.Account.query(trx).select(ACCOUNT_COLUMNS).where({ id }).forUpdate().first();
    return row && toAccount(row);
  }

  async insertIfNew(account: NewAccount, now: Date, trx?: Db): Promise<Account | undefined> {
    // Written with knex: Objection cannot put an insert and an update into one statement's CTEs.
    // ON CONFLICT DO NOTHING waits for a concurrent insert of the same address and then yields:
    // parallel sign-ups make exactly one account without an error for the others. Waitlist entries
    // made for the address before the account existed become the new account's in the same
    // statement (one statement fewer for a fresh sign-up, whose statement count must equal a
    // taken address's).
    const db = trx ?? this.Account.knex();
    const inserted = db('accounts')
      .insert({ ...account, createdAt: now, updatedAt: now })
      .onConflict('emailNormalized')
      .ignore()
      .returning(ACCOUNT_COLUMNS);
    const rows: Record<string, unknown>[] = await db
      .with('inserted', inserted)
      .with(
        'waitlisted',
        db('waitlist')
          .update({ accountId: db.raw('(select id from inserted)') })
          .where({ emailNormalized: account.emailNormalized ?? '' })
          .whereNull('accountId')
          .whereExists(db.select(db.raw('1')).from('inserted')),
      )
      .select(ACCOUNT_COLUMNS)
      .from('inserted');
    // The row as the model reads it (timestamps become ISO strings).
    return rows[0] && toAccount(this.Account.fromDatabaseJson(rows[0]));
  }

  async updateDisplayName(id: string, displayName: string, now: Date): Promise<Account | undefined> {
    return this.update(id, { displayName }, now);
  }

  async update(
    id: string,
    changes: Partial<Pick<Account, 'email' | 'emailNormalized' | 'displayName' | 'passwordHash' | 'emailConfirmed' | 'securityStamp'>>,
    now: Date,
    trx?: Db,
  ): Promise<Account | undefined> {
    const rows = await this.Account.query(trx)
      .patch({ ...changes, updatedAt: now.toISOString() })
      .where({ id })
      .returning(ACCOUNT_COLUMNS);
    return rows[0] && toAccount(rows[0]);
  }

  async replacePasswordHash(id: string, oldHash: string, newHash: string, now: Date): Promise<boolean> {
    const n = await this.Account.query().patch({ passwordHash: newHash, updatedAt: now.toISOString() }).where({ id, passwordHash: oldHash });
    return n > 0;
  }

  async emailTaken(emailNormalized: string, exceptId: string, trx?: Db): Promise<boolean> {
    const row = await this.Account.query(trx).select('id').where({ emailNormalized }).whereNot({ id: exceptId }).first();
    return row !== undefined;
  }

  async writeMail(m: { send: boolean; token?: NewToken; mail: OutboxMail; now: Date }, trx?: Db): Promise<void> {
    // Written out: Objection cannot gate writes on a parameter inside one statement. Data-modifying
    // CTEs all run, whatever the final statement reads; each is gated by a boolean parameter, so
    // the statement (and its round trip) is the same whether anything is written (enumeration).
    const issue = m.send && m.token !== undefined;
    const t = m.token;
    await (trx ?? this.Outbox.knex()).raw(
      `with retired as (
         update account_tokens set used_at = ?
          where ?::boolean and account_id = ?::uuid and purpose = ? and used_at is null
       ), issued as (
         insert into account_tokens (account_id, purpose, token_hash, email, email_normalized, origin, created_at, expires_at)
         select ?::uuid, ?, ?, ?, ?, ?, ?, ? where ?::boolean
       )
       insert into mail_outbox (kind, recipient, subject, text_body, html_body, created_at, next_attempt_at)
       select ?, ?, ?, ?, ?, ?, ? where ?::boolean`,
      [
        m.now,
        issue,
        t?.accountId ?? NIL_UUID,
        t?.purpose ?? 'reset_password',
        t?.accountId ?? NIL_UUID,
        t?.purpose ?? 'reset_password',
        t?.tokenHash ?? Buffer.alloc(32),
        t?.email ?? '',
        t?.emailNormalized ?? '',
        t?.origin ?? null,
        t?.createdAt ?? m.now,
        t?.expiresAt ?? m.now,
        issue,
        m.mail.kind,
        m.mail.recipient,
        m.mail.subject,
        m.mail.textBody,
        m.mail.htmlBody,
        m.now,
        m.now,
        m.send,
      ],
    );
  }

  private live(q: TokenQuery, trx?: Db) {
    const query = this.Token.query(trx)
      .where({ tokenHash: q.tokenHash, purpose: q.purpose, accountId: q.accountId })
      .whereNull('usedAt')
      .where('expiresAt', '>', q.now);
    if (q.emailNormalized !== undefined) query.where({ emailNormalized: q.emailNormalized });
    return query;
  }

  async findLiveToken(q: TokenQuery, trx?: Db): Promise<TokenRow | undefined> {
    const row = await this.live(q, trx).select(TOKEN_COLUMNS).first();
    return row && toTokenRow(row);
  }

  async spendToken(q: TokenQuery, trx?: Db): Promise<TokenRow | undefined> {
    // One UPDATE … WHERE used_at IS NULL: of any number of concurrent spenders exactly one gets the row.
    const rows = await this.live(q, trx).patch({ usedAt: q.now.toISOString() }).returning(TOKEN_COLUMNS);
    return rows[0] && toTokenRow(rows[0]);
  }

  async retireTokens(accountId: string, purposes: readonly TokenPurpose[], now: Date, trx?: Db): Promise<void> {
    await this.Token.query(trx)
      .where({ accountId })
      .whereIn('purpose', [...purposes])
      .whereNull('usedAt')
      .patch({ usedAt: now.toISOString() });
  }

  async lastTokenIssuedAt(q: { accountId: string; purpose: TokenPurpose; origin?: string }, trx?: Db): Promise<Date | undefined> {
    const query = this.Token.query(trx).max('createdAt as last').where({ accountId: q.accountId, purpose: q.purpose });
    if (q.origin !== undefined) query.where({ origin: q.origin });
    // An aggregate, not a column: `last` stays the Date pg gives (the cooldowns compute with it).
    const row = (await query.first()) as unknown as { last: Date | null } | undefined;
    return row?.last ?? undefined;
  }

  async countUnaskedMail(
    request: { recipient: string; ip?: string; perIp: number },
    windowMs: number,
    now: Date,
    trx?: Db,
  ): Promise<{ recipientCount: number; ipCount?: number; ipAllowed?: boolean }> {
    // Written out: an upsert whose merge restarts a window conditionally, for both keys of the
    // request in one statement (Objection has no ON CONFLICT … DO UPDATE with expressions). Keys in
    // a fixed order (recipient before IP), so two requests that share a key lock the rows in the
    // same order and cannot deadlock. ON CONFLICT DO UPDATE works on the row's latest version, so
    // parallel requests from one IP each see the recipients the others added: the distinct count
    // is exact. An IP's list holds at most `perIp` recipients (its first ones), so it stays small.
    const to = `to:${request.recipient}`;
    const hashed = createHash('sha256').update(request.recipient, 'utf8').digest('hex').slice(0, 16);
    const windowStart = new Date(now.getTime() - windowMs);
    const rows: [string, Date, string[] | null][] = [[to, now, null]];
    if (request.ip) rows.push([`ip:${request.ip}`, now, [hashed]]);
    const values = rows.map(() => '(?, ?::timestamptz, 1, ?::text[])').join(', ');
    const result = await (trx ?? this.UnaskedMailCount.knex()).raw(
      `insert into unasked_mail_counts as c (key, window_started_at, count, recipients) values ${values}
       on conflict (key) do update set
         count = case when c.window_started_at <= :ws then 1
                      when excluded.recipients is null then c.count + 1
                      when excluded.recipients[1] = any(coalesce(c.recipients, '{}')) then c.count
                      else c.count + 1 end,
         recipients = case when excluded.recipients is null then null
                           when c.window_started_at <= :ws then excluded.recipients
                           when excluded.recipients[1] = any(coalesce(c.recipients, '{}')) then c.recipients
                           when cardinality(coalesce(c.recipients, '{}')) >= :cap then c.recipients
                           else coalesce(c.recipients, '{}') || excluded.recipients end,
         window_started_at = case when c.window_started_at <= :ws then excluded.window_started_at else c.window_started_at end
       returning key, count, recipients is not null and :hashed = any(recipients) as listed`
        .replace(/:ws/g, '?::timestamptz')
        .replace(/:cap/g, '?::int')
        .replace(/:hashed/g, '?::text'),
      [...rows.flat(), windowStart, windowStart, request.perIp, windowStart, hashed],
    );
    const byKey = new Map((result.rows as { key: string; count: number; listed: boolean }[]).map((r) => [r.key, r]));
    const ipRow = request.ip ? byKey.get(`ip:${request.ip}`) : undefined;
    return { recipientCount: byKey.get(to)?.count ?? 0, ipCount: ipRow?.count, ipAllowed: ipRow?.listed };
  }

  async reserveLoginAttempt(key: string, maxFailures: number, lockUntil: Date, now: Date): Promise<{ failures: number; lockedUntil: Date | null } | undefined> {
    // Written out: an upsert with a conditional merge and a WHERE on the conflict (Objection cannot
    // say it). The attempt is counted as a failure before its password is checked, in one statement
    // whose row lock orders concurrent attempts: of any number arriving at once, on any instance,
    // only the first `maxFailures` get a row back (and are checked); the one that reaches the
    // maximum starts the lock; the rest find the lock running and get nothing (423). A success
    // gives its place back (releaseLoginAttempt).
    const result = await this.LoginFailure.knex().raw(
      `insert into login_failures as f (email_normalized, failures, locked_until, updated_at)
       values (?, 1, case when 1 >= ? then ?::timestamptz end, ?)
       on conflict (email_normalized) do update set
         failures = case when f.locked_until is not null then 1 else f.failures + 1 end,
         locked_until = case when (case when f.locked_until is not null then 1 else f.failures + 1 end) >= ? then ?::timestamptz end,
         updated_at = excluded.updated_at
       where f.locked_until is null or f.locked_until <= ?
       returning failures, locked_until`,
      [key, maxFailures, lockUntil, now, maxFailures, lockUntil, now],
    );
    const row = result.rows[0] as { failures: number; locked_until: Date | null } | undefined;
    return row && { failures: row.failures, lockedUntil: row.locked_until };
  }

  async lockEnd(key: string): Promise<Date | null> {
    const row = await this.LoginFailure.query().select('lockedUntil').findById(key);
    return row?.lockedUntil ?? null;
  }

  async releaseLoginAttempt(key: string, ownLock: Date | null): Promise<void> {
    await this.LoginFailure.query()
      .where({ emailNormalized: key })
      .where((q) => {
        q.whereNull('lockedUntil');
        if (ownLock) q.orWhere('lockedUntil', ownLock);
      })
      .delete();
  }

  async returnLoginAttempt(key: string, ownLock: Date | null): Promise<void> {
    // Written out: one conditional UPDATE (the row lock orders it with parallel reservations).
    await this.LoginFailure.knex().raw(
      `update login_failures set failures = greatest(failures - 1, 0),
         locked_until = case when locked_until is not distinct from ?::timestamptz then null else locked_until end
       where email_normalized = ? and (locked_until is null or locked_until = ?::timestamptz)`,
      [ownLock, key, ownLock],
    );
  }

  async clearLoginFailures(emailNormalized: string, trx?: Db): Promise<void> {
    await this.LoginFailure.query(trx).where({ emailNormalized }).delete();
  }

  async linkWaitlist(accountId: string, emailNormalized: string, trx?: Db): Promise<void> {
    await this.Waitlist.query(trx).where({ emailNormalized }).whereNull('accountId').patch({ accountId });
  }

  async addToWaitlist(accountId: string, reason: string, now: Date): Promise<boolean> {
    return this.knex.transaction(async (trx) => {
      const account = await this.Account.query(trx).select('emailNormalized').findById(accountId);
      // An entry made for the address before the account existed is this account's entry.
      if (account?.emailNormalized) await this.linkWaitlist(accountId, account.emailNormalized, trx);
      // Objection cannot say ON CONFLICT on a partial unique index (one entry per account): the
      // insert is written out, so a second request for the same account adds nothing.
      const rows = await trx.raw(
        'insert into waitlist (account_id, reason, created_at) values (?, ?, ?) on conflict (account_id) where account_id is not null do nothing returning id',
        [accountId, reason, now],
      );
      return rows.rows.length > 0;
    });
  }

  async listWaitlist(): Promise<WaitlistEntry[]> {
    // The address shown is the account's current one once linked (a join, in the same statement).
    const rows = (await this.Waitlist.query()
      .alias('w')
      .leftJoinRelated('account', { alias: 'a' })
      .select(this.knex.raw('coalesce(a.email, w.email_normalized) as email'), 'w.accountId', 'w.reason', 'w.createdAt')
      .orderBy([{ column: 'w.createdAt' }, { column: 'w.id' }])) as (WaitlistModel & { email: string | null })[];
    return rows.map((r) => ({ email: r.email, accountId: r.accountId, reason: r.reason, createdAt: r.createdAt }));
  }

  async prune(now: Date): Promise<Record<string, number>> {
    const day = 24 * 3600_000;
    const ago = (ms: number) => new Date(now.getTime() - ms);
    return {
      // Only the newest token of a kind matters for the 5-minute windows; expired ones prove nothing.
      accountTokens: await this.Token.query().where('expiresAt', '<', ago(day)).delete(),
      // Delivered mail keeps no body; a month of rows is enough to answer "was it sent?".
      mailOutbox: await this.Outbox.query()
        .whereNotNull('sentAt')
        .where('sentAt', '<', ago(30 * day))
        .delete(),
      unaskedMailCounts: await this.UnaskedMailCount.query().where('windowStartedAt', '<', ago(day)).delete(),
      loginFailures: await this.LoginFailure.query()
        .where('updatedAt', '<', ago(day))
        .where((q) => q.whereNull('lockedUntil').orWhere('lockedUntil', '<', now))
        .delete(),
    };
  }

  async profiles(ids: string[]): Promise<Map<string, { id: string; email: string | null; displayName: string }>> {
    const valid = [...new Set(ids)].filter((id) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id));
    const out = new Map<string, { id: string; email: string | null; displayName: string }>();
    if (valid.length === 0) return out;
    const rows = await this.Account.query().select('id', 'email', 'displayName').whereIn('id', valid);
    for (const r of rows) out.set(r.id, { id: r.id, email: r.email, displayName: r.displayName });
    return out;
  }
}
