import type {
  AccountDeletionStep,
  Clock,
  MembershipsProvider,
  PersonalDataSources,
  RandomBytes,
  SecondFactorGate,
  SignInCompletion,
  SignInFactorNotice,
  StepUpProof,
} from '@svc/contracts';
import type { DeclaredReads } from '@svc/db';
import { isPgError, PG } from '@svc/db';
import {
  AuthenticationError,
  InputError,
  LockedError,
  type Logger,
  RateLimit,
  type RateLimitOptions,
  systemRandom,
  TooManyRequestsError,
  timing,
} from '@svc/http-kit';
import type { JobQueue } from '@svc/jobs';
import type { Request } from 'express';
import type { Knex } from 'knex';
import type { Transporter } from 'nodemailer';
import { ObjectionAccessTokenStore } from './AccessTokenStore.js';
import { noticeLanguage } from './access-token-mails.js';
import { AccessTokenService } from './access-token-service.js';
import { defaultAccessTokenKey } from './access-tokens.js';
import { looksLikeAddress, normalizeEmail, tidyEmail } from './email.js';
import { Mailer, outboxRow } from './Mailer.js';
import {
  accountExistsMail,
  changeEmailMail,
  changeEmailNoticeMail,
  confirmEmailMail,
  emailChangedNoticeMail,
  identityLinkedNoticeMail,
  type MailContent,
  passwordChangedNoticeMail,
  passwordResetNoticeMail,
  resetPasswordMail,
} from './mail-templates.js';
import { type AccountSummary, type MeResponse, summarize, toMeResponse } from './me.js';
import { HOUSEKEEPING_QUEUE } from './migrations.js';
import { normalizePassword, PasswordHasher } from './PasswordHasher.js';
import { loginPasswordCheck } from './password-check.js';
import { BreachChecker, PASSWORD_RULES, passwordTooShort } from './passwords.js';
import { signInFactorNoticeMail } from './person-mails.js';
import { PersonService } from './person-service.js';
import { ObjectionPersonStore } from './person-store.js';
import type { SecondFactorLinks } from './reads.js';
import { createSessions, type Sessions, type SignInMethod } from './sessions.js';
import type { AppleConfig, GoogleConfig } from './social/config.js';
import type { IdentityStore } from './social/IdentityStore.js';
import { KnexIdentityStore } from './social/KnexIdentityStore.js';
import { SocialSignIn, type SocialTuning } from './social/SocialSignIn.js';
import type { Account, AccountStore, NewToken } from './store.js';
import { hashToken, newStamp, newToken, TOKEN_LIFETIME_MS, type TokenPurpose } from './tokens.js';

/** Resend-confirmation cooldown and the forgot-password duplicate window (spec, Limits). */
export const MAIL_COOLDOWN_MS = 5 * 60_000;

/**
 * Unasked mail (an "account already exists" mail, a reset link, a confirmation link, a change-of-
 * address link) per recipient address and per client IP in a window, counted in PostgreSQL so every
 * instance shares it. Past the limit the mail is dropped silently: the answer stays the same.
 * `perRecipient` counts requests for mail to one canonical address (UNASKED_MAIL_PER_ADDRESS);
 * `perIp` counts the DISTINCT addresses one client IP had mail sent to (UNASKED_MAIL_PER_IP): it
 * stops one client spraying many addresses, not many people behind one shared address each
 * resetting their own.
 */
export interface UnaskedMailLimits {
  perRecipient: number;
  perIp: number;
  windowMs: number;
}
export const UNASKED_MAIL_LIMITS: UnaskedMailLimits = { perRecipient: 5, perIp: 100, windowMs: 3600_000 };

/** decisions.md §3 leaves a session's absolute lifetime open; ASVS 7.3.2 asks for one: 90 days by default (SESSION_MAX_AGE_DAYS). */
export const SESSION_MAX_AGE_DAYS = 90;

/** Where the service counts what it does not answer (the host passes http-kit's `Metrics`). */
export interface AccountsMetrics {
  /** Unasked mail dropped by a limit, by mail kind and by which limit (`address` or `ip`). */
  unaskedMailDropped: { inc(labels: { kind: string; limit: string }): void };
}

/** Where a request came from (the per-IP limit of unasked mail). */
export interface RequestOrigin {
  ip?: string;
}

/** Every mailed link a password or address change retires. */
const ALL_LINKS = ['confirm_email', 'change_email', 'reset_password'] as const satisfies readonly TokenPurpose[];

/** A placeholder account id where no account was found (statements that then write nothing). */
const NO_ACCOUNT = '00000000-0000-0000-0000-000000000000';

/** The lockout key of an account: its address, shared with login by address; an account without one by its id. */
export function lockoutKey(account: Pick<Account, 'id' | 'emailNormalized'>): string {
  return account.emailNormalized ?? `account:${account.id}`;
}

