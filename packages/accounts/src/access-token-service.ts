import type { Clock, RandomBytes } from '@svc/contracts';
import { isPgError, PG } from '@svc/db';
import { AuthenticationError, ConflictError, InputError, NotFoundError } from '@svc/http-kit';
import type { Knex } from 'knex';
import type { AccessTokenStore } from './AccessTokenStore.js';
import { accessTokenCreatedMail, type NoticeLanguage } from './access-token-mails.js';
import {
  type AccessTokenResponse,
  accessTokenHash,
  type CreateAccessTokenBody,
  type CreatedAccessTokenResponse,
  latestExpiry,
  newAccessToken,
} from './access-tokens.js';
import type { Mailer } from './Mailer.js';
import type { AccountStore, Db } from './store.js';
import { sameSecret } from './tokens.js';

export interface AccessTokenServiceOptions {
  tokens: AccessTokenStore;
  accounts: AccountStore;
  mailer: Mailer;
  clock: Clock;
  random: RandomBytes;
  /** The key of the tokens' keyed hash (ACCESS_TOKEN_SECRET, or derived from SESSION_SECRET). */
  key: string;
  publicBaseUrl: string;
  /** Most unexpired tokens one person keeps (ACCESS_TOKENS_PER_PERSON unless given). */
  maxTokens?: number;
}

/**
 * Most unexpired personal access tokens one person keeps: one per script or device of a home,
 * named; no real home needs more, and each is a row read by every bearer request's lookup.
 * Over it: 409 `limit_reached` (an expired token no longer counts).
 */
export const ACCESS_TOKENS_PER_PERSON = 50;

/** Who makes a token: the person, and the security stamp their session signed in with. */
export interface TokenCaller {
  userId: string;
  /** The stamp of the caller's session: a token is made only while it is the account's current one. */
  stamp?: string;
}

/** A person's personal access tokens (POST, GET, DELETE /api/v1/me/tokens; decisions.md §8). */
export class AccessTokenService {
  constructor(private readonly o: AccessTokenServiceOptions) {}

  /**
   * A new token for the caller, shown this once. Its row and the notice mail are written in one
   * transaction that first locks the account row and checks the caller's session still holds the
   * account's stamp: a password change running at the same moment either comes first (then this
   * answers 401, as the session's next request would) or waits and then ends this token with the rest.
   */
  async create(caller: TokenCaller, body: CreateAccessTokenBody, language: NoticeLanguage): Promise<CreatedAccessTokenResponse> {
    const now = this.o.clock.now();
    const name = body.name.trim();
    if (!name) throw new InputError('validation_failed', 'The name is blank', [{ field: 'name', message: 'must not be blank', in: 'body' }]);
    const scopes = [...new Set(body.scopes)];
    let expiresAt: Date | null = null;
    if (body.expiresAt !== undefined && body.expiresAt !== null) {
      expiresAt = new Date(body.expiresAt);
      if (!(expiresAt.getTime() > now.getTime()) || expiresAt.getTime() > latestExpiry(now).getTime()) {
        throw new InputError('validation_failed', 'expiresAt must be in the future and at most a year ahead', [
          { field: 'expiresAt', message: 'must be in the future and at most a year ahead', in: 'body' },
        ]);
      }
    }
    const token = newAccessToken(this.o.random);
    const gone = () => new AuthenticationError('unauthenticated', 'Sign-in required, or the session is no longer valid');
    try {
      const row = await this.o.accounts.transaction(async (trx) => {
        const account = await this.o.accounts.lockById(caller.userId, trx);
        if (!account || (caller.stamp !== undefined && !sameSecret(caller.stamp, account.securityStamp))) throw gone();
        // Counted under the account row's lock: parallel requests of the person count one after another.
        const max = this.o.maxTokens ?? ACCESS_TOKENS_PER_PERSON;
        if ((await this.o.tokens.countLive(account.id, now, max, trx)) >= max)
          throw new ConflictError('limit_reached', `A person keeps at most ${max} unexpired access tokens; delete one first`);
        const inserted = await this.o.tokens.insert(
          { accountId: account.id, name, scopes, tokenHash: accessTokenHash(this.o.key, token), createdAt: now, expiresAt },
          trx,
        );
        if (account.email !== null) {
          await this.o.mailer.enqueue(
            trx,
            accessTokenCreatedMail(this.o.publicBaseUrl, {
              to: account.email,
              displayName: account.displayName,
              name,
              scopes,
              expiresAt: inserted.expiresAt,
              language,
            }),
          );
        }
        return inserted;
      });
      this.o.mailer.nudge();
      return { ...row.toApi(), token };
    } catch (err) {
      // The account went away between the session check and the insert.
      if (isPgError(err, PG.foreignKeyViolation)) throw gone();
      throw err;
    }
  }

  /** The caller's tokens, newest first, without the tokens themselves. */
  async list(userId: string): Promise<AccessTokenResponse[]> {
    return (await this.o.tokens.list(userId)).map((t) => t.toApi());
  }

  /** Deletes one of the caller's tokens; 404 when the caller has no such token (another person's included). */
  async revoke(userId: string, tokenId: string): Promise<void> {
    if (!(await this.o.tokens.delete(userId, tokenId))) throw new NotFoundError('not_found', 'No such token');
  }

  /** Ends every token of the account, in the caller's transaction (a password change or reset). */
  endAll(accountId: string, trx: Db | Knex.Transaction): Promise<number> {
    return this.o.tokens.deleteAll(accountId, trx);
  }
}
