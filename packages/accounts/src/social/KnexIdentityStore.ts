import type { Knex } from 'knex';
import { AccountModel, AccountUnlinkedIdentityModel, SpentExternalCookieModel, SpentIdentityTokenModel } from '../models/index.js';
import { ACCOUNT_COLUMNS, type Account, type Db, toAccount } from '../store.js';
import type { ProviderName } from './config.js';
import type { IdentityStore, NewAppCode, NewIdentityLink, SpentAppCode } from './IdentityStore.js';

/** IdentityStore on knex (snake_case columns through the mappers). */
export class KnexIdentityStore implements IdentityStore {
  /** Bound once to the store's knex (never globally). */
  private readonly Account: typeof AccountModel;
  private readonly Unlinked: typeof AccountUnlinkedIdentityModel;
  private readonly SpentToken: typeof SpentIdentityTokenModel;
  private readonly SpentCookie: typeof SpentExternalCookieModel;

  constructor(private readonly knex: Knex) {
    this.Account = AccountModel.bindKnex(knex);
    this.Unlinked = AccountUnlinkedIdentityModel.bindKnex(knex);
    this.SpentToken = SpentIdentityTokenModel.bindKnex(knex);
    this.SpentCookie = SpentExternalCookieModel.bindKnex(knex);
  }

  transaction<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return this.knex.transaction(fn);
  }

  async findLinkedAccount(provider: ProviderName, subject: string): Promise<Account | undefined> {
    // Through the account model (one query, the join), so the account's timestamps are ISO strings as everywhere.
    const row = await this.Account.query()
      .alias('a')
      .joinRelated('identities', { alias: 'i' })
      .select(ACCOUNT_COLUMNS.map((c) => `a.${c}`))
      .where({ 'i.provider': provider, 'i.subject': subject })
      .first();
    return row && toAccount(row);
  }

  async insertLink(link: NewIdentityLink, trx?: Db): Promise<void> {
    await (trx ?? this.knex)('account_identities').insert(link);
  }

  async wasUnlinked(accountId: string, provider: ProviderName, subject: string): Promise<boolean> {
    const row = await this.Unlinked.query().select('accountId').where({ accountId, provider, subject }).first();
    return row !== undefined;
  }

  async forgetUnlinked(accountId: string, provider: ProviderName, subject: string, trx?: Db): Promise<void> {
    await this.Unlinked.query(trx).delete().where({ accountId, provider, subject });
  }

  async insertAppCode(code: NewAppCode): Promise<void> {
    await this.knex('app_signin_codes').insert(code);
  }

  async spendAppCode(codeHash: Buffer, now: Date): Promise<SpentAppCode | undefined> {
    const rows: SpentAppCode[] = await this.knex('app_signin_codes')
      .where({ codeHash })
      .whereNull('usedAt')
      .update({ usedAt: now })
      .returning(['accountId', 'codeChallenge', 'expiresAt', 'method']);
    return rows[0];
  }

  async revokeReplayedAppCode(codeHash: Buffer, now: Date): Promise<boolean> {
    const result = await this.knex.raw(
      `with replayed as (
         update app_signin_codes set replayed_at = coalesce(replayed_at, ?)
          where code_hash = ? and used_at is not null
          returning session_id
       ), revoked as (
         delete from account_sessions where sid in (select session_id from replayed where session_id is not null)
       )
       select count(*)::int as n from replayed`,
      [now, codeHash],
    );
    return (result.rows[0] as { n: number }).n > 0;
  }

  async recordAppCodeSession(codeHash: Buffer, sessionId: string): Promise<void> {
    await this.knex('app_signin_codes').where({ codeHash }).update({ sessionId });
  }

  async spendIdentityToken(key: string, expiresAt: Date): Promise<boolean> {
    // The model's table through knex: an Objection insert makes a model even of a row ON CONFLICT DO NOTHING left out.
    const rows: { key: string }[] = await this.knex(SpentIdentityTokenModel.tableName).insert({ key, expiresAt }).onConflict('key').ignore().returning(['key']);
    return rows.length === 1;
  }

  async pruneSpentIdentityTokens(now: Date): Promise<number> {
    return this.SpentToken.query()
      .where('expiresAt', '<', new Date(now.getTime() - 24 * 3600_000))
      .delete();
  }

  async prune(now: Date): Promise<number> {
    return this.knex('app_signin_codes')
      .where('expiresAt', '<', new Date(now.getTime() - 24 * 3600_000))
      .delete();
  }

  async spendExternalCookie(jti: string, expiresAt: Date): Promise<boolean> {
    // As spendIdentityToken: knex on the model's table, so a conflict answers no row.
    const rows: { jti: string }[] = await this.knex(SpentExternalCookieModel.tableName)
      .insert({ jti, expiresAt })
      .onConflict('jti')
      .ignore()
      .returning(['jti']);
    return rows.length === 1;
  }

  // A day of grace, as for the codes: an instance whose clock lags may still take the cookie as
  // unexpired, and must still find it spent.
  async pruneSpentExternalCookies(now: Date): Promise<number> {
    return this.SpentCookie.query()
      .where('expiresAt', '<', new Date(now.getTime() - 24 * 3600_000))
      .delete();
  }
}