/** The part of the service configuration this package reads (decisions.md §1). */
export interface AccountsConfig {
  /** Origin of every mailed link (never the request's Host). */
  publicBaseUrl: string;
  /** Signs the session cookie. */
  sessionSecret: string;
  /** `Secure` attribute of the session cookie. */
  cookieSecure: boolean;
  /** Sender of every mail. */
  mailFrom: string;
  /** nodemailer SMTP URL; unset: each mail is written as an .eml file under `${dataDir}/mail` and logged (never its body). */
  smtpUrl?: string;
  dataDir: string;
  /** Requests per client IP per window, shared by every /api/v1/auth/* operation (createRouter's `authLimiter`). */
  authRateLimit: number;
  authRateWindowSeconds: number;
  /** Wrong passwords in a row before the lock, and the lock's length. */
  lockoutMaxFailures: number;
  lockoutSeconds: number;
  /** k-anonymity range API base URL; undefined: breached passwords are not checked. */
  passwordBreachApi?: string;
  /** Lower-cased addresses whose (confirmed) accounts are platform admins. */
  platformAdminEmails: string[];
  /** SESSION_MAX_AGE_DAYS: a session signed in longer ago than this is refused (401) and not renewed, however much it is used (default 90). */
  sessionMaxAgeDays?: number;
  /** UNASKED_MAIL_PER_ADDRESS: unasked mails per recipient address an hour (default 5). */
  unaskedMailPerAddress?: number;
  /** UNASKED_MAIL_PER_IP: distinct recipient addresses per client IP an hour (default 100). */
  unaskedMailPerIp?: number;
  /** Google sign-in (GOOGLE_*); undefined: Google is not offered. */
  google?: GoogleConfig;
  /** Sign in with Apple (APPLE_*): `web` for the browser, `nativeAudiences` for the app; undefined: neither. */
  apple?: AppleConfig;
  /** APP_REDIRECT_URIS: the exact `redirectUri` values the app flow may end on (none: no app flow). */
  appRedirectUris?: string[];
  /** WEB_CLIENT_URL: the web client's sign-in, where `/login` (the link of every notice mail) redirects; undefined: `/login` is a page of the service. */
  webClientUrl?: string;
  /** ACCESS_TOKEN_SECRET: the key of personal access tokens' keyed hash; undefined: one derived from `sessionSecret`. */
  accessTokenSecret?: string;
  /** TOKEN_RATE_LIMIT / TOKEN_RATE_WINDOW_SECONDS: requests per personal access token per window (default 600 per 60 s). */
  tokenRateLimit?: number;
  tokenRateWindowSeconds?: number;
}

/** Requests one personal access token may make per window, unless configured (TOKEN_RATE_LIMIT / TOKEN_RATE_WINDOW_SECONDS). */
export const TOKEN_RATE_LIMIT = { points: 600, windowSeconds: 60 } as const;

/** Tuning for tests and measurements; the host passes `hashWorkers` only. */
export interface AccountsTuning extends SocialTuning {
  /** bcrypt cost (default 12). Tests lower it for speed where the cost is not the subject. */
  bcryptCost?: number;
  /** bcrypt jobs at once (default: one fewer than the cores, 1 to 4; the host passes PASSWORD_HASH_WORKERS). */
  hashWorkers?: number;
  /** How long the breach API may take before the password is accepted unchecked (default 2000 ms). */
  breachTimeoutMs?: number;
  /** Limits of unasked mail per recipient and per client IP (default: the config's, else UNASKED_MAIL_LIMITS). */
  unaskedMail?: UnaskedMailLimits;
  /** Most unexpired access tokens a person keeps (default ACCESS_TOKENS_PER_PERSON); tests lower it. */
  maxAccessTokens?: number;
}

/**
 * What the host hands the accounts service: its store, the knex of the package's other tables
 * (sessions, linked identities, the mail outbox, a person's data), the clock, the configuration,
 * and the capabilities of other packages. The service builds its own internal parts from these
 * (password hasher, breach check, mail worker, sessions, social sign-in, PersonService).
 */
export interface AccountServiceOptions {
  store: AccountStore;
  knex: Knex;
  clock: Clock;
  random?: RandomBytes;
  logger: Logger;
  config: AccountsConfig;
  /** From households: GET /me lists these. */
  memberships: MembershipsProvider;
  /**
   * The host's read kernel (`@svc/db/kernel`): the declared reads of the routes, composed with the
   * session statement by the kernel (this package never sees their tables).
   */
  reads?: DeclaredReads;
  /**
   * The second factors' summary as fields lent to GET /me/logins' declared read (from
   * @svc/sign-in-factors: `secondFactorLinks`), so the page is one statement with the session;
   * without them it asks the gate (`useSecondFactors`).
   */
  secondFactorLinks?: SecondFactorLinks;
  /**
   * Every other package's part of deleting an account (households, push, …), called in this order
   * inside the deletion's one transaction, before this package deletes its own rows.
   */
  deletionSteps: readonly AccountDeletionStep[];
  /** Every other package's data about a person, for GET /me/export. */
  personalData: PersonalDataSources;
  /** Tests may pass a transport; otherwise one is built from smtpUrl, or mail goes to .eml files. */
  mailTransport?: Transporter;
  /** The service's job queue: the outbox's deliveries run on it (queue `accounts-mail`), wherever it is started. */
  jobs: JobQueue;
  /** HTTP for the providers: Google's token and userinfo endpoints, Apple's token endpoint and key set (default: the global fetch). */
  fetch?: typeof fetch;
  /** Counters of dropped unasked mail (http-kit's `Metrics` has them); none: only logged. */
  metrics?: AccountsMetrics;
  tuning?: AccountsTuning;
  /** When given, the per-token rate limit is shared by every instance through it (else counted per instance). */
  redis?: RateLimitOptions['redis'];
}

/** What the account rules use (built by the constructor from AccountServiceOptions). */
interface Parts {
  store: AccountStore;
  hasher: PasswordHasher;
  breach: BreachChecker;
  mailer: Mailer;
  /** The job queue housekeeping is scheduled on. */
  jobs: JobQueue;
  clock: Clock;
  random: RandomBytes;
  logger: Logger;
  publicBaseUrl: string;
  lockoutMaxFailures: number;
  lockoutSeconds: number;
  unaskedMail: UnaskedMailLimits;
  metrics?: AccountsMetrics;
}

/** A password for a new account, change or reset: its form first, then the breach list. */
type PasswordRefusalCode = 'signup_rejected' | 'password_rejected';

/** Housekeeping's cron (UTC): hourly, one job for the cluster. */
const HOUSEKEEPING_CRON = '13 * * * *';

/**
 * The account rules of the spec (operations 1–10). Every multi-statement change runs in one
 * transaction, and the mail it causes is written to the outbox inside it.
 *
 * It also holds what the rest of the package and the host use around those rules: the cookie
 * sessions (`sessions.authenticate` is the session middleware of every router), social sign-in,
 * a person's own account (`person`), the outbox (its deliveries run on the job queue) and hourly housekeeping
 * (`startBackgroundWork`, `deliverDueMail`) and `close`.
 */
