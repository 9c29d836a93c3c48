/**
 * @svc/accounts: accounts, sign-up and sign-in with e-mail and password, social sign-in (Google
 * and Apple, browser and app flows, native Apple sign-in), cookie sessions checked against a
 * security stamp, the mail outbox, login lockout, the waitlist.
 *
 * The host calls `createAccounts(deps)` once and wires what it answers: `router` (built by
 * `createRouter` from the parts `createAccounts` makes) with the other
 * routers, `authenticate` as the session middleware, `authLimiter` before /api/v1/auth/*,
 * `mailer.start()` after listening (and `mailer.stop()` / `close()` at shutdown), `directory` into
 * the packages that need to know accounts (households).
 */
import type { AccountDeletionStep, AccountDirectory, Clock, MembershipsProvider, MembershipsSql, PersonalDataSources, RandomBytes } from '@svc/contracts';
import { type ApiRouter, type Logger, RateLimit, type RateLimitOptions, systemRandom } from '@svc/http-kit';
import type { Request, RequestHandler, Router } from 'express';
import type { Knex } from 'knex';
import type { Transporter } from 'nodemailer';
import passportModule, { type PassportStatic } from 'passport';
import { Strategy as LocalStrategy } from 'passport-local';
import { AccountService, type UnaskedMailLimits } from './AccountService.js';
import type { Account } from './AccountStore.js';
import { normalizeEmail } from './email.js';
import { KnexAccountStore } from './KnexAccountStore.js';
import { Mailer } from './Mailer.js';
import { type AccountSummary, type MeResponse, summarize, toMeResponse } from './me.js';
import { PasswordHasher } from './PasswordHasher.js';
import { createPages } from './pages/index.js';
import { loginPasswordCheck } from './password-check.js';
import { BreachChecker } from './passwords.js';
import { PersonService } from './person-service.js';
import { ObjectionPersonStore } from './person-store.js';
import { createRouter } from './router.js';
import { createSessions, type SignInMethod } from './sessions.js';
import type { AppleConfig, GoogleConfig } from './social/config.js';
import { KnexIdentityStore } from './social/KnexIdentityStore.js';
import { SocialSignIn, type SocialTuning } from './social/SocialSignIn.js';

export { lockoutKey, UNASKED_MAIL_LIMITS, type UnaskedMailLimits } from './AccountService.js';
export { LAST_SEEN_GRANULARITY_MS } from './AccountSessionStore.js';
export type { Account } from './AccountStore.js';
export { normalizeEmail } from './email.js';
export { MAIL_RETRY } from './Mailer.js';
export type { AccountSummary, MeResponse, UserResponse } from './me.js';
export { migrate, migrations } from './migrations.js';
export * from './models/index.js';
export { type OutboxBacklog, outboxBacklog } from './outbox-backlog.js';
export { BCRYPT_NATIVE, prehash } from './PasswordHasher.js';
export { PAGE_PATHS } from './pages/index.js';
export { loginPasswordCheck } from './password-check.js';
export { addPersonRoutes, type PersonRoutesOptions } from './person-router.js';
export {
  type Caller,
  EXPORT_INTERVAL_MS,
  type PasswordCheck,
  type PersonalDataExport,
  PersonService,
  type PersonServiceOptions,
  RECENT_SIGN_IN_MS,
} from './person-service.js';
export { ObjectionPersonStore, type PersonAccount, type PersonStore } from './person-store.js';
export { type AccountsRouterDeps, createRouter, type RouterOptions } from './router.js';
export {
  AuthProviderResponseSchema,
  DeleteMeBody,
  type ExportedAccount,
  ExportedAccountSchema,
  type LinkedIdentity,
  LinkedIdentitySchema,
  type LoginsResponse,
  LoginsResponseSchema,
  MembershipResponseSchema,
  MeResponseSchema,
  PersonalDataExportSchema,
  ProviderParams,
  SessionIdParams,
  SessionListResponseSchema,
  type SessionResponse,
  SessionResponseSchema,
  UserResponseSchema,
} from './schemas.js';
export { SESSION_RENEW_AFTER_MS, SESSION_TTL_MS, type SignInMethod, USER_AGENT_MAX } from './sessions.js';
export type { AppleConfig, GoogleConfig } from './social/config.js';
export type { SocialRoutesDeps } from './social/router.js';
export { APP_CODE_LIFETIME_MS, type AuthProviderResponse, EXTERNAL_COOKIE, s256 } from './social/SocialSignIn.js';

