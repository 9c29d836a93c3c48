import type { Knex } from 'knex';
import type { Account, AccountStore, Db, NewAccount, NewToken, OutboxMail, TokenRow, WaitlistEntry } from './AccountStore.js';
import { AccountModel, WaitlistModel } from './models/index.js';
import type { TokenPurpose } from './tokens.js';

const ACCOUNT_COLUMNS = ['id', 'email', 'emailNormalized', 'displayName', 'passwordHash', 'emailConfirmed', 'securityStamp', 'createdAt', 'updatedAt'];
/** The nil UUID: a placeholder account id for statements that write nothing (see writeMail). */
const NIL_UUID = '00000000-0000-0000-0000-000000000000';

const TOKEN_COLUMNS = ['id', 'accountId', 'purpose', 'email', 'emailNormalized', 'createdAt', 'expiresAt', 'usedAt'];

interface TokenQuery {
  tokenHash: Buffer;
  purpose: TokenPurpose;
  accountId: string;
  emailNormalized?: string;
  now: Date;
}

/** AccountStore on knex (snake_case columns, camelCase fields through the mappers). */
export class KnexAccountStore implements AccountStore {
  /**
   * The waitlist model, bound once to the store's knex (never globally); calls that join a
   * transaction use `Model.query(trx)`. Account reads stay on knex: `Account` holds Dates, the
   * model ISO strings.
   */
  private readonly Waitlist: typeof WaitlistModel;

  constructor(private readonly knex: Knex) {
    this.Waitlist = WaitlistModel.bindKnex(knex);
  }