export class AccountService {
  private readonly o: Parts;
  readonly store: AccountStore;
  readonly config: AccountsConfig;
  readonly clock: Clock;
  readonly logger: Logger;
  /** From households (GET /me). */
  readonly memberships: MembershipsProvider;
  /** PLATFORM_ADMIN_EMAILS, normalised. */
  readonly platformAdminEmails: readonly string[];
  /** Cookie sessions: `authenticate` (the session middleware the host mounts on /api), sign-in, sign-out; `store` their table. */
  readonly sessions: Sessions;
  /** Google and Apple sign-in (createRouter mounts its routes). */
  readonly social: SocialSignIn;
  /** A person's own account: sessions, sign-in methods, the export, deletion. */
  readonly person: PersonService;
  /** A person's personal access tokens (POST, GET, DELETE /me/tokens); the bearer itself is read by `sessions.authenticate`. */
  readonly accessTokens: AccessTokenService;
  private readonly identities: IdentityStore;
  private housekeepingScheduled = false;
  /** The second factors (@svc/sign-in-factors), set by the host with `useSecondFactors`; none: every right first factor signs in. */
  private gate: SecondFactorGate | undefined;
  private readonly personStore: ObjectionPersonStore;

  constructor(options: AccountServiceOptions) {
    const { store, knex, clock, logger, config } = options;
    const random = options.random ?? systemRandom;
    this.store = store;
    this.config = config;
    this.clock = clock;
    this.logger = logger;
    this.memberships = options.memberships;
    this.platformAdminEmails = config.platformAdminEmails.map(normalizeEmail);
    const mailer = new Mailer({
      knex,
      jobs: options.jobs,
      clock,
      logger,
      from: config.mailFrom,
      transport: options.mailTransport,
      smtpUrl: config.smtpUrl,
      dataDir: config.dataDir,
    });
    this.o = {
      store,
      hasher: new PasswordHasher({ cost: options.tuning?.bcryptCost, workers: options.tuning?.hashWorkers }),
      breach: new BreachChecker({ baseUrl: config.passwordBreachApi, logger, timeoutMs: options.tuning?.breachTimeoutMs }),
      mailer,
      jobs: options.jobs,
      clock,
      random,
      logger,
      publicBaseUrl: config.publicBaseUrl,
      lockoutMaxFailures: config.lockoutMaxFailures,
      lockoutSeconds: config.lockoutSeconds,
      unaskedMail: options.tuning?.unaskedMail ?? {
        perRecipient: config.unaskedMailPerAddress ?? UNASKED_MAIL_LIMITS.perRecipient,
        perIp: config.unaskedMailPerIp ?? UNASKED_MAIL_LIMITS.perIp,
        windowMs: UNASKED_MAIL_LIMITS.windowMs,
      },
      metrics: options.metrics,
    };
    const tokenKey = config.accessTokenSecret ?? defaultAccessTokenKey(config.sessionSecret);
    this.accessTokens = new AccessTokenService({
      tokens: new ObjectionAccessTokenStore(knex),
      accounts: store,
      mailer,
      clock,
      random,
      key: tokenKey,
      publicBaseUrl: config.publicBaseUrl,
      maxTokens: options.tuning?.maxAccessTokens,
    });
    this.sessions = createSessions({
      knex,
      clock,
      random,
      logger,
      secret: config.sessionSecret,
      cookieSecure: config.cookieSecure,
      maxAgeMs: (config.sessionMaxAgeDays ?? SESSION_MAX_AGE_DAYS) * 24 * 3600_000,
      reads: options.reads,
      tokenKey,
      tokenLimit: new RateLimit({
        keyPrefix: 'token',
        points: config.tokenRateLimit ?? TOKEN_RATE_LIMIT.points,
        durationSeconds: config.tokenRateWindowSeconds ?? TOKEN_RATE_LIMIT.windowSeconds,
        redis: options.redis,
        code: 'rate_limited',
      }),
    });
    this.identities = new KnexIdentityStore(knex);
    this.social = new SocialSignIn({
      config: { google: config.google, apple: config.apple, appRedirectUris: config.appRedirectUris ?? [] },
      publicBaseUrl: config.publicBaseUrl,
      sessionSecret: config.sessionSecret,
      cookieSecure: config.cookieSecure,
      service: this,
      store,
      identities: this.identities,
      sessions: this.sessions,
      clock,
      random,
      logger,
      fetch: options.fetch ?? globalThis.fetch,
      tuning: options.tuning,
    });
    this.personStore = new ObjectionPersonStore(knex);
    this.person = new PersonService({
      store: this.personStore,
      mailer,
      clock,
      logger,
      publicBaseUrl: config.publicBaseUrl,
      checkPassword: loginPasswordCheck(this),
      secondFactors: () => this.gate,
      secondFactorLinks: options.secondFactorLinks,
      memberships: options.memberships,
      deletionSteps: options.deletionSteps,
      personalData: options.personalData,
    });
  }

  /** By id. */
  findById(id: string): Promise<Account | undefined> {
    return this.o.store.findById(id);
  }

  /** By address, compared case-insensitively. */
  findByEmail(email: string): Promise<Account | undefined> {
    return this.o.store.findByEmail(normalizeEmail(email));
  }

  /** The MeResponse for an account (reads its memberships). */
  async meResponse(account: Account | AccountSummary): Promise<MeResponse> {
    const summary = 'passwordHash' in account ? summarize(account) : account;
    return toMeResponse(summary, await this.memberships(summary.id), this.platformAdminEmails, this.clock.now());
  }

  /**
   * Signs `accountId` in on this request: a new session id recording the account's current stamp
   * and how the person signed in (default: the method of the caller's current session of this
   * account, else password); sets the cookie on this answer.
   */
  async signIn(req: Request, accountId: string, method?: SignInMethod): Promise<void> {
    const account = await this.o.store.findById(accountId);
    if (!account) throw new Error(`no account ${accountId}`);
    await this.sessions.signIn(req, accountId, account.securityStamp, method);
  }

