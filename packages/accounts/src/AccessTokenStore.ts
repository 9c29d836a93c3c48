import type { Knex } from 'knex';
import type { PrincipalSource } from './AccountSessionStore.js';
// The model from its own file: the models' index reaches sessions.ts (AccountSessionModel), which imports this file.
import { PersonalAccessTokenModel } from './models/PersonalAccessTokenModel.js';
import type { Db } from './store.js';

/** A token to write: its keyed hash, never the token. */
export interface NewAccessToken {
  accountId: string;
  name: string;
  scopes: readonly string[];
  tokenHash: string;
  createdAt: Date;
  expiresAt: Date | null;
}

/** What the token operations need from storage (`personal_access_tokens`). */
export interface AccessTokenStore {
  insert(row: NewAccessToken, trx: Knex.Transaction): Promise<PersonalAccessTokenModel>;
  /** The person's tokens, newest first. */
  list(accountId: string): Promise<PersonalAccessTokenModel[]>;
  /** How many of the person's tokens are unexpired at `now`, counting at most `cap` (in the caller's transaction). */
  countLive(accountId: string, now: Date, cap: number, trx: Knex.Transaction): Promise<number>;
  /** Deletes the person's token `id`: true when there was one (only one of racing deletes gets true). */
  delete(accountId: string, id: string): Promise<boolean>;
  /** Deletes every token of the person (a password change or reset): in the caller's transaction. */
  deleteAll(accountId: string, trx: Db): Promise<number>;
}

/**
 * The token's part of the principal statement (AccountSessionStore's `tokens`): the live token with
 * this keyed hash and its account, and whether its `lastUsedAt` is already this minute. The
 * statement stays a read (as a session's): a write folded into it as a CTE made every lookup cost
 * about twice a session's even when it wrote nothing. `touch` writes the minute after the request,
 * only where the minute on record is an older one, and the store starts it at most once at a time
 * per token: one small write a minute per token at most (instances that race write once).
 */
export const accessTokenPrincipal: PrincipalSource = {
  name: 'token',
  columns: `t.id as token_id, t.scopes as token_scopes, t.last_used_at >= date_trunc('minute', $2::timestamptz) as seen_recently`,
  join: `join personal_access_tokens t on t.token_hash = q.sid and (t.expires_at is null or t.expires_at > $2::timestamptz)
         join accounts a on a.id = t.account_id`,
  touch: (knex, id, now) =>
    knex.raw(
      `update personal_access_tokens set last_used_at = date_trunc('minute', ?::timestamptz)
        where id = ? and (last_used_at is null or last_used_at < date_trunc('minute', ?::timestamptz))`,
      [now, id, now],
    ),
};

export class ObjectionAccessTokenStore implements AccessTokenStore {
  private readonly Token: typeof PersonalAccessTokenModel;

  constructor(knex: Knex) {
    this.Token = PersonalAccessTokenModel.bindKnex(knex);
  }

  insert(row: NewAccessToken, trx: Knex.Transaction): Promise<PersonalAccessTokenModel> {
    return this.Token.query(trx)
      .insert({ ...row, scopes: [...row.scopes], createdAt: row.createdAt.toISOString(), expiresAt: row.expiresAt?.toISOString() ?? null })
      .returning('*') as unknown as Promise<PersonalAccessTokenModel>;
  }

  async list(accountId: string): Promise<PersonalAccessTokenModel[]> {
    return await this.Token.query()
      .where({ accountId })
      .orderBy([
        { column: 'createdAt', order: 'desc' },
        { column: 'id', order: 'desc' },
      ]);
  }

  async countLive(accountId: string, now: Date, cap: number, trx: Knex.Transaction): Promise<number> {
    // A count cut at `cap` (it reads no more rows than that): Objection has no count over a limited subquery.
    const { rows } = await trx.raw(
      `select count(*)::int as n from (select 1 from ${this.Token.tableName} where account_id = ? and (expires_at is null or expires_at > ?) limit ?) t`,
      [accountId, now.toISOString(), cap],
    );
    return rows[0].n;
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    return (await this.Token.query().delete().where({ accountId, id })) > 0;
  }

  async deleteAll(accountId: string, trx: Db): Promise<number> {
    return await this.Token.query(trx).delete().where({ accountId });
  }
}