/** ioredis, as http-kit's RateLimit takes it (no direct dependency on ioredis here). */
export type Redis = NonNullable<RateLimitOptions['redis']>;

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
  /** Requests per client IP per window, shared by every /api/v1/auth/* operation. */
  authRateLimit: number;
  authRateWindowSeconds: number;
  /** Wrong passwords in a row before the lock, and the lock's length. */
  lockoutMaxFailures: number;
  lockoutSeconds: number;
  /** k-anonymity range API base URL; undefined: breached passwords are not checked. */
  passwordBreachApi?: string;
  /** Lower-cased addresses whose (confirmed) accounts are platform admins. */
  platformAdminEmails: string[];
  /** Google sign-in (GOOGLE_*); undefined: Google is not offered. */
  google?: GoogleConfig;
  /** Sign in with Apple (APPLE_*): `web` for the browser, `nativeAudiences` for the app; undefined: neither. */
  apple?: AppleConfig;
  /** APP_REDIRECT_URIS: the exact `redirectUri` values the app flow may end on (none: no app flow). */
  appRedirectUris?: string[];
}

export interface AccountsDeps {
  knex: Knex;
  clock: Clock;
  random?: RandomBytes;
  logger: Logger;
  config: AccountsConfig;
  /** When given, the auth rate limit is shared by every instance through it. */
  redis?: Redis;
  /** From households: GET /me lists these. */
  memberships: MembershipsProvider;
  /**
   * From households: the same memberships as SQL, composed into the session statement so the
   * session read loads them in the same round trip (GET /me then costs one query, and household
   * routes take the caller's role from it). Without it GET /me asks `memberships`.
   */
  membershipsSql?: MembershipsSql;
  /**
   * Every other package's part of deleting an account (households, push, …), called in this order
   * inside the deletion's one transaction, before this package deletes its own rows.
   */
  deletionSteps: readonly AccountDeletionStep[];
  /** Every other package's data about a person, for GET /me/export. */
  personalData: PersonalDataSources;
  /** Tests may pass a transport; otherwise one is built from smtpUrl, or mail goes to .eml files. */
  mailTransport?: Transporter;
  /** HTTP for the providers: Google's token and userinfo endpoints, Apple's token endpoint and key set (default: the global fetch). */
  fetch?: typeof fetch;
  /** Tuning for tests and measurements; the service leaves these out. */
  tuning?: {
    /** bcrypt cost (default 12). Tests lower it for speed where the cost is not the subject. */
    bcryptCost?: number;
    /** bcrypt jobs at once (default: one fewer than the cores, 1 to 4; the host passes PASSWORD_HASH_WORKERS). */
    hashWorkers?: number;
    /** How long the breach API may take before the password is accepted unchecked (default 2000 ms). */
    breachTimeoutMs?: number;
    /** Limits of unasked mail per recipient and per client IP (default UNASKED_MAIL_LIMITS). */
    unaskedMail?: UnaskedMailLimits;
  } & SocialTuning;
}

/**
 * Accounts as other code in the host may need them (social sign-in inside this package uses the
 * same operations): find or create an account, then `sessions.signIn(req, account.id)` and answer
 * `meResponse(account)`.
 */
export interface AccountsService {
  findById(id: string): Promise<Account | undefined>;
  /** By address, compared case-insensitively. */
  findByEmail(email: string): Promise<Account | undefined>;
  /**
   * A new account without a password; `emailVerified` (the provider vouched) makes the address
   * confirmed. Undefined when the address already has an account. Links waitlist entries.
   */
  createPasswordlessAccount(input: { email: string | null; emailVerified: boolean; displayName: string }): Promise<Account | undefined>;
  /** The MeResponse for an account (reads its memberships). */
  meResponse(account: Account | AccountSummary): Promise<MeResponse>;
  /**
   * The one way to check a password (login, change of password, re-authentication such as
   * deleting the account): under the lockout shared with login, atomically and across instances.
   * `who` is an address or an account (as just read). Answers the account when the password is
   * right, undefined when it is not (or the address has no account); throws 423 `account_locked`
   * (LockedError) while the lock runs, the right password included. Every call that answers
   * undefined has used up one of the LOCKOUT_MAX_FAILURES attempts of the window.
   */
  verifyPasswordWithLockout(who: Account | string, password: string): Promise<Account | undefined>;
}