  /**
   * Hands in the second factors (the host wires @svc/sign-in-factors here, after building it with
   * `signInCompletion()`): from then on a right first factor of an account with TOTP on answers
   * 401 `mfa_required` with an `mfaToken` instead of a session.
   */
  useSecondFactors(gate: SecondFactorGate): void {
    this.gate = gate;
  }

  /** The second factors' gate, when the host handed one in. */
  get secondFactors(): SecondFactorGate | undefined {
    return this.gate;
  }

  /**
   * After a right first factor: the mfaToken of a second step when one is due (TOTP on), else
   * undefined (sign in now).
   */
  secondStepFor(accountId: string, method: 'password' | 'google' | 'apple', options: { returnUrl?: string } = {}): Promise<string | undefined> {
    return this.gate ? timing.step('second-factor-gate', () => this.gate!.demand(accountId, method, options)) : Promise.resolve(undefined);
  }

  /**
   * Refuses an operation that asks for a fresh proof (the change of address; with `onlyWithTotp`,
   * the change of password) while the account has a second factor on (TOTP, or a passkey unless
   * `onlyWithTotp`) and `proof` names none that verifies: 401 `reauthentication_required`.
   */
  async requireStepUp(accountId: string, proof: StepUpProof, acceptLanguage?: string, options: { onlyWithTotp?: boolean } = {}): Promise<void> {
    if (!this.gate) return;
    const { totp, passkeys } = await this.gate.summary(accountId);
    if (!totp && (passkeys === 0 || options.onlyWithTotp)) return;
    if ((await this.gate.stepUp(accountId, proof, acceptLanguage)) !== 'ok')
      throw new AuthenticationError(
        'reauthentication_required',
        'Confirm it is you: send a code of your authenticator app, a recovery code or a passkey assertion',
      );
  }

  /** What @svc/sign-in-factors needs from this package (the host wires it). */
  signInCompletion(): SignInCompletion<Request> {
    return {
      complete: async (req, accountId, method) => {
        const account = await this.o.store.findById(accountId);
        if (!account) throw new AuthenticationError('invalid_credentials', 'The account no longer exists');
        await this.sessions.signIn(req, accountId, account.securityStamp, method);
        return this.meResponse(account);
      },
      underLockout: (accountId, check) => this.underLockout(accountId, check),
      profile: async (accountId, trx) => {
        const account = trx ? await this.o.store.lockById(accountId, trx as Knex.Transaction) : await this.o.store.findById(accountId);
        if (!account) return undefined;
        const identities = await this.personStore.identities(accountId, trx as Knex.Transaction | undefined);
        const password = account.passwordHash !== null && account.emailNormalized !== null ? 1 : 0;
        return { email: account.email, displayName: account.displayName, otherSignInMethods: password + identities.length };
      },
      checkPassword: async (accountId, password) => {
        const account = await this.o.store.findById(accountId);
        if (!account) return false;
        return (await this.verifyPasswordWithLockout(account, password)) !== undefined;
      },
      notify: async (accountId, notice: SignInFactorNotice, trx, acceptLanguage) => {
        const account = await this.o.store.findById(accountId, trx as Knex.Transaction);
        if (!account?.email) return;
        await this.writeMail(
          trx as Knex.Transaction,
          true,
          signInFactorNoticeMail(this.o.publicBaseUrl, {
            to: account.email,
            displayName: account.displayName,
            notice,
            language: noticeLanguage(acceptLanguage),
          }),
        );
      },
    };
  }

  /**
   * A second-factor check under the account's login lockout (the same key and count as its
   * passwords): a slot is reserved before the check (423 while locked), kept when the check fails,
   * and a passed check resets the count.
   */
  async underLockout(accountId: string, check: () => Promise<boolean>): Promise<boolean> {
    const account = await this.o.store.findById(accountId);
    if (!account) return false;
    const key = lockoutKey(account);
    const slot = await this.reserveOrLock(key);
    const ok = await check();
    if (ok) await this.o.store.releaseLoginAttempt(key, slot.lockedUntil);
    return ok;
  }

  /** Resolves once the background lastSeenAt writes of sessions started so far are done (tests, shutdown). */
  sessionsIdle(): Promise<void> {
    return this.sessions.store.idle();
  }

  /** Deletes sessions past their expiry; answers how many. */
  pruneSessions(): Promise<number> {
    return this.sessions.store.prune();
  }

  /** Runs the outbox's delivery jobs that are due now on this instance; answers how many mails went out. */
  deliverDueMail(): Promise<number> {
    return this.o.mailer.deliverDue();
  }

  /**
   * Schedules hourly housekeeping (expired sessions, old tokens, delivered mail older than 30 days,
   * old app sign-in codes and spent external-cookie ids) on the job queue: pg-boss's cron, one job
   * an hour for the cluster, run wherever the queue runs (the host starts it, after this). Mail goes
   * out there too; tests drive the outbox with `deliverDueMail` instead.
   */
  async startBackgroundWork(): Promise<void> {
    if (this.housekeepingScheduled) return;
    this.housekeepingScheduled = true;
    this.o.jobs.define(HOUSEKEEPING_QUEUE, () => this.housekeeping(), { expireInSeconds: 600 });
    await this.o.jobs.schedule(HOUSEKEEPING_QUEUE, HOUSEKEEPING_CRON);
  }

  /** Waits for the session writes, closes the mail transport and the hashing threads (stop the job queue first: it runs housekeeping). */
  async close(): Promise<void> {
    await this.sessions.store.idle();
    this.o.mailer.close();
    await this.o.hasher.close();
  }

  /** Deletes what no rule reads any more; a failure is logged and waits for the next hour. */
  private async housekeeping(): Promise<void> {
    const now = () => this.clock.now();
    try {
      const deleted = {
        sessions: await this.sessions.store.prune(),
        ...(await this.o.store.prune(now())),
        appSigninCodes: await this.identities.prune(now()),
        spentExternalCookies: await this.identities.pruneSpentExternalCookies(now()),
        spentIdentityTokens: await this.identities.pruneSpentIdentityTokens(now()),
      };
      this.logger.debug({ deleted }, 'accounts housekeeping');
    } catch (err) {
      this.logger.warn({ err: { message: (err as Error).message } }, 'accounts housekeeping failed');
    }
  }

