import type {
  AccountDeletionStep,
  Clock,
  ExportRecord,
  Membership,
  MembershipsProvider,
  PersonalDataSources,
  SecondFactorGate,
  StepUpProof,
} from '@svc/contracts';
import type { Pojo, ReadDeclaration } from '@svc/db';
import { AuthenticationError, ConflictError, type KernelChecked, type Logger, NotFoundError, TooManyRequestsError } from '@svc/http-kit';
import type { Knex } from 'knex';
import type { Mailer } from './Mailer.js';
import { accountDeletedMail, dataExportedMail, loginUnlinkedMail } from './person-mails.js';
import type { PersonAccount, PersonStore } from './person-store.js';
import { identitiesRead, type LoadedIdentities, type SecondFactorLinks } from './reads.js';
import { type ExportedAccount, LINKED_PROVIDERS, type LinkedIdentity, type LoginsResponse, type SessionResponse } from './schemas.js';

/** An account without a password proves it is its owner by a sign-in at most this old. */
export const RECENT_SIGN_IN_MS = 10 * 60_000;
/** One data export a minute per account. */
export const EXPORT_INTERVAL_MS = 60_000;

/**
 * Checks a password the way a login does, lockout included: true for the right one, false for a
 * wrong one, and it throws 423 `account_locked` while the address is locked. Each wrong password
 * counts toward the lockout like a failed login.
 */
export type PasswordCheck = (emailNormalized: string, password: string) => Promise<boolean>;

export interface PersonServiceOptions {
  store: PersonStore;
  mailer: Mailer;
  clock: Clock;
  logger: Logger;
  publicBaseUrl: string;
  /** The login's password check and lockout (see `loginPasswordCheck` in password-check.ts). */
  checkPassword: PasswordCheck;
  /** The second factors, when the host wired them (GET /me/logins, the last way to sign in, step-up). */
  secondFactors?: () => SecondFactorGate | undefined;
  /** Their summary's fields, lent to GET /me/logins' declared read (one statement with the session); without them it asks `secondFactors`. */
  secondFactorLinks?: SecondFactorLinks;
  /** From households: the caller's memberships (the export lists them, and its households). */
  memberships: MembershipsProvider;
  /** Every other package's part of deleting an account, called in this order inside one transaction. */
  deletionSteps: readonly AccountDeletionStep[];
  /** Every other package's data about a person, for the export. */
  personalData: PersonalDataSources;
}

/** Who is asking: the account and the session of the request. */
export interface Caller {
  userId: string;
  /** The session id of this request (never shown; compared with stored rows only). */
  sessionId: string | undefined;
  /** When this session signed in (ISO); undefined when unknown. */
  signedInAt: string | undefined;
}

/** The export, once granted: `chunks` yields the document's text piece by piece, reading as it goes. */
export interface PersonalDataExport {
  filename: string;
  /** The JSON document, in pieces; pulled by the writer, so a slow reader slows the reads. */
  chunks(): AsyncGenerator<string>;
}

/**
 * A person's own account (decisions.md, "a person's sessions, sign-in methods and data"): their
 * sessions, their sign-in methods, a copy of their data, and deleting the account.
 */
export class PersonService {
  /** GET /me/logins' declared read: the identities, and the second factors' summary when their links were handed in. */
  readonly identitiesRead: ReadDeclaration<LoadedIdentities>;

  constructor(private readonly o: PersonServiceOptions) {
    this.identitiesRead = identitiesRead(o.secondFactorLinks);
  }

  private now(): Date {
    return this.o.clock.now();
  }