export interface AccountDirectoryWithWaitlist extends AccountDirectory {
  /** Every waitlist entry, oldest first; `email` is the account's current address when linked. */
  listWaitlist(): Promise<{ email: string | null; accountId: string | null; reason: string; createdAt: string }[]>;
}

export interface Accounts {
  /** Every account operation of the spec, social sign-in included. */
  router: ApiRouter;
  /** Session middleware for /api: loads the session with its account, stamp and memberships (one query) and sets `req.principal`. */
  authenticate: RequestHandler[];
  /** The per-client-IP limit shared by all /api/v1/auth/* (429 `rate_limited`, Retry-After seconds). */
  authLimiter: RequestHandler;
  directory: AccountDirectoryWithWaitlist;
  /**
   * HTML pages at the paths of the mailed links (/confirm-email, /confirm-email-change,
   * /reset-password), for a person without the web client. The host mounts them before the JSON
   * body parser (their forms post urlencoded) unless WEB_PAGES=off.
   */
  pages: Router;
  /** The outbox worker. `deliverDue()` delivers what is due now and answers how many went out. */
  /**
   * The outbox worker. `start()` also starts hourly housekeeping (expired sessions, old tokens,
   * delivered mail older than 30 days, old app sign-in codes and spent external-cookie ids). `deliverDue()` delivers what is due now and answers how many went out.
   */
  mailer: { start(): void; stop(): Promise<void>; deliverDue(): Promise<number> };
  sessions: {
    /**
     * New session id for the account, recording its current stamp and how the person signed in
     * (default: the method of the caller's current session of this account, else password); sets
     * the cookie on this answer.
     */
    signIn(req: Request, accountId: string, method?: SignInMethod): Promise<void>;
    /** Resolves once the background lastSeenAt writes started so far are done (tests). */
    idle(): Promise<void>;
    /** Deletes sessions past their expiry; answers how many. */
    prune(): Promise<number>;
  };
  accountsService: AccountsService;
  /** Stops the mailer, closes the mail transport and the hashing threads. */
  close(): Promise<void>;
}

const HOUSEKEEPING_MS = 3600_000;