  private now(): Date {
    return this.o.clock.now();
  }

  private async checkNewPassword(typed: string, code: PasswordRefusalCode, field: string): Promise<void> {
    // The rules and the breach list judge what is stored: the NFKC form.
    const password = normalizePassword(typed);
    if (passwordTooShort(password)) throw new InputError(code, PASSWORD_RULES, [{ field, message: 'must be at least 8 characters', in: 'body' }]);
    if (await timing.step('breach-check', () => this.o.breach.isPwned(password))) {
      throw new InputError('password_pwned', 'This password has been seen in a data breach; choose another', [
        { field, message: 'has been seen in a data breach', in: 'body' },
      ]);
    }
  }

  private hash(password: string): Promise<string> {
    return timing.step('hash-password', () => this.o.hasher.hash(password));
  }

  /** A new token for a mailed link and its row (written by `writeMail`, which retires the older ones). */
  private newTokenRow(accountId: string, purpose: TokenPurpose, email: string, origin?: NewToken['origin']): { token: string; row: NewToken } {
    const token = newToken(this.o.random);
    const now = this.now();
    return {
      token,
      row: {
        accountId,
        purpose,
        tokenHash: hashToken(token),
        email,
        emailNormalized: normalizeEmail(email),
        origin,
        createdAt: now,
        expiresAt: new Date(now.getTime() + TOKEN_LIFETIME_MS[purpose]),
      },
    };
  }

  /** One statement whether or not it sends (see AccountStore.writeMail). */
  private writeMail(trx: Knex.Transaction, send: boolean, mail: MailContent, token?: NewToken): Promise<void> {
    return this.o.store.writeMail({ send, token, mail: outboxRow(mail), now: this.now() }, trx);
  }

  /**
   * Counts a request for unasked mail to `recipient` (and from `origin.ip`) and answers whether it
   * may go out. Always one statement, whatever the caller then does with the answer.
   */
  private async unaskedMailAllowed(trx: Knex.Transaction, recipient: string, origin: RequestOrigin, kind: string, enforced = true): Promise<boolean> {
    const limits = this.o.unaskedMail;
    const counts = await this.o.store.countUnaskedMail({ recipient, ip: origin.ip, perIp: limits.perIp }, limits.windowMs, this.now(), trx);
    const limit = counts.recipientCount > limits.perRecipient ? 'address' : counts.ipAllowed === false ? 'ip' : undefined;
    if (limit && enforced) {
      // No address in the log line (which address is being flooded is nobody's business but its
      // owner's): its domain only, enough to see a campaign against one provider.
      this.o.logger.warn(
        { kind, limit, domain: recipient.includes('@') ? recipient.slice(recipient.lastIndexOf('@') + 1) : null },
        'unasked mail limit reached; mail dropped',
      );
      this.o.metrics?.unaskedMailDropped.inc({ kind, limit });
    }
    return limit === undefined;
  }

  /** Every open link of the account dies with a change of its password or address. */
  private retireAllLinks(trx: Knex.Transaction, accountId: string, now: Date): Promise<void> {
    return this.o.store.retireTokens(accountId, ALL_LINKS, now, trx);
  }

