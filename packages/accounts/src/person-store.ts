import { readAheadKey, type SessionReadAhead } from '@svc/contracts';
import { apiColumnsSql, isoTimestampSql, jsonRowsSql } from '@svc/db';
import { isUuid, readAhead } from '@svc/http-kit';
import type { Knex } from 'knex';
import type { Pojo } from 'objection';
import {
  AccountExportModel,
  AccountIdentityModel,
  AccountModel,
  AccountSessionModel,
  AccountTokenModel,
  AppSigninCodeModel,
  LoginFailureModel,
  MailOutboxModel,
  WaitlistModel,
} from './models/index.js';
import type { ExportedAccount, LinkedIdentity, SessionResponse } from './schemas.js';

/** The name of the linked identities list the session statement loads ahead (GET /api/v1/me/logins). */
const IDENTITIES_READ_AHEAD = 'account_identities_list';

/**
 * The caller's linked identities as an account read the session statement loads in its own round
 * trip (GET /me/logins; the account's `hasPassword` comes with the session already): the rows
 * `identities` reads, in its order, as one JSON array (`[]` for none).
 */
export const identitiesReadAhead: SessionReadAhead = {
  name: IDENTITIES_READ_AHEAD,
  path: '/api/v1/me/logins',
  scope: 'account',
  select: (accountId) =>
    jsonRowsSql(
      'account_identities li',
      apiColumnsSql('li', ['provider', 'email', 'createdAt'], ['createdAt']),
      `li.account_id = ${accountId}`,
      'li.created_at, li.id',
    ),
};

/** The name of the live sessions list the session statement loads ahead (GET /api/v1/me/sessions). */
const SESSIONS_READ_AHEAD = 'account_sessions_list';

/**
 * The caller's sessions as an account read the session statement loads in its own round trip (GET
 * /me/sessions): the rows `liveSessions` reads — the stamp condition in SQL, in its order — as
 * one JSON array of SessionResponse items as `AccountSessionModel.toApi` makes them (its fallbacks
 * for rows written before the columns existed included), each with its `sid` and `expire` (epoch
 * ms) for `liveSessions` to mark the current one and leave out the expired ones by its clock, as
 * its own statement does by `now`.
 */
export const sessionsReadAhead: SessionReadAhead = {
  name: SESSIONS_READ_AHEAD,
  path: '/api/v1/me/sessions',
  scope: 'account',
  select: (accountId) =>
    // Aliases of its own: `accountId` is a column of the session statement, whose `s` and `a` these must not hide.
    `(select coalesce(json_agg(json_build_object(
              'sid', ls.sid, 'expire', extract(epoch from ls.expire) * 1000, 'id', ls.public_id,
              'createdAt', ${isoTimestampSql('coalesce(ls.created_at, ls.expire)')},
              'lastSeenAt', ${isoTimestampSql('coalesce(ls.last_seen_at, ls.created_at, ls.expire)')},
              'userAgent', ls.user_agent, 'method', coalesce(ls.method, 'password'))
            order by ls.created_at desc, ls.public_id), '[]'::json)
        from account_sessions ls join accounts la on la.id = ls.account_id
       where ls.account_id = ${accountId} and ls.sess->>'stamp' = la.security_stamp)`,
};

/** One session as `sessionsReadAhead` lends it. */
interface LentSession {
  sid: string;
  expire: number;
  id: string;
  createdAt: string;
  lastSeenAt: string;
  userAgent: string | null;
  method: SessionResponse['method'];
}

/** What a person's own operations need to know of the account row. */
export interface PersonAccount {
  id: string;
  email: string | null;
  emailNormalized: string | null;
  displayName: string;
  hasPassword: boolean;
}

/**
 * Storage for a person's own operations (sessions, linked identities, export, deletion). Time comes
 * in as `now`; a method that can join a transaction takes it as its last argument.
 */
