import type { AccountDeletionStep, Clock, MembershipsProvider, PersonalDataSources, RandomBytes } from '@svc/contracts';
import type { Logger, RateLimitOptions, RequestReads } from '@svc/http-kit';
import type { JobQueue } from '@svc/jobs';
import type { Knex } from 'knex';
import type { Transporter } from 'nodemailer';
import type { AccountsMetrics, UnaskedMailLimits } from './account-flow.js';
import type { SecondFactorLinks } from './reads.js';
import type { AppleConfig, GoogleConfig } from './social/config.js';
import type { SocialTuning } from './social/SocialSignIn.js';
import type { AccountStore } from './store.js';

/** decisions.md §3 leaves a session's absolute lifetime open; ASVS 7.3.2 asks for one: 90 days by default (SESSION_MAX_AGE_DAYS). */
export const SESSION_MAX_AGE_DAYS = 90;

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
   * The host's read kernel (`RequestReads` of `@svc/http-kit` over the `ReadKernel` of `@svc/db`):
   * it runs the session's and the token's statements, with the caller's memberships and a GET's
   * declared read (this package never sees the read's tables nor its value).
   */
  requestReads?: RequestReads;
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
