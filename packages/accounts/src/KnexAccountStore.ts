import type { Knex } from 'knex';
import type { Account, AccountStore, Db, NewAccount, NewToken, TokenRow, WaitlistEntry } from './AccountStore.js';
import type { TokenPurpose } from './tokens.js';

const ACCOUNT_COLUMNS = ['id', 'email', 'emailNormalized', 'displayName', 'passwordHash', 'emailConfirmed', 'securityStamp', 'createdAt', 'updatedAt'];
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
  constructor(private readonly knex: Knex) {}

  transaction<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return this.knex.transaction(fn);
  }

  async findById(id: string, db: Db = this.knex): Promise<Account | undefined> {
    return db('accounts').select(ACCOUNT_COLUMNS).where({ id }).first();
  }

  async findByEmail(emailNormalized: string, db: Db = this.knex): Promise<Account | undefined> {
    return db('accounts').select(ACCOUNT_COLUMNS).where({ emailNormalized }).first();
  }

  async lockById(trx: Knex.Transaction, id: string): Promise<Account | undefined> {
    return trx('accounts').select(ACCOUNT_COLUMNS).where({ id }).forUpdate().first();
  }

  async insertIfNew(trx: Knex.Transaction, account: NewAccount, now: Date): Promise<Account | undefined> {
    // ON CONFLICT DO NOTHING waits for a concurrent insert of the same address and then yields:
    // parallel sign-ups make exactly one account without an error for the others.
    const rows: Account[] = await trx('accounts')
      .insert({ ...account, createdAt: now, updatedAt: now })
      .onConflict('emailNormalized')
      .ignore()
      .returning(ACCOUNT_COLUMNS);
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

  async insertToken(trx: Db, token: NewToken): Promise<void> {
    await trx('account_tokens').insert({ ...token, origin: token.origin ?? null });
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

  async spendAllTokens(trx: Db, accountId: string, purpose: TokenPurpose, now: Date): Promise<void> {
    await trx('account_tokens').where({ accountId, purpose }).whereNull('usedAt').update({ usedAt: now });
  }

  async lastTokenIssuedAt(trx: Db, accountId: string, purpose: TokenPurpose, origin?: string): Promise<Date | undefined> {
    const query = trx('account_tokens').max({ last: 'createdAt' }).where({ accountId, purpose });
    if (origin !== undefined) query.where({ origin });
    const row = (await query.first()) as { last: Date | null } | undefined;
    return row?.last ?? undefined;
  }

  async lockedUntil(emailNormalized: string): Promise<Date | undefined> {
    const row = await this.knex('login_failures').select('lockedUntil').where({ emailNormalized }).first();
    return row?.lockedUntil ?? undefined;
  }

  async recordLoginFailure(emailNormalized: string, maxFailures: number, lockUntil: Date, now: Date): Promise<void> {
    // One statement, so concurrent failures count exactly. Reaching the maximum starts the lock and
    // restarts the count; a failure that slipped in while a lock runs changes nothing.
    await this.knex.raw(
      `insert into login_failures (email_normalized, failures, locked_until, updated_at)
       values (?, case when 1 >= ? then 0 else 1 end, case when 1 >= ? then ?::timestamptz end, ?)
       on conflict (email_normalized) do update set
         failures = case when login_failures.failures + 1 >= ? then 0 else login_failures.failures + 1 end,
         locked_until = case when login_failures.failures + 1 >= ? then ?::timestamptz else login_failures.locked_until end,
         updated_at = excluded.updated_at
       where login_failures.locked_until is null or login_failures.locked_until <= ?`,
      [emailNormalized, maxFailures, maxFailures, lockUntil, now, maxFailures, maxFailures, lockUntil, now],
    );
  }

  async clearLoginFailures(emailNormalized: string, db: Db = this.knex): Promise<void> {
    await db('login_failures').where({ emailNormalized }).delete();
  }

  async linkWaitlist(trx: Db, accountId: string, emailNormalized: string): Promise<void> {
    await trx('waitlist').where({ emailNormalized }).whereNull('accountId').update({ accountId });
  }

  async addToWaitlist(accountId: string, reason: string, now: Date): Promise<boolean> {
    return this.knex.transaction(async (trx) => {
      const account = await trx('accounts').select('emailNormalized').where({ id: accountId }).first();
      // An entry made for the address before the account existed is this account's entry.
      if (account?.emailNormalized) await this.linkWaitlist(trx, accountId, account.emailNormalized);
      const rows = await trx.raw(
        'insert into waitlist (account_id, reason, created_at) values (?, ?, ?) on conflict (account_id) where account_id is not null do nothing returning id',
        [accountId, reason, now],
      );
      return rows.rows.length > 0;
    });
  }

  async listWaitlist(): Promise<WaitlistEntry[]> {
    const rows: { email: string | null; accountId: string | null; reason: string; createdAt: Date }[] = await this.knex('waitlist as w')
      .leftJoin('accounts as a', 'a.id', 'w.accountId')
      .select(this.knex.raw('coalesce(a.email, w.email_normalized) as email'), 'w.accountId', 'w.reason', 'w.createdAt')
      .orderBy([{ column: 'w.createdAt' }, { column: 'w.id' }]);
    return rows.map((r) => ({ email: r.email, accountId: r.accountId, reason: r.reason, createdAt: new Date(r.createdAt).toISOString() }));
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