export interface PersonStore {
  transaction<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T>;
  account(accountId: string, trx?: Knex.Transaction): Promise<PersonAccount | undefined>;
  /** The row, locked FOR UPDATE until `trx` ends: orders unlinking, deletion and sign-in of one account. */
  lockAccount(accountId: string, trx: Knex.Transaction): Promise<PersonAccount | undefined>;
  exportedAccount(accountId: string): Promise<ExportedAccount | undefined>;
  /** Sessions that still sign in: unexpired, and holding the account's current security stamp. Newest sign-in first. */
  liveSessions(accountId: string, currentSid: string | undefined, now: Date): Promise<SessionResponse[]>;
  /** Deletes the account's session with this handle; answers its session id, or undefined when there is none. */
  deleteSession(accountId: string, publicId: string): Promise<string | undefined>;
  /** Deletes every session of the account but `keepSid`; answers how many. */
  deleteOtherSessions(accountId: string, keepSid: string): Promise<number>;
  /** Oldest link first. */
  identities(accountId: string, trx?: Knex.Transaction): Promise<LinkedIdentity[]>;
  /** Unlinks the provider's identity; false when none was linked. */
  unlink(accountId: string, provider: string, trx: Knex.Transaction): Promise<boolean>;
  /**
   * Claims the account's export slot in one statement: answers undefined when granted, or when the
   * next slot opens. Concurrent claims (any instance) get at most one grant per interval.
   */
  claimExport(accountId: string, now: Date, intervalMs: number, trx?: Knex.Transaction): Promise<Date | undefined>;
  /**
   * Deletes every row of this package about the account, inside `trx`: identities, app codes,
   * sessions, mailed tokens, the export slot, its waitlist entries, the login-failure count of its
   * address, the mail addressed to it (its addresses: the login and any pending new one), then
   * the account row itself.
   */
  deleteAccountRows(account: PersonAccount, trx: Knex.Transaction): Promise<void>;
}

function toPerson(row: AccountModel): PersonAccount {
  return { id: row.id, email: row.email, emailNormalized: row.emailNormalized, displayName: row.displayName, hasPassword: row.passwordHash !== null };
}

/** PersonStore on Objection: the models bound to the knex the host hands in. */
export class ObjectionPersonStore implements PersonStore {
  private readonly Account: typeof AccountModel;
  private readonly Session: typeof AccountSessionModel;
  private readonly Identity: typeof AccountIdentityModel;
  private readonly Export: typeof AccountExportModel;

  constructor(private readonly knex: Knex) {
    this.Account = AccountModel.bindKnex(knex);
    this.Session = AccountSessionModel.bindKnex(knex);
    this.Identity = AccountIdentityModel.bindKnex(knex);
    this.Export = AccountExportModel.bindKnex(knex);
  }