/** Builds the accounts package around its dependencies. Call once per process (or per test app). */
export function createAccounts(deps: AccountsDeps): Accounts {
  const { knex, clock, logger, config } = deps;
  const random = deps.random ?? systemRandom;
  const store = new KnexAccountStore(knex);
  const hasher = new PasswordHasher({ cost: deps.tuning?.bcryptCost, workers: deps.tuning?.hashWorkers });
  const breach = new BreachChecker({ baseUrl: config.passwordBreachApi, logger, timeoutMs: deps.tuning?.breachTimeoutMs });
  const mailer = new Mailer({ knex, clock, logger, from: config.mailFrom, transport: deps.mailTransport, smtpUrl: config.smtpUrl, dataDir: config.dataDir });
  const service = new AccountService({
    store,
    hasher,
    breach,
    mailer,
    clock,
    random,
    logger,
    publicBaseUrl: config.publicBaseUrl,
    lockoutMaxFailures: config.lockoutMaxFailures,
    lockoutSeconds: config.lockoutSeconds,
    unaskedMail: deps.tuning?.unaskedMail,
  });
  const sessions = createSessions({
    knex,
    clock,
    random,
    logger,
    secret: config.sessionSecret,
    cookieSecure: config.cookieSecure,
    membershipsSql: deps.membershipsSql,
  });
  const admins = config.platformAdminEmails.map(normalizeEmail);

  // An instance of its own (not passport's singleton), so two apps in one process never share strategies.
  const passport = new passportModule.Passport() as PassportStatic;
  passport.use(
    'local',
    new LocalStrategy({ usernameField: 'email', passwordField: 'password', session: false }, (email, password, done) => {
      service.verifyLogin(email, password).then((account) => done(null, account ?? false), done);
    }),
  );

  const identities = new KnexIdentityStore(knex);
  const social = new SocialSignIn({
    config: { google: config.google, apple: config.apple, appRedirectUris: config.appRedirectUris ?? [] },
    publicBaseUrl: config.publicBaseUrl,
    sessionSecret: config.sessionSecret,
    cookieSecure: config.cookieSecure,
    service,
    store,
    identities,
    sessions,
    clock,
    random,
    logger,
    fetch: deps.fetch ?? globalThis.fetch,
    tuning: deps.tuning,
  });
  const authLimiter = new RateLimit({
    keyPrefix: 'auth',
    points: config.authRateLimit,
    durationSeconds: config.authRateWindowSeconds,
    redis: deps.redis,
    code: 'rate_limited',
  }).middleware((req) => req.ip ?? 'unknown');

  const meResponse = async (account: Account | AccountSummary): Promise<MeResponse> => {
    const summary = 'passwordHash' in account ? summarize(account) : account;
    return toMeResponse(summary, await deps.memberships(summary.id), admins, clock.now());
  };
  const person = new PersonService({
    store: new ObjectionPersonStore(knex),
    mailer,
    clock,
    logger,
    publicBaseUrl: config.publicBaseUrl,
    checkPassword: loginPasswordCheck(service),
    memberships: deps.memberships,
    deletionSteps: deps.deletionSteps,
    personalData: deps.personalData,
  });
  const router = createRouter({
    service,
    store,
    sessions,
    passport,
    memberships: deps.memberships,
    clock,
    platformAdminEmails: admins,
    social,
    meResponse,
    person,
    logger,
  });

  let housekeeping: NodeJS.Timeout | undefined;
  const tidy = async () => {
    try {
      const deleted = {
        sessions: await sessions.store.prune(),
        ...(await store.prune(clock.now())),
        appSigninCodes: await identities.prune(clock.now()),
        spentExternalCookies: await identities.pruneSpentExternalCookies(clock.now()),
        spentIdentityTokens: await identities.pruneSpentIdentityTokens(clock.now()),
      };
      logger.debug({ deleted }, 'accounts housekeeping');
    } catch (err) {
      logger.warn({ err: { message: (err as Error).message } }, 'accounts housekeeping failed');
    }
  };

  return {
    router,
    authenticate: sessions.authenticate,
    authLimiter,
    pages: createPages({ service, authLimiter, publicBaseUrl: config.publicBaseUrl, logger }),
    directory: {
      profiles: (ids) => store.profiles(ids),
      addToWaitlist: (entry) => store.addToWaitlist(entry.accountId, entry.reason, clock.now()),
      listWaitlist: () => store.listWaitlist(),
    },
    mailer: {
      start() {
        mailer.start();
        housekeeping ??= setInterval(() => void tidy(), HOUSEKEEPING_MS);
        housekeeping.unref();
      },
      async stop() {
        if (housekeeping) clearInterval(housekeeping);
        housekeeping = undefined;
        await mailer.stop();
      },
      deliverDue: () => mailer.deliverDue(),
    },
    sessions: {
      async signIn(req, accountId, method) {
        const account = await store.findById(accountId);
        if (!account) throw new Error(`no account ${accountId}`);
        await sessions.signIn(req, accountId, account.securityStamp, method);
      },
      idle: () => sessions.store.idle(),
      prune: () => sessions.store.prune(),
    },
    accountsService: {
      findById: (id) => store.findById(id),
      findByEmail: (email) => store.findByEmail(normalizeEmail(email)),
      createPasswordlessAccount: (input) => service.createPasswordlessAccount(input),
      meResponse,
      verifyPasswordWithLockout: (who, password) => service.verifyPasswordWithLockout(who, password),
    },
    async close() {
      if (housekeeping) clearInterval(housekeeping);
      await sessions.store.idle();
      await mailer.stop();
      mailer.close();
      await hasher.close();
    },
  };
}