  /** Runs `fn` in a transaction and, once it committed, wakes the mail worker. */
  private async withMail<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    const result = await this.o.store.transaction(fn);
    this.o.mailer.nudge();
    return result;
  }

  private async account(userId: string): Promise<PersonAccount> {
    const account = await this.o.store.account(userId);
    if (!account) throw gone();
    return account;
  }

  /** The caller's live sessions, newest sign-in first; `loaded`: the rows of `sessionsRead` the kernel loaded with the caller (only the caller's), if any. */
  async sessions(caller: Caller, loaded?: KernelChecked<Pojo[]>): Promise<SessionResponse[]> {
    return this.o.store.liveSessions(caller.userId, caller.sessionId, this.now(), loaded);
  }

  /** Ends one of the caller's sessions; answers whether it was the caller's own (then the caller is signed out). */
  async endSession(caller: Caller, publicId: string): Promise<{ wasCurrent: boolean }> {
    const sid = await this.o.store.deleteSession(caller.userId, publicId);
    if (sid === undefined) throw new NotFoundError('not_found', 'You have no session with this id');
    return { wasCurrent: sid === caller.sessionId };
  }

  /** Ends every session of the caller but this one. */
  async endOtherSessions(caller: Caller): Promise<void> {
    if (caller.sessionId === undefined) throw gone();
    await this.o.store.deleteOtherSessions(caller.userId, caller.sessionId);
  }

  /**
   * `loaded`: the caller's account as the session read loaded it (it has `hasPassword`), so only
   * the identities are read; `lent`: the rows of `identitiesRead` the kernel loaded with the caller
   * (`loadedRead(req, identitiesRead)`), if any, else the same read as a statement of its own. The
   * second factors' summary comes with it when @svc/sign-in-factors lends its fields
   * (`secondFactorLinks`); without them it is asked through the gate.
   */
  async logins(userId: string, loaded?: { id: string; hasPassword: boolean }, lent?: KernelChecked<LoadedIdentities>): Promise<LoginsResponse> {
    const hasPassword = loaded?.id === userId ? loaded.hasPassword : (await this.account(userId)).hasPassword;
    const read: LoadedIdentities | undefined = lent ?? (this.o.secondFactorLinks ? await this.o.store.loadIdentities(userId, this.identitiesRead) : undefined);
    const lentFactors = read && !Array.isArray(read) ? read : undefined;
    const factors = lentFactors
      ? { totp: lentFactors.totpConfirmedAt != null, passkeys: lentFactors.passkeys }
      : ((await this.o.secondFactors?.()?.summary(userId)) ?? { totp: false, passkeys: 0 });
    const rows = Array.isArray(read) ? read : lentFactors?.rows;
    return { hasPassword, identities: await this.o.store.identities(userId, undefined, rows), ...factors };
  }

  /**
   * Unlinks a provider, keeping at least one way to sign in: a password counts only with an address
   * to sign in with. The account row is locked, so two unlinks at once cannot both take the last
   * two ways. Every session signed in through the provider ends (this one too, when it was), and
   * the identity is never linked back by its address alone (see IdentityLinker). Mails the
   * account holder. Answers whether the caller's own session ended.
   */
  async unlink(caller: Pick<Caller, 'userId' | 'sessionId'>, providerInput: string): Promise<{ endedCurrent: boolean }> {
    const userId = caller.userId;
    const provider = providerInput.toLowerCase();
    if (!(LINKED_PROVIDERS as readonly string[]).includes(provider)) throw notLinked();
    return this.withMail(async (trx) => {
      const account = await this.o.store.lockAccount(userId, trx);
      if (!account) throw gone();
      const identities = await this.o.store.identities(userId, trx);
      if (!identities.some((i) => i.provider === provider)) throw notLinked();
      const passwordSignIn = account.hasPassword && account.emailNormalized !== null ? 1 : 0;
      // Passkeys sign in too (counted in this transaction, under the account row's lock).
      const passkeys = (await this.o.secondFactors?.()?.summary(userId, trx))?.passkeys ?? 0;
      if (passwordSignIn + passkeys + identities.length - 1 < 1) {
        throw new ConflictError('last_sign_in_method', 'This is your only way to sign in; set a password or link another provider first');
      }
      const { endedSessions } = await this.o.store.unlink(userId, provider, this.now(), trx);
      if (account.email) {
        await this.o.mailer.enqueue(
          trx,
          loginUnlinkedMail(this.o.publicBaseUrl, { to: account.email, displayName: account.displayName, provider: provider as LinkedIdentity['provider'] }),
        );
      }
      return { endedCurrent: caller.sessionId !== undefined && endedSessions.includes(caller.sessionId) };
    });
  }

  /**
   * Proves the caller is the account holder before the account goes: its password (checked like a
   * login, lockout included), or, for an account that has no password it can sign in with, a
   * sign-in within the last ten minutes; with TOTP on, a fresh second factor as well (alone, it
   * stands in for the password).
   */
  private async reauthenticate(account: PersonAccount, caller: Caller, password: string | undefined, proof: StepUpProof = {}): Promise<void> {
    const refuse = () => new AuthenticationError('reauthentication_required', 'Confirm it is you: send your password, or sign in again first');
    // With a second factor on, a fresh one stands in for the password (step-up).
    const gate = this.o.secondFactors?.();
    if (gate && password === undefined && (proof.code !== undefined || proof.recoveryCode !== undefined || proof.passkey !== undefined)) {
      if ((await gate.stepUp(account.id, proof)) !== 'ok') throw refuse();
      return;
    }
    // With TOTP on the password (or a recent sign-in) alone is not enough: a stolen session that
    // knows the password must not end the account without the second factor.
    if (gate && (await gate.summary(account.id)).totp) {
      if ((await gate.stepUp(account.id, proof)) !== 'ok') throw refuse();
    }
    if (account.hasPassword && account.emailNormalized !== null) {
      if (password === undefined || !(await this.o.checkPassword(account.emailNormalized, password))) throw refuse();
      return;
    }
    const signedIn = caller.signedInAt ? Date.parse(caller.signedInAt) : Number.NaN;
    if (!(this.now().getTime() - signedIn <= RECENT_SIGN_IN_MS)) throw refuse();
  }

  /**
   * Deletes the account in one transaction: every other package's step first (households refuse
   * with 409 `owner_must_transfer` while the person owns a household with other members), then this
   * package's rows, then the account. The account row is locked first, so parallel deletions, and
   * a sign-in racing the deletion, end in one consistent state. Mails a notice.
   */
  async deleteAccount(caller: Caller, password: string | undefined, proof: StepUpProof = {}): Promise<void> {
    const found = await this.account(caller.userId);
    await this.reauthenticate(found, caller, password, proof);
    await this.withMail(async (trx) => {
      const account = await this.o.store.lockAccount(caller.userId, trx);
      if (!account) throw gone();
      for (const step of this.o.deletionSteps) await step.deleteAccountData(account.id, trx);
      await this.o.store.deleteAccountRows(account, trx);
      if (account.email) await this.o.mailer.enqueue(trx, accountDeletedMail(this.o.publicBaseUrl, { to: account.email, displayName: account.displayName }));
    });
    this.o.logger.info({ userId: caller.userId }, 'account deleted at its owner’s request');
  }

  /**
   * Starts a data export: claims the account's slot (one a minute, on every instance, else 429
   * `rate_limited` with Retry-After), mails the account holder, and reads the small parts. The
   * households are read while the document is written, one at a time, their events page by page.
   */
  async startExport(caller: Caller): Promise<PersonalDataExport> {
    const now = this.now();
    await this.withMail(async (trx) => {
      const account = await this.o.store.lockAccount(caller.userId, trx);
      if (!account) throw gone();
      const retryAt = await this.o.store.claimExport(account.id, now, EXPORT_INTERVAL_MS, trx);
      if (retryAt) {
        throw new TooManyRequestsError(
          'rate_limited',
          'One data export a minute; try again shortly',
          Math.max(1, Math.ceil((retryAt.getTime() - now.getTime()) / 1000)),
        );
      }
      if (account.email)
        await this.o.mailer.enqueue(trx, dataExportedMail(this.o.publicBaseUrl, { to: account.email, displayName: account.displayName, at: now }));
    });
    const account = await this.o.store.exportedAccount(caller.userId);
    if (!account) throw gone();
    const [identities, sessions, memberships, devices] = await Promise.all([
      this.o.store.identities(caller.userId),
      this.o.store.liveSessions(caller.userId, caller.sessionId, now),
      this.o.memberships(caller.userId),
      this.o.personalData.devices(caller.userId),
    ]);
    return {
      filename: `meal-planner-data-${now.toISOString().slice(0, 10)}.json`,
      chunks: () => this.exportChunks({ exportedAt: now.toISOString(), account, identities, sessions, memberships, devices }),
    };
  }

  private async *exportChunks(head: {
    exportedAt: string;
    account: ExportedAccount;
    identities: LinkedIdentity[];
    sessions: SessionResponse[];
    memberships: Membership[];
    devices: ExportRecord[];
  }): AsyncGenerator<string> {
    const json = (value: unknown) => JSON.stringify(value);
    yield `{"exportedAt":${json(head.exportedAt)},"account":${json(head.account)},"identities":${json(head.identities)}`;
    yield `,"sessions":${json(head.sessions)},"memberships":${json(head.memberships)},"devices":${json(head.devices)},"notifications":[`;
    // The inbox page by page, as push answers it (accounts never reads push's tables).
    let firstItem = true;
    for await (const page of this.o.personalData.notifications?.(head.account.id) ?? []) {
      if (page.length === 0) continue;
      yield `${firstItem ? '' : ','}${page.map(json).join(',')}`;
      firstItem = false;
    }
    yield '],"households":[';
    let first = true;
    for (const householdId of new Set(head.memberships.map((m) => m.householdId))) {
      let settings: Awaited<ReturnType<PersonalDataSources['household']>>;
      try {
        settings = await this.o.personalData.household(householdId);
      } catch (err) {
        // Deleted (or left) since the memberships were read: it is no longer the person's data.
        if (err instanceof NotFoundError) continue;
        throw err;
      }
      const rules = await this.o.personalData.rules(householdId);
      yield `${first ? '' : ','}{"household":${json(settings.household)},"members":${json(settings.members)},"rules":${json(rules)},"events":[`;
      first = false;
      let firstEvent = true;
      // Page by page: only one page of one household's events is held at a time; a page already
      // written as JSON text goes through as it is (no object per event here).
      const { eventPages } = this.o.personalData;
      const pages = eventPages ? eventPages(householdId) : this.o.personalData.events(householdId);
      for await (const page of pages) {
        const items = Array.isArray(page) ? page.map(json).join(',') : arrayItems(page.json);
        if (items === '') continue;
        yield `${firstEvent ? '' : ','}${items}`;
        firstEvent = false;
      }
      yield ']}';
    }
    yield ']}';
  }
}

/** The items of a JSON array's text (`[a,b]` → `a,b`; `[]` → ''), unparsed; anything but an array's text is refused. */
function arrayItems(text: string): string {
  const trimmed = text.trim();
  if (!trimmed.startsWith('[') || !trimmed.endsWith(']')) throw new TypeError('An export page’s JSON text is not an array');
  return trimmed.slice(1, -1).trim();
}

function gone(): AuthenticationError {
  return new AuthenticationError('unauthenticated', 'The account of this session no longer exists');
}

function notLinked(): NotFoundError {
  return new NotFoundError('not_found', 'No identity of this provider is linked to your account');
}
