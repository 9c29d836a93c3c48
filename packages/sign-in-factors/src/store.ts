import { preparedQuery } from '@svc/http-kit';
import type { Knex } from 'knex';
import { PasskeyModel, type PasskeyResponse, TotpModel } from './models/index.js';

/** Whether TOTP is on and how many passkeys an account has. */
const SUMMARY = {
  name: 'sign_in_factors_summary',
  text: `select exists (select 1 from mfa_totp where account_id = $1 and confirmed_at is not null) as totp,
                (select count(*)::int from passkeys where account_id = $1) as passkeys`,
};

/** A database handle or a transaction. */
export type Db = Knex | Knex.Transaction;

/** Sign-in challenges (asked for without an account) live at once, at most: 50,000 in five minutes is over 160 passkey sign-ins a second. */
export const MAX_LIVE_SIGN_IN_CHALLENGES = 50_000;

/** A stored passkey as the WebAuthn check needs it. */
export interface StoredPasskey {
  id: string;
  accountId: string;
  credentialId: string;
  publicKey: Buffer;
  counter: number;
  transports: string[] | null;
}

/** A pending second step, spent. */
export interface SpentSignInToken {
  accountId: string;
  method: 'password' | 'google' | 'apple';
  returnUrl: string | null;
}

/**
 * This package's SQL. Every single-use thing is spent by one conditional statement (UPDATE …
 * RETURNING or DELETE … RETURNING), so of any number of parallel attempts on any instance exactly
 * one wins.
 */
export class SignInFactorStore {
  private readonly Totp: typeof TotpModel;
  private readonly Passkey: typeof PasskeyModel;

  constructor(readonly knex: Knex) {
    this.Totp = TotpModel.bindKnex(knex);
    this.Passkey = PasskeyModel.bindKnex(knex);
  }

