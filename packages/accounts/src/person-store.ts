import { type ReadDeclaration, standaloneRead } from '@svc/db';
import { isUuid, loadStandalone } from '@svc/http-kit';
import type { Knex } from 'knex';
import type { Pojo } from 'objection';
import {
  AccountExportModel,
  AccountIdentityModel,
  AccountModel,
  AccountSessionModel,
  AccountTokenModel,
  AccountUnlinkedIdentityModel,
  AppSigninCodeModel,
  LoginFailureModel,
  MailOutboxModel,
  UnaskedMailCountModel,
  WaitlistModel,
} from './models/index.js';
import { identitiesRead, type LoadedIdentities, sessionsRead } from './reads.js';
import type { ExportedAccount, LinkedIdentity, SessionResponse } from './schemas.js';

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
  /**
   * Sessions that still sign in: unexpired, and holding the account's current security stamp. Newest
   * sign-in first. `loaded`: the rows of `sessionsRead` the kernel loaded with the caller (the
   * route's `loadedRead(req, sessionsRead)`), made into the answer by the model as rows read here would be.
   */
  liveSessions(accountId: string, currentSid: string | undefined, now: Date, loaded?: Pojo[]): Promise<SessionResponse[]>;
  /** Deletes the account's session with this handle; answers its session id, or undefined when there is none. */
  deleteSession(accountId: string, publicId: string): Promise<string | undefined>;
  /** Deletes every session of the account but `keepSid`; answers how many. */
  deleteOtherSessions(accountId: string, keepSid: string): Promise<number>;
  /** The account's linked identities, oldest link first; `loaded`: the rows of `identitiesRead`, as for `liveSessions`. */
  identities(accountId: string, trx?: Knex.Transaction, loaded?: Pojo[]): Promise<LinkedIdentity[]>;
  /**
   * What GET /me/logins' declared read `read` (`identitiesRead(links)`) loads for the account, as a
   * statement of its own (the kernel lent nothing): with the second factors' links, their summary
   * too, in the same statement.
   */
  loadIdentities(accountId: string, read: ReadDeclaration<LoadedIdentities>): Promise<LoadedIdentities>;
  /**
   * Unlinks the provider's identity, remembers it as unlinked from this account (a sign-in with it
   * never links it back by its address alone), and ends every session signed in through that
   * provider. Answers whether one was linked and the ended sessions' ids.
   */
  unlink(accountId: string, provider: string, now: Date, trx: Knex.Transaction): Promise<{ unlinked: boolean; endedSessions: string[] }>;
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

/**
 * GET /me/sessions and GET /me/logins' identities when the kernel lent nothing (a bearer path, the
 * data export, a transaction): the same declared reads as statements of their own, so each has one
 * SQL however it is loaded. The identities without the second factors' summary (`identitiesRead()`:
 * the rows alone, which is what the store answers).
 */
const SESSIONS = standaloneRead(sessionsRead);
const IDENTITIES = standaloneRead(identitiesRead());

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

  async liveSessions(accountId: string, currentSid: string | undefined, now: Date, loaded?: Pojo[]): Promise<SessionResponse[]> {
    // `current` compares each row's sid with `currentSid` in the statement: the sid never leaves it.
    const rows = loaded ?? (await loadStandalone<Pojo[]>(this.knex, SESSIONS, { account: accountId, now, session: currentSid })) ?? [];
    return rows.map((row) => this.Session.fromDatabaseJson(row).toApi(row.current === true));
  }

  async deleteSession(accountId: string, publicId: string): Promise<string | undefined> {
    const rows = await this.Session.query().delete().where({ accountId, publicId }).returning('sid');
    return (rows as unknown as AccountSessionModel[])[0]?.sid;
  }

  async deleteOtherSessions(accountId: string, keepSid: string): Promise<number> {
    return this.Session.query().delete().where({ accountId }).whereNot({ sid: keepSid });
  }

  async identities(accountId: string, trx?: Knex.Transaction, loaded?: Pojo[]): Promise<LinkedIdentity[]> {
    // Inside `trx` when given (unlinking counts them under the account row's lock).
    const rows = loaded ?? (await loadStandalone<Pojo[]>(trx ?? this.knex, IDENTITIES, { account: accountId })) ?? [];
    return rows.map((row) => this.Identity.fromDatabaseJson(row).toApi());
  }

  async loadIdentities(accountId: string, read: ReadDeclaration<LoadedIdentities>): Promise<LoadedIdentities> {
    return (await loadStandalone<LoadedIdentities>(this.knex, standaloneRead(read), { account: accountId })) ?? [];
  }

  async unlink(accountId: string, provider: string, now: Date, trx: Knex.Transaction): Promise<{ unlinked: boolean; endedSessions: string[] }> {
    const removed = (await this.Identity.query(trx).delete().where({ accountId, provider }).returning('subject')) as unknown as { subject: string }[];
    if (removed.length > 0) {
      await AccountUnlinkedIdentityModel.query(trx)
        .insert(
          removed.map((r) => ({
            accountId,
            provider: provider as AccountUnlinkedIdentityModel['provider'],
            subject: r.subject,
            unlinkedAt: now.toISOString(),
          })),
        )
        .onConflict(['accountId', 'provider', 'subject'])
        .merge(['unlinkedAt']);
    }
    // A person unlinks a provider they no longer trust: whatever it signed in ends with it.
    const ended = (await this.Session.query(trx).delete().where({ accountId, method: provider }).returning('sid')) as unknown as { sid: string }[];
    return { unlinked: removed.length > 0, endedSessions: ended.map((r) => r.sid) };
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
      await UnaskedMailCountModel.query(trx)
        .delete()
        .whereIn(
          'key',
          addresses.map((a) => `to:${a}`),
        );
    }
    await AccountModel.query(trx).deleteById(accountId);
  }
}