  transaction<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return this.knex.transaction(fn);
  }

  async account(accountId: string, trx?: Knex.Transaction): Promise<PersonAccount | undefined> {
    if (!isUuid(accountId)) return undefined;
    const row = await this.Account.query(trx).findById(accountId);
    return row && toPerson(row);
  }

  async lockAccount(accountId: string, trx: Knex.Transaction): Promise<PersonAccount | undefined> {
    const row = await this.Account.query(trx).findById(accountId).forUpdate();
    return row && toPerson(row);
  }

  async exportedAccount(accountId: string): Promise<ExportedAccount | undefined> {
    return (await this.Account.query().findById(accountId))?.toExport();
  }

  async liveSessions(accountId: string, currentSid: string | undefined, now: Date): Promise<SessionResponse[]> {
    // GET /me/sessions: the session read loaded them ahead (no statement of its own).
    const lent = readAhead(SESSIONS_READ_AHEAD, readAheadKey(undefined)) as LentSession[] | undefined;
    if (lent) {
      const at = now.getTime();
      const items: SessionResponse[] = [];
      for (const row of lent) {
        if (!(row.expire > at)) continue;
        const { id, createdAt, lastSeenAt, userAgent, method } = row;
        items.push({ id, createdAt, lastSeenAt, userAgent, method, current: currentSid !== undefined && row.sid === currentSid });
      }
      return items;
    }
    const rows = await this.Session.query()
      .select('accountSessions.*')
      .join('accounts', 'accounts.id', 'accountSessions.accountId')
      .where('accountSessions.accountId', accountId)
      .where('accountSessions.expire', '>', now)
      // A session whose stamp is not the account's current one fails its next request (logout,
      // password change elsewhere): it is over, so it is not listed.
      .whereRaw("account_sessions.sess->>'stamp' = accounts.security_stamp")
      .orderBy([
        { column: 'accountSessions.createdAt', order: 'desc' },
        { column: 'accountSessions.publicId', order: 'asc' },
      ]);
    return rows.map((row) => row.toApi(currentSid));
  }

  async deleteSession(accountId: string, publicId: string): Promise<string | undefined> {
    const rows = await this.Session.query().delete().where({ accountId, publicId }).returning('sid');
    return (rows as unknown as AccountSessionModel[])[0]?.sid;
  }

  async deleteOtherSessions(accountId: string, keepSid: string): Promise<number> {
    return this.Session.query().delete().where({ accountId }).whereNot({ sid: keepSid });
  }

  async identities(accountId: string, trx?: Knex.Transaction): Promise<LinkedIdentity[]> {
    // GET /me/logins: the session read loaded them ahead (no statement of its own).
    const lent = trx ? undefined : (readAhead(IDENTITIES_READ_AHEAD, readAheadKey(undefined)) as Pojo[] | undefined);
    if (lent) return lent.map((row) => this.Identity.fromDatabaseJson(row).toApi());
    const rows = await this.Identity.query(trx)
      .where({ accountId })
      .orderBy([{ column: 'createdAt' }, { column: 'id' }]);
    return rows.map((row) => row.toApi());
  }

  async unlink(accountId: string, provider: string, trx: Knex.Transaction): Promise<boolean> {
    return (await this.Identity.query(trx).delete().where({ accountId, provider })) > 0;
  }

  async claimExport(accountId: string, now: Date, intervalMs: number, trx?: Knex.Transaction): Promise<Date | undefined> {
    const k = trx ?? this.Export.knex();
    const opensAt = new Date(now.getTime() - intervalMs);
    // One statement (Objection has no conditional upsert): insert the first claim, or move the slot
    // when the last one is at least `intervalMs` old. A claim that changes nothing was refused.
    const granted = await k('accountExports')
      .insert({ accountId, lastStartedAt: now })
      .onConflict('accountId')
      .merge({ lastStartedAt: now })
      .where('accountExports.lastStartedAt', '<=', opensAt)
      .returning('accountId');
    if (granted.length > 0) return undefined;
    const row = await this.Export.query(trx).findById(accountId);
    const last = row ? Date.parse(row.lastStartedAt) : now.getTime();
    return new Date(last + intervalMs);
  }

  async deleteAccountRows(account: PersonAccount, trx: Knex.Transaction): Promise<void> {
    const accountId = account.id;
    // Addresses mail may have gone to: the login, and a new address waiting for its confirmation.
    const pending = await AccountTokenModel.query(trx).select('emailNormalized').where({ accountId });
    const addresses = [...new Set([account.emailNormalized, ...pending.map((t) => t.emailNormalized)].filter((a): a is string => !!a))];
    await AccountIdentityModel.query(trx).delete().where({ accountId });
    await AppSigninCodeModel.query(trx).delete().where({ accountId });
    await AccountSessionModel.query(trx).delete().where({ accountId });
    await AccountTokenModel.query(trx).delete().where({ accountId });
    await AccountExportModel.query(trx).delete().where({ accountId });
    await WaitlistModel.query(trx)
      .delete()
      .where((q) => {
        q.where({ accountId });
        if (account.emailNormalized) q.orWhere({ emailNormalized: account.emailNormalized });
      });
    if (addresses.length > 0) {
      await LoginFailureModel.query(trx).delete().whereIn('emailNormalized', addresses);
      // Recipients are stored as typed; the addresses above are lower-cased.
      await MailOutboxModel.query(trx).delete().whereIn(trx.raw('lower(recipient)'), addresses);
      // The per-recipient count of unasked mail names the address: it goes too.
      await trx('unasked_mail_counts')
        .delete()
        .whereIn(
          'key',
          addresses.map((a) => `to:${a}`),
        );
    }
    await AccountModel.query(trx).deleteById(accountId);
  }
}