  transaction<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return this.knex.transaction(fn);
  }

  async totp(accountId: string, trx?: Db): Promise<{ secretSealed: Buffer; confirmed: boolean; failedCodes: number } | undefined> {
    const row = await this.Totp.query(trx).findById(accountId);
    return row && { secretSealed: row.secretSealed, confirmed: row.confirmedAt !== null, failedCodes: row.failedCodes ?? 0 };
  }

  /** Locks the account's TOTP row (enrolment, confirmation and turning off are serialised by it). */
  async lockTotp(accountId: string, trx: Knex.Transaction): Promise<{ secretSealed: Buffer; confirmed: boolean } | undefined> {
    const row = await this.Totp.query(trx).findById(accountId).forUpdate();
    return row && { secretSealed: row.secretSealed, confirmed: row.confirmedAt !== null };
  }

  /** A new pending secret, replacing a pending one; answers false (nothing written) while TOTP is on. */
  async putPendingTotp(accountId: string, secretSealed: Buffer, now: Date): Promise<boolean> {
    const result = await this.knex.raw(
      `insert into mfa_totp as t (account_id, secret_sealed, confirmed_at, last_used_step, created_at)
       values (?, ?, null, null, ?)
       on conflict (account_id) do update set secret_sealed = excluded.secret_sealed, created_at = excluded.created_at, last_used_step = null
       where t.confirmed_at is null
       returning account_id`,
      [accountId, secretSealed, now],
    );
    return result.rows.length > 0;
  }

  /**
   * Records `step` as used, answering false when that step or a later one was already used: one
   * statement, so a code replayed on another instance (or in parallel) is accepted once.
   * `confirm` also turns TOTP on (enrolment's first right code). A right code starts the count of
   * wrong ones again.
   */
  async useStep(accountId: string, step: number, confirm: { at: Date } | undefined, trx?: Db): Promise<boolean> {
    const result = await (trx ?? this.knex).raw(
      `update mfa_totp set last_used_step = ?, confirmed_at = coalesce(confirmed_at, ?::timestamptz), failed_codes = 0
       where account_id = ? and (last_used_step is null or last_used_step < ?) and (confirmed_at is not null) = ?
       returning account_id`,
      [step, confirm?.at ?? null, accountId, step, confirm === undefined],
    );
    return result.rows.length > 0;
  }

  /** Counts one more wrong code (one statement: parallel wrong codes each count); answers the count now. */
  async countFailedCode(accountId: string): Promise<number> {
    const { rows } = await this.knex.raw<{ rows: { n: number }[] }>(
      'update mfa_totp set failed_codes = failed_codes + 1 where account_id = ? returning failed_codes as n',
      [accountId],
    );
    return rows[0]?.n ?? 0;
  }

  /** A right code, a recovery code or a password reset: the count starts again. */
  async resetFailedCodes(accountId: string, trx?: Db): Promise<void> {
    await (trx ?? this.knex).raw('update mfa_totp set failed_codes = 0 where account_id = ? and failed_codes <> 0', [accountId]);
  }

  async deleteTotp(accountId: string, trx: Db): Promise<boolean> {
    const n = await this.Totp.query(trx).where({ accountId }).whereNotNull('confirmedAt').delete();
    await trx('mfaRecoveryCodes').where({ accountId }).delete();
    return n > 0;
  }

  async replaceRecoveryCodes(accountId: string, hashes: Buffer[], trx: Db): Promise<void> {
    await trx('mfaRecoveryCodes').where({ accountId }).delete();
    await trx('mfaRecoveryCodes').insert(hashes.map((codeHash) => ({ accountId, codeHash, usedAt: null })));
  }

  /** Spends a recovery code: one conditional UPDATE, so a code works once however many arrive at once. */
  async spendRecoveryCode(accountId: string, codeHash: Buffer, now: Date, trx?: Db): Promise<boolean> {
    const rows = await (trx ?? this.knex)('mfaRecoveryCodes').where({ accountId, codeHash }).whereNull('usedAt').update({ usedAt: now }).returning('accountId');
    return rows.length > 0;
  }

  async unusedRecoveryCodes(accountId: string): Promise<number> {
    const row = await this.knex('mfaRecoveryCodes').where({ accountId }).whereNull('usedAt').count<{ count: string }[]>('* as count').first();
    return Number(row?.count ?? 0);
  }

  async insertSignInToken(row: { tokenHash: Buffer; accountId: string; method: string; returnUrl: string | null; expiresAt: Date }): Promise<void> {
    await this.knex('mfaSignInTokens').insert({ ...row, usedAt: null });
  }

  /** The pending step of a token that is unspent and unexpired (without spending it). */
  async liveSignInToken(tokenHash: Buffer, now: Date): Promise<SpentSignInToken | undefined> {
    const row = await this.knex('mfaSignInTokens')
      .select('accountId', 'method', 'returnUrl')
      .where({ tokenHash })
      .whereNull('usedAt')
      .where('expiresAt', '>', now)
      .first();
    return row;
  }

  /** Spends the token (single use): one conditional UPDATE. */
  async spendSignInToken(tokenHash: Buffer, now: Date, trx?: Db): Promise<boolean> {
    const rows = await (trx ?? this.knex)('mfaSignInTokens')
      .where({ tokenHash })
      .whereNull('usedAt')
      .where('expiresAt', '>', now)
      .update({ usedAt: now })
      .returning('accountId');
    return rows.length > 0;
  }

  /**
   * Stores a challenge. An account keeps at most `keepPerAccount` live registration challenges
   * (the oldest go): asking for options again and again cannot fill the table. Sign-in challenges
   * (no account yet) are refused (false) while `liveSignIn` of them are live at `now`: a bound on
   * what unauthenticated callers can make the table hold, however many addresses they come from
   * (parallel inserts may pass it by their number).
   */
  async insertChallenge(
    row: { challenge: string; purpose: 'registration' | 'authentication'; accountId: string | null; expiresAt: Date },
    limits: { keepPerAccount?: number; liveSignIn?: number; now?: Date } = {},
  ): Promise<boolean> {
    if (row.accountId === null) {
      const cap = limits.liveSignIn ?? MAX_LIVE_SIGN_IN_CHALLENGES;
      const { rows } = await this.knex.raw<{ rows: unknown[] }>(
        `insert into webauthn_challenges (challenge, purpose, account_id, expires_at)
         select ?, ?, null, ?
          where (select count(*) from (select 1 from webauthn_challenges where account_id is null and expires_at > ? limit ?) live) < ?
         returning challenge`,
        [row.challenge, row.purpose, row.expiresAt, limits.now ?? new Date(0), cap, cap],
      );
      return rows.length > 0;
    }
    await this.knex('webauthnChallenges').insert(row);
    await this.knex.raw(
      `delete from webauthn_challenges where account_id = ? and purpose = ? and challenge not in
         (select challenge from webauthn_challenges where account_id = ? and purpose = ? order by expires_at desc limit ?)`,
      [row.accountId, row.purpose, row.accountId, row.purpose, limits.keepPerAccount ?? 5],
    );
    return true;
  }

  /** Takes a challenge (single use, shared by every instance): DELETE … RETURNING of an unexpired one of this purpose (and account). */
  async takeChallenge(challenge: string, purpose: 'registration' | 'authentication', accountId: string | null, now: Date): Promise<boolean> {
    const q = this.knex('webauthnChallenges').where({ challenge, purpose }).where('expiresAt', '>', now);
    if (accountId) q.where({ accountId });
    const rows = await q.delete().returning('challenge');
    return rows.length > 0;
  }

  async passkeys(accountId: string): Promise<PasskeyResponse[]> {
    const rows = await this.Passkey.query()
      .where({ accountId })
      .orderBy([{ column: 'createdAt', order: 'desc' }, { column: 'id' }]);
    return rows.map((r) => r.toApi());
  }

  async credentialIds(accountId: string): Promise<string[]> {
    return (await this.Passkey.query().select('credentialId').where({ accountId })).map((r) => r.credentialId);
  }

  async passkeyByCredential(credentialId: string): Promise<StoredPasskey | undefined> {
    const row = await this.Passkey.query().findOne({ credentialId });
    return (
      row && {
        id: row.id,
        accountId: row.accountId,
        credentialId: row.credentialId,
        publicKey: row.publicKey,
        counter: Number(row.counter),
        transports: row.transports,
      }
    );
  }

  async insertPasskey(
    row: {
      id: string;
      accountId: string;
      credentialId: string;
      publicKey: Buffer;
      counter: number;
      transports: string[] | null;
      name: string;
      createdAt: Date;
    },
    trx: Db,
  ): Promise<PasskeyResponse> {
    const inserted = await this.Passkey.query(trx).insertAndFetch({
      ...row,
      counter: String(row.counter),
      createdAt: row.createdAt.toISOString(),
      lastUsedAt: null,
    });
    return inserted.toApi();
  }

  /**
   * Records a use: the new counter, only when the stored one is still the one the check read (a
   * parallel use of a cloned key with the same counter loses). Answers false when it lost.
   */
  async usePasskey(id: string, oldCounter: number, newCounter: number, now: Date): Promise<boolean> {
    const n = await this.Passkey.query()
      .where({ id, counter: String(oldCounter) })
      .patch({ counter: String(newCounter), lastUsedAt: now.toISOString() });
    return n > 0;
  }

  async deletePasskey(accountId: string, id: string, trx: Db): Promise<boolean> {
    return (await this.Passkey.query(trx).where({ accountId, id }).delete()) > 0;
  }

  async summary(accountId: string, trx?: Db): Promise<{ totp: boolean; passkeys: number }> {
    // GET /me/logins asks this on every call: outside a transaction a named statement, planned once per connection.
    const [row] = trx
      ? ((await trx.raw(SUMMARY.text.replaceAll('$1', '?'), [accountId, accountId])).rows as { totp: boolean; passkeys: number }[])
      : await preparedQuery<{ totp: boolean; passkeys: number }>(this.knex, { ...SUMMARY, values: [accountId] });
    return { totp: row!.totp, passkeys: row!.passkeys };
  }

  /** Deletes spent or expired tokens and challenges. */
  async prune(now: Date): Promise<number> {
    const a = await this.knex('mfaSignInTokens').where('expiresAt', '<=', now).orWhereNotNull('usedAt').delete();
    const b = await this.knex('webauthnChallenges').where('expiresAt', '<=', now).delete();
    return a + b;
  }
}