  transaction<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return this.knex.transaction(fn);
  }

  async findById(id: string, db: Db = this.knex): Promise<Account | undefined> {
    return db('accounts').select(ACCOUNT_COLUMNS).where({ id }).first();
  }

  async findByEmail(emailNormalized: string, db: Db = this.knex): Promise<Account | undefined> {
    return db('accounts').select(ACCOUNT_COLUMNS).where({ emailNormalized }).first();
  }

  async lockByEmail(trx: Knex.Transaction, emailNormalized: string): Promise<Account | undefined> {
    return trx('accounts').select(ACCOUNT_COLUMNS).where({ emailNormalized }).forUpdate().first();
  }

  async lockById(trx: Knex.Transaction, id: string): Promise<Account | undefined> {
    return trx('accounts').select(ACCOUNT_COLUMNS).where({ id }).forUpdate().first();
  }

  async insertIfNew(trx: Knex.Transaction, account: NewAccount, now: Date): Promise<Account | undefined> {
    // ON CONFLICT DO NOTHING waits for a concurrent insert of the same address and then yields:
    // parallel sign-ups make exactly one account without an error for the others. Waitlist entries
    // made for the address before the account existed become the new account's in the same
    // statement (one statement fewer for a fresh sign-up, whose statement count must equal a
    // taken address's).
    const inserted = trx('accounts')
      .insert({ ...account, createdAt: now, updatedAt: now })
      .onConflict('emailNormalized')
      .ignore()
      .returning(ACCOUNT_COLUMNS);
    const rows: Account[] = await trx
      .with('inserted', inserted)
      .with(
        'waitlisted',
        trx('waitlist')
          .update({ accountId: trx.raw('(select id from inserted)') })
          .where({ emailNormalized: account.emailNormalized ?? '' })
          .whereNull('accountId')
          .whereExists(trx.select(trx.raw('1')).from('inserted')),
      )
      .select(ACCOUNT_COLUMNS)
      .from('inserted');
    return rows[0];
  }

  async updateDisplayName(id: string, displayName: string, now: Date): Promise<Account | undefined> {
    const rows: Account[] = await this.knex('accounts').where({ id }).update({ displayName, updatedAt: now }).returning(ACCOUNT_COLUMNS);
    return rows[0];
  }

  async update(id: string, changes: Partial<Account>, now: Date, db: Db = this.knex): Promise<Account | undefined> {
    const rows: Account[] = await db('accounts')
      .where({ id })
      .update({ ...changes, updatedAt: now })
      .returning(ACCOUNT_COLUMNS);
    return rows[0];
  }

  async emailTaken(emailNormalized: string, exceptId: string, db: Db = this.knex): Promise<boolean> {
    const row = await db('accounts').select('id').where({ emailNormalized }).whereNot({ id: exceptId }).first();
    return row !== undefined;
  }

  async writeMail(trx: Knex.Transaction, m: { send: boolean; token?: NewToken; mail: OutboxMail; now: Date }): Promise<void> {
    // Data-modifying CTEs all run, whatever the final statement reads; each is gated by a boolean
    // parameter, so the statement (and its round trip) is the same whether anything is written.
    const issue = m.send && m.token !== undefined;
    const t = m.token;
    await trx.raw(
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

  private live(db: Db, q: TokenQuery): Knex.QueryBuilder {
    const query = db('account_tokens')
      .where({ tokenHash: q.tokenHash, purpose: q.purpose, accountId: q.accountId })
      .whereNull('usedAt')
      .where('expiresAt', '>', q.now);
    if (q.emailNormalized !== undefined) query.where({ emailNormalized: q.emailNormalized });
    return query;
  }

  async findLiveToken(q: TokenQuery, db: Db = this.knex): Promise<TokenRow | undefined> {
    return this.live(db, q).select(TOKEN_COLUMNS).first();
  }

  async spendToken(trx: Db, q: TokenQuery): Promise<TokenRow | undefined> {
    // One UPDATE … WHERE used_at IS NULL: of any number of concurrent spenders exactly one gets the row.
    const rows: TokenRow[] = await this.live(trx, q).update({ usedAt: q.now }).returning(TOKEN_COLUMNS);
    return rows[0];
  }

  async retireTokens(trx: Db, accountId: string, purposes: readonly TokenPurpose[], now: Date): Promise<void> {
    await trx('account_tokens')
      .where({ accountId })
      .whereIn('purpose', [...purposes])
      .whereNull('usedAt')
      .update({ usedAt: now });
  }

  async lastTokenIssuedAt(trx: Db, accountId: string, purpose: TokenPurpose, origin?: string): Promise<Date | undefined> {
    const query = trx('account_tokens').max({ last: 'createdAt' }).where({ accountId, purpose });
    if (origin !== undefined) query.where({ origin });
    const row = (await query.first()) as { last: Date | null } | undefined;
    return row?.last ?? undefined;
  }

  async countUnaskedMail(trx: Db, keys: string[], windowMs: number, now: Date): Promise<Map<string, number>> {
    // Keys in a fixed order (recipient before IP, as the caller passes them), so two requests
    // that share a key lock the rows in the same order and cannot deadlock.
    const values = keys.map(() => '(?, ?::timestamptz, 1)').join(', ');
    const windowStart = new Date(now.getTime() - windowMs);
    const result = await trx.raw(
      `insert into unasked_mail_counts as c (key, window_started_at, count) values ${values}
       on conflict (key) do update set
         count = case when c.window_started_at <= ? then 1 else c.count + 1 end,
         window_started_at = case when c.window_started_at <= ? then excluded.window_started_at else c.window_started_at end
       returning key, count`,
      [...keys.flatMap((k) => [k, now]), windowStart, windowStart],
    );
    return new Map((result.rows as { key: string; count: number }[]).map((r) => [r.key, r.count]));
  }

  async reserveLoginAttempt(key: string, maxFailures: number, lockUntil: Date, now: Date): Promise<{ failures: number; lockedUntil: Date | null } | undefined> {
    // The attempt is counted as a failure before its password is checked, in one statement whose
    // row lock orders concurrent attempts: of any number arriving at once, on any instance, only
    // the first `maxFailures` get a row back (and are checked); the one that reaches the maximum
    // starts the lock; the rest find the lock running and get nothing (423). A success gives its
    // place back (releaseLoginAttempt).
    const result = await this.knex.raw(
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
    const row = await this.knex('login_failures').select('lockedUntil').where({ emailNormalized: key }).first();
    return (row?.lockedUntil as Date | undefined) ?? null;
  }

  async releaseLoginAttempt(key: string, ownLock: Date | null): Promise<void> {
    await this.knex('login_failures')
      .where({ emailNormalized: key })
      .where((q) => {
        q.whereNull('lockedUntil');
        if (ownLock) q.orWhere('lockedUntil', ownLock);
      })
      .delete();
  }

  async clearLoginFailures(emailNormalized: string, db: Db = this.knex): Promise<void> {
    await db('login_failures').where({ emailNormalized }).delete();
  }

  async linkWaitlist(trx: Db, accountId: string, emailNormalized: string): Promise<void> {
    await WaitlistModel.query(trx).where({ emailNormalized }).whereNull('accountId').patch({ accountId });
  }

  async addToWaitlist(accountId: string, reason: string, now: Date): Promise<boolean> {
    return this.knex.transaction(async (trx) => {
      const account = await AccountModel.query(trx).select('emailNormalized').findById(accountId);
      // An entry made for the address before the account existed is this account's entry.
      if (account?.emailNormalized) await this.linkWaitlist(trx, accountId, account.emailNormalized);
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
      .leftJoin('accounts as a', 'a.id', 'w.accountId')
      .select(this.knex.raw('coalesce(a.email, w.email_normalized) as email'), 'w.accountId', 'w.reason', 'w.createdAt')
      .orderBy([{ column: 'w.createdAt' }, { column: 'w.id' }])) as (WaitlistModel & { email: string | null })[];
    return rows.map((r) => ({ email: r.email, accountId: r.accountId, reason: r.reason, createdAt: r.createdAt }));
  }

  async prune(now: Date): Promise<Record<string, number>> {
    const day = 24 * 3600_000;
    const ago = (ms: number) => new Date(now.getTime() - ms);
    return {
      // Only the newest token of a kind matters for the 5-minute windows; expired ones prove nothing.
      accountTokens: await this.knex('account_tokens').where('expiresAt', '<', ago(day)).delete(),
      // Delivered mail keeps no body; a month of rows is enough to answer "was it sent?".
      mailOutbox: await this.knex('mail_outbox')
        .whereNotNull('sentAt')
        .where('sentAt', '<', ago(30 * day))
        .delete(),
      unaskedMailCounts: await this.knex('unasked_mail_counts').where('windowStartedAt', '<', ago(day)).delete(),
      loginFailures: await this.knex('login_failures')
        .where('updatedAt', '<', ago(day))
        .where((q) => q.whereNull('lockedUntil').orWhere('lockedUntil', '<', now))
        .delete(),
    };
  }

  async profiles(ids: string[]): Promise<Map<string, { id: string; email: string | null; displayName: string }>> {
    const valid = [...new Set(ids)].filter((id) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id));
    const out = new Map<string, { id: string; email: string | null; displayName: string }>();
    if (valid.length === 0) return out;
    const rows: { id: string; email: string | null; displayName: string }[] = await this.knex('accounts')
      .select('id', 'email', 'displayName')
      .whereIn('id', valid);
    for (const r of rows) out.set(r.id, { id: r.id, email: r.email, displayName: r.displayName });
    return out;
  }
}