  /** Runs `fn` in a transaction and, once it committed, nudges this instance's job runner (mail goes out at once, not at its next poll). */
  private async withMail<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    const result = await this.o.store.transaction(fn);
    this.o.mailer.nudge();
    return result;
  }

  /**
   * Rule 3. Answers the new account when the address was fresh (the caller then signs it in), or
   * undefined when it already had an account (that account is mailed; nothing else reveals it).
   * The password is checked and hashed either way, so both answers cost the same.
   */
  async register(input: { email: string; password: string; displayName: string }, origin: RequestOrigin = {}): Promise<Account | undefined> {
    const displayName = input.displayName.trim();
    if (displayName.length === 0)
      throw new InputError('validation_failed', 'The display name must not be blank', [{ field: 'displayName', message: 'must not be blank', in: 'body' }]);
    if (!looksLikeAddress(input.email))
      throw new InputError('signup_rejected', 'The address is not a usable e-mail address', [
        { field: 'email', message: 'is not an e-mail address', in: 'body' },
      ]);
    await this.checkNewPassword(input.password, 'signup_rejected', 'password');
    const email = tidyEmail(input.email);
    const emailNormalized = normalizeEmail(email);
    const passwordHash = await this.hash(input.password);
    const base = this.o.publicBaseUrl;
    // Equal work on both branches (the statement count shows in Server-Timing): a fresh address
    // costs insert, count, mail here plus the new session's row; a taken one insert, read, count,
    // mail. The mail goes to the outbox either way and is sent after the answer.
    return this.withMail(async (trx) => {
      const created = await this.o.store.insertIfNew(
        { email, emailNormalized, displayName, passwordHash, emailConfirmed: false, securityStamp: newStamp(this.o.random) },
        this.now(),
        trx,
      );
      if (!created) {
        const existing = await this.o.store.findByEmail(emailNormalized, trx);
        const allowed = await this.unaskedMailAllowed(trx, emailNormalized, origin, 'account_exists');
        const to = existing?.email ?? email;
        await this.writeMail(trx, allowed && existing?.email != null, accountExistsMail(base, { to, displayName: existing?.displayName ?? displayName }));
        return undefined;
      }
      // Counted like any unasked mail, but always sent: it comes with a new account, which the
      // next sign-up with this address finds taken.
      await this.unaskedMailAllowed(trx, emailNormalized, origin, 'confirm_email', false);
      const { token, row } = this.newTokenRow(created.id, 'confirm_email', email);
      await this.writeMail(trx, true, confirmEmailMail(base, { to: email, displayName, userId: created.id, token }), row);
      return created;
    });
  }

  /**
   * Every password check goes through here: login, the current password of a change, and any
   * re-authentication (e.g. deleting the account). `who` is an address (login: an unknown address
   * walks the same path, costs the same statements and one bcrypt) or an account as the caller read
   * it. A failure slot is reserved in PostgreSQL BEFORE the hash is checked (one statement, shared
   * by every instance), so at most LOCKOUT_MAX_FAILURES passwords are checked per lock window
   * however many arrive at once; while the lock runs every attempt, the right password included,
   * is refused with 423 `account_locked` before any check. A right password gives its slot back
   * (the count starts again). Answers the account, or undefined for a wrong address or password.
   * An account is keyed by its address (so login and re-authentication share one count), or by
   * its id when it has none.
   */
  async verifyPasswordWithLockout(who: Account | string, password: string): Promise<Account | undefined> {
    return (await this.checkPasswordUnderLockout(who, password))?.account;
  }

  /** Reserves a failure slot of `key`, or throws 423 `account_locked` (Retry-After: the seconds left). */
  private async reserveOrLock(key: string): Promise<{ lockedUntil: Date | null }> {
    const now = this.now();
    const slot = await this.o.store.reserveLoginAttempt(key, this.o.lockoutMaxFailures, new Date(now.getTime() + this.o.lockoutSeconds * 1000), now);
    if (!slot) {
      // Retry-After: the seconds left of the lock (a reset lifts it sooner).
      const until = await this.o.store.lockEnd(key);
      const wait = until ? Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000)) : this.o.lockoutSeconds;
      throw new LockedError('account_locked', 'Too many wrong passwords; this account is locked for a few minutes, or until its password is reset', {
        headers: { 'Retry-After': String(wait) },
      });
    }
    return slot;
  }

  /**
   * verifyPasswordWithLockout, and for a login the second step: `secondStep` is asked once the
   * password is right; when it answers an mfaToken the attempt gives its failure back without
   * resetting the count (only the completed second step resets it).
   */
  private async checkPasswordUnderLockout(
    who: Account | string,
    password: string,
    secondStep?: (account: Account) => Promise<string | undefined>,
  ): Promise<{ account: Account; mfaToken?: string } | undefined> {
    const key = typeof who === 'string' ? normalizeEmail(who) : lockoutKey(who);
    const slot = await this.reserveOrLock(key);
    const account = typeof who === 'string' ? await this.o.store.findByEmail(key) : who;
    const ok = await timing.step('hash-password', () => this.o.hasher.verifyOrBurn(password, account?.passwordHash));
    if (!ok || !account) return undefined;
    const mfaToken = secondStep ? await secondStep(account) : undefined;
    if (mfaToken) await this.o.store.returnLoginAttempt(key, slot.lockedUntil);
    else await this.o.store.releaseLoginAttempt(key, slot.lockedUntil);
    if (ok === 'legacy') {
      // A hash from before passwords were normalised, of a password NFKC changes: from now on the
      // normalised form is stored (only if the hash is still the one that was checked).
      const passwordHash = await this.hash(password);
      await this.o.store.replacePasswordHash(account.id, account.passwordHash!, passwordHash, this.now());
    }
    return { account, mfaToken };
  }

  /**
   * POST /auth/login: the account, and the mfaToken when TOTP is on (then no session is made and
   * the lockout count is not reset).
   */
  login(emailInput: string, password: string): Promise<{ account: Account; mfaToken?: string } | undefined> {
    return this.checkPasswordUnderLockout(emailInput, password, (account) => this.secondStepFor(account.id, 'password'));
  }

  /** Rule 4 (login): `verifyPasswordWithLockout` by address. */
  verifyLogin(emailInput: string, password: string): Promise<Account | undefined> {
    return this.verifyPasswordWithLockout(emailInput, password);
  }

  async updateDisplayName(accountId: string, displayNameInput: string): Promise<Account | undefined> {
    const displayName = displayNameInput.trim();
    if ([...displayName].length < 1 || [...displayName].length > 80) {
      throw new InputError('account_name_length', 'The display name must be 1 to 80 characters', [
        { field: 'displayName', message: 'must be 1 to 80 characters', in: 'body' },
      ]);
    }
    return this.o.store.updateDisplayName(accountId, displayName, this.now());
  }

  /**
   * Rule 1. Answers the new security stamp; the caller re-issues its own session with it. The
   * current password is checked under the lockout, like a login (423 while locked). A new password
   * retires every open mailed link of the account (reset, confirm, change of address) and mails
   * the holder a notice.
   */
  async changePassword(accountId: string, currentPassword: string | null, newPassword: string): Promise<string | undefined> {
    const account = await this.o.store.findById(accountId);
    if (!account) return undefined;
    if (account.passwordHash !== null) {
      if (currentPassword === null) {
        throw new InputError('validation_failed', 'currentPassword is required: this account has a password', [
          { field: 'currentPassword', message: 'is required when the account has a password', in: 'body' },
        ]);
      }
      if (!(await this.verifyPasswordWithLockout(account, currentPassword)))
        throw new InputError('wrong_current_password', 'The current password did not match', [
          { field: 'currentPassword', message: 'did not match', in: 'body' },
        ]);
    }
    await this.checkNewPassword(newPassword, 'password_rejected', 'newPassword');
    const passwordHash = await this.hash(newPassword);
    const securityStamp = newStamp(this.o.random);
    return this.withMail(async (trx) => {
      const now = this.now();
      // The row lock orders this after (or before) a change of address being requested right now.
      const locked = await this.o.store.lockById(accountId, trx);
      if (!locked) return undefined;
      const updated = await this.o.store.update(accountId, { passwordHash, securityStamp }, now, trx);
      await this.retireAllLinks(trx, accountId, now);
      // A new password ends every personal access token (decisions.md §8).
      await this.accessTokens.endAll(accountId, trx);
      const to = locked.email ?? '';
      await this.writeMail(trx, locked.email !== null, passwordChangedNoticeMail(this.o.publicBaseUrl, { to, displayName: locked.displayName }));
      return updated?.securityStamp;
    });
  }

  /** Logout (rule 5): a new stamp ends every session of the account at its next request. */
  async rotateStamp(accountId: string): Promise<void> {
    await this.o.store.update(accountId, { securityStamp: newStamp(this.o.random) }, this.now());
  }

  /**
   * For social sign-in: an account without a password. Confirmed when the identity provider
   * vouched for the address. Answers undefined when the address already has an account (the
   * caller decides whether to link it). Waitlist entries for the address become this account's.
   * `link` runs in the same transaction once the account exists (social sign-in links the
   * identity there, so a failed link leaves no account behind).
   */
  async createPasswordlessAccount(
    input: { email: string | null; emailVerified: boolean; displayName: string },
    link?: (trx: Knex.Transaction, account: Account) => Promise<void>,
  ): Promise<Account | undefined> {
    const email = input.email && looksLikeAddress(input.email) ? tidyEmail(input.email) : null;
    const emailNormalized = email ? normalizeEmail(email) : null;
    const displayName = [...(input.displayName.trim() || email?.split('@')[0] || 'Member')].slice(0, 80).join('');
    return this.o.store.transaction(async (trx) => {
      const created = await this.o.store.insertIfNew(
        {
          email,
          emailNormalized,
          displayName,
          passwordHash: null,
          emailConfirmed: email !== null && input.emailVerified,
          securityStamp: newStamp(this.o.random),
        },
        this.now(),
        trx,
      );
      if (created && link) await link(trx, created);
      return created;
    });
  }

  /**
   * For social sign-in that found this account by an address the identity provider vouches for:
   * runs `link` (in one transaction, the account row locked) and answers the account. When nobody
   * had confirmed the address here, the provider's word now proves it: the address becomes
   * confirmed, a password set by whoever registered it without proving it is dropped, and the
   * stamp rotates so their sessions end, and every mailed link still open is spent (account
   * pre-hijacking). Undefined when the account is gone.
   */
  async adoptByVerifiedAddress(
    accountId: string,
    link: (trx: Knex.Transaction, account: Account) => Promise<void>,
    providerName = 'Another sign-in',
  ): Promise<Account | undefined> {
    return this.withMail(async (trx) => {
      const account = await this.o.store.lockById(accountId, trx);
      if (!account) return undefined;
      let adopted: Account | undefined = account;
      if (!account.emailConfirmed) {
        const now = this.now();
        adopted = await this.o.store.update(accountId, { emailConfirmed: true, passwordHash: null, securityStamp: newStamp(this.o.random) }, now, trx);
        // Links the squatter asked for (a change of address to one of theirs) must not outlive them, nor tokens they made.
        await this.retireAllLinks(trx, accountId, now);
        await this.accessTokens.endAll(accountId, trx);
      }
      if (!adopted) return undefined;
      await link(trx, adopted);
      // The holder hears of every new way into their account.
      if (adopted.email)
        await this.writeMail(
          trx,
          true,
          identityLinkedNoticeMail(this.o.publicBaseUrl, { to: adopted.email, displayName: adopted.displayName, provider: providerName }),
        );
      return adopted;
    });
  }

  /**
   * Rule 2. Always 204 for a well-formed address; whether it is taken is never revealed, not even
   * by the work done: a taken address costs the same statements (its link is simply not written).
   * The link to the new address counts as unasked mail there; the heads-up to the old address is
   * always sent.
   */
  async requestEmailChange(accountId: string, newEmailInput: string, origin: RequestOrigin = {}): Promise<void> {
    if (!looksLikeAddress(newEmailInput))
      throw new InputError('email_not_an_address', 'That does not look like an e-mail address', [
        { field: 'newEmail', message: 'is not an e-mail address', in: 'body' },
      ]);
    const newEmail = tidyEmail(newEmailInput);
    const newNormalized = normalizeEmail(newEmail);
    const base = this.o.publicBaseUrl;
    await this.withMail(async (trx) => {
      const account = await this.o.store.lockById(accountId, trx);
      if (!account) return;
      // A taken address gets no link (it could never be confirmed); the answer is the same.
      const taken = await this.o.store.emailTaken(newNormalized, accountId, trx);
      const allowed = await this.unaskedMailAllowed(trx, newNormalized, origin, 'change_email');
      const change = this.newTokenRow(accountId, 'change_email', newEmail);
      await this.writeMail(
        trx,
        !taken && allowed,
        changeEmailMail(base, { to: newEmail, displayName: account.displayName, userId: accountId, token: change.token }),
        change.row,
      );
      const oldAddress = account.email ?? newEmail;
      const reset = this.newTokenRow(accountId, 'reset_password', oldAddress, 'email_change_notice');
      await this.writeMail(
        trx,
        account.email !== null,
        changeEmailNoticeMail(base, { to: oldAddress, displayName: account.displayName, newEmail, token: reset.token }),
        reset.row,
      );
    });
  }

  /** Rule 6 and decisions.md §3: an already confirmed address answers 204 whatever the token. */
  async confirmEmail(userId: string, token: string): Promise<void> {
    await this.o.store.transaction(async (trx) => {
      // The row lock serialises concurrent confirmations: one spends the token, the rest find the address confirmed.
      const account = await this.o.store.lockById(userId, trx);
      if (!account) throw invalidToken();
      if (account.emailConfirmed) return;
      if (!account.emailNormalized) throw invalidToken();
      const spent = await this.o.store.spendToken(
        {
          tokenHash: hashToken(token),
          purpose: 'confirm_email',
          accountId: userId,
          emailNormalized: account.emailNormalized,
          now: this.now(),
        },
        trx,
      );
      if (!spent) throw invalidToken();
      await this.o.store.update(userId, { emailConfirmed: true }, this.now(), trx);
    });
  }

  /**
   * Rule 7. The new address becomes the login, confirmed; the stamp rotates (every other session
   * ends). Answers the new stamp so a caller signed in as this account keeps its session.
   */
  async confirmEmailChange(userId: string, newEmailInput: string, token: string): Promise<string> {
    const emailNormalized = normalizeEmail(newEmailInput);
    try {
      return await this.withMail(async (trx) => {
        const account = await this.o.store.lockById(userId, trx);
        if (!account) throw invalidToken();
        const spent = await this.o.store.spendToken(
          {
            tokenHash: hashToken(token),
            purpose: 'change_email',
            accountId: userId,
            emailNormalized,
            now: this.now(),
          },
          trx,
        );
        if (!spent) throw invalidToken();
        if (await this.o.store.emailTaken(emailNormalized, userId, trx)) throw invalidToken('That address now belongs to another account');
        const securityStamp = newStamp(this.o.random);
        const now = this.now();
        await this.o.store.update(userId, { email: spent.email, emailNormalized, emailConfirmed: true, securityStamp }, now, trx);
        // Every other open link (the old address's heads-up reset link included) was issued for
        // the address that is now gone.
        await this.retireAllLinks(trx, userId, now);
        // The notice goes to the OLD address: the one person who may not have wanted this.
        const oldAddress = account.email ?? spent.email;
        await this.writeMail(
          trx,
          account.email !== null && account.emailNormalized !== emailNormalized,
          emailChangedNoticeMail({ to: oldAddress, displayName: account.displayName, newEmail: spent.email }),
        );
        return securityStamp;
      });
    } catch (err) {
      // Two accounts confirming the same new address at once: the unique key lets one through.
      if (isPgError(err, PG.uniqueViolation)) throw invalidToken('That address now belongs to another account');
      throw err;
    }
  }

  /**
   * Rule 8. A confirmed address costs the same statements as one that is mailed; the mail counts
   * as unasked mail to the address. 429 within five minutes of the last confirmation link.
   */
  async resendConfirmation(accountId: string, origin: RequestOrigin = {}): Promise<void> {
    const base = this.o.publicBaseUrl;
    await this.withMail(async (trx) => {
      const account = await this.o.store.lockById(accountId, trx);
      if (!account) return;
      const wanted = !account.emailConfirmed && account.email !== null;
      const last = await this.o.store.lastTokenIssuedAt({ accountId, purpose: 'confirm_email' }, trx);
      const waitMs = last ? last.getTime() + MAIL_COOLDOWN_MS - this.now().getTime() : 0;
      if (wanted && waitMs > 0) throw new TooManyRequestsError('resend_cooldown', 'A confirmation mail went out less than five minutes ago', waitMs / 1000);
      const allowed = await this.unaskedMailAllowed(trx, lockoutKey(account), origin, 'confirm_email');
      const to = account.email ?? '';
      const { token, row } = this.newTokenRow(accountId, 'confirm_email', to);
      await this.writeMail(trx, wanted && allowed, confirmEmailMail(base, { to, displayName: account.displayName, userId: accountId, token }), row);
    });
  }

  /**
   * Rule 9: always 204; a second request for the account within five minutes is dropped, and so
   * is unasked mail past the per-address and per-IP limits. An address without an account runs
   * the same four statements and renders the same mail, which is then not written.
   */
  async forgotPassword(emailInput: string, origin: RequestOrigin = {}): Promise<void> {
    // Only an address in the documented form is ever mailed (register and change of address
    // accept no other): anything else has no account to reset and gets the same 204.
    if (!looksLikeAddress(emailInput)) return;
    const key = normalizeEmail(emailInput);
    const base = this.o.publicBaseUrl;
    await this.withMail(async (trx) => {
      const account = await this.o.store.lockByEmail(key, trx);
      const allowed = await this.unaskedMailAllowed(trx, key, origin, 'reset_password');
      const last = await this.o.store.lastTokenIssuedAt({ accountId: account?.id ?? NO_ACCOUNT, purpose: 'reset_password', origin: 'forgot_password' }, trx);
      const duplicate = last !== undefined && this.now().getTime() - last.getTime() < MAIL_COOLDOWN_MS;
      const to = account?.email ?? tidyEmail(emailInput);
      const { token, row } = this.newTokenRow(account?.id ?? NO_ACCOUNT, 'reset_password', to, 'forgot_password');
      await this.writeMail(
        trx,
        account?.email != null && allowed && !duplicate,
        resetPasswordMail(base, { to, displayName: account?.displayName ?? '', token }),
        row,
      );
    });
  }

  /**
   * Rule 10. The token proves the address, so a reset also confirms it, lifts a login lock,
   * retires every other open link of the account (reset, confirm, change of address), rotates the
   * stamp (whoever knew the old password is out) and mails the holder a notice.
   */
  async resetPassword(emailInput: string, token: string, newPassword: string): Promise<void> {
    const key = normalizeEmail(emailInput);
    const account = key ? await this.o.store.findByEmail(key) : undefined;
    const query = account && { tokenHash: hashToken(token), purpose: 'reset_password' as const, accountId: account.id, emailNormalized: key };
    // Check the token before the password, so a weak password does not spend a good link.
    if (!account || !query || !(await this.o.store.findLiveToken({ ...query, now: this.now() }))) throw invalidToken();
    await this.checkNewPassword(newPassword, 'password_rejected', 'newPassword');
    const passwordHash = await this.hash(newPassword);
    await this.withMail(async (trx) => {
      const now = this.now();
      // The row lock orders this after (or before) a change of address being requested right now.
      const locked = await this.o.store.lockById(account.id, trx);
      const spent = await this.o.store.spendToken({ ...query, now }, trx);
      if (!spent || !locked) throw invalidToken();
      await this.retireAllLinks(trx, account.id, now);
      await this.accessTokens.endAll(account.id, trx);
      await this.o.store.update(account.id, { passwordHash, emailConfirmed: true, securityStamp: newStamp(this.o.random) }, now, trx);
      await this.o.store.clearLoginFailures(key, trx);
      // Codes blocked by the cap of wrong TOTP codes work again after a reset by mail.
      await this.gate?.resetCodeFailures?.(account.id, trx);
      await this.writeMail(trx, true, passwordResetNoticeMail(this.o.publicBaseUrl, { to: locked.email ?? spent.email, displayName: locked.displayName }));
    });
  }
}

function invalidToken(detail = 'The link has expired or was already used'): InputError {
  return new InputError('invalid_token', detail);
}
