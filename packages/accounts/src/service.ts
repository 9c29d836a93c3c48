import type { Clock, MembershipsProvider, SecondFactorGate, SignInCompletion, SignInFactorNotice, StepUpProof } from '@svc/contracts';
import { AuthenticationError, InputError, type Logger, RateLimit, systemRandom } from '@svc/http-kit';
import type { Request } from 'express';
import type { Knex } from 'knex';
import { ObjectionAccessTokenStore } from './AccessTokenStore.js';
import { noticeLanguage } from './access-token-mails.js';
import { AccessTokenService } from './access-token-service.js';
import { defaultAccessTokenKey } from './access-tokens.js';
import { AccountFlow, type AccountParts, type RequestOrigin, UNASKED_MAIL_LIMITS } from './account-flow.js';
import { type AccountServiceOptions, type AccountsConfig, SESSION_MAX_AGE_DAYS, TOKEN_RATE_LIMIT } from './account-options.js';
import { normalizeEmail } from './email.js';
import { EmailChangeFlow } from './email-change-flow.js';
import { Mailer } from './Mailer.js';
import { type AccountSummary, type MeResponse, summarize, toMeResponse } from './me.js';
import { HOUSEKEEPING_QUEUE } from './migrations.js';
import { PasswordHasher } from './PasswordHasher.js';
import { loginPasswordCheck } from './password-check.js';
import { PasswordFlow } from './password-flow.js';
import { BreachChecker } from './passwords.js';
import { signInFactorNoticeMail } from './person-mails.js';
import { PersonService } from './person-service.js';
import { ObjectionPersonStore } from './person-store.js';
import { createSessions, type Sessions, type SignInMethod } from './sessions.js';
import { SignUpFlow } from './signup-flow.js';
import type { IdentityStore } from './social/IdentityStore.js';
import { KnexIdentityStore } from './social/KnexIdentityStore.js';
import { SocialSignIn } from './social/SocialSignIn.js';
import { SocialAccountFlow } from './social-account-flow.js';
import type { Account, AccountStore } from './store.js';

// The service's options and the flows' limits are exported with it (the package's index takes the service from this module).
export { type AccountsMetrics, lockoutKey, UNASKED_MAIL_LIMITS, type UnaskedMailLimits } from './account-flow.js';
export { type AccountServiceOptions, type AccountsConfig, type AccountsTuning, SESSION_MAX_AGE_DAYS, TOKEN_RATE_LIMIT } from './account-options.js';

/** Housekeeping's cron (UTC): hourly, one job for the cluster. */
const HOUSEKEEPING_CRON = '13 * * * *';

/**
 * The accounts service the router and the host use: the facade over the account rules of the spec
 * (operations 1–10), which live in their flows (SignUpFlow, PasswordFlow, EmailChangeFlow,
 * SocialAccountFlow), and the wiring of the package's parts. Every multi-statement change runs in
 * one transaction, and the mail it causes is written to the outbox inside it.
 *
 * It also holds what the rest of the package and the host use around those rules: the cookie
 * sessions (`sessions.authenticate` is the session middleware of every router), social sign-in,
 * a person's own account (`person`), the outbox (its deliveries run on the job queue) and hourly housekeeping
 * (`startBackgroundWork`, `deliverDueMail`) and `close`.
 */
export class AccountService {
  private readonly o: AccountParts;
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
  /** The job queue housekeeping is scheduled on. */
  private readonly jobs: AccountServiceOptions['jobs'];
  /** The second factors (@svc/sign-in-factors), set by the host with `useSecondFactors`; none: every right first factor signs in. */
  private gate: SecondFactorGate | undefined;
  private readonly personStore: ObjectionPersonStore;
  /** The mailed links' rules the service itself uses (a sign-in factor's notice). */
  private readonly links: AccountFlow;
  private readonly signUp: SignUpFlow;
  private readonly passwords: PasswordFlow;
  private readonly emailChange: EmailChangeFlow;
  private readonly socialAccounts: SocialAccountFlow;

  constructor(options: AccountServiceOptions) {
    const { store, knex, clock, logger, config } = options;
    const random = options.random ?? systemRandom;
    this.store = store;
    this.config = config;
    this.clock = clock;
    this.logger = logger;
    this.jobs = options.jobs;
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
    const tokenKey = config.accessTokenSecret ?? defaultAccessTokenKey(config.sessionSecret);
    const accessTokens = new AccessTokenService({
      tokens: new ObjectionAccessTokenStore(knex),
      accounts: store,
      mailer,
      clock,
      random,
      key: tokenKey,
      publicBaseUrl: config.publicBaseUrl,
      maxTokens: options.tuning?.maxAccessTokens,
    });
    this.o = {
      store,
      hasher: new PasswordHasher({ cost: options.tuning?.bcryptCost, workers: options.tuning?.hashWorkers }),
      breach: new BreachChecker({ baseUrl: config.passwordBreachApi, logger, timeoutMs: options.tuning?.breachTimeoutMs }),
      mailer,
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
      accessTokens,
      secondFactors: () => this.gate,
    };
    this.accessTokens = accessTokens;
    this.links = new AccountFlow(this.o);
    this.signUp = new SignUpFlow(this.o);
    this.passwords = new PasswordFlow(this.o);
    this.emailChange = new EmailChangeFlow(this.o);
    this.socialAccounts = new SocialAccountFlow(this.o);
    this.sessions = createSessions({
      knex,
      clock,
      random,
      logger,
      secret: config.sessionSecret,
      cookieSecure: config.cookieSecure,
      maxAgeMs: (config.sessionMaxAgeDays ?? SESSION_MAX_AGE_DAYS) * 24 * 3600_000,
      requestReads: options.requestReads,
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
      service: this.socialAccounts,
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
        await this.links.writeMail(
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
    this.jobs.define(HOUSEKEEPING_QUEUE, () => this.housekeeping(), { expireInSeconds: 600 });
    await this.jobs.schedule(HOUSEKEEPING_QUEUE, HOUSEKEEPING_CRON);
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

  async updateDisplayName(accountId: string, displayNameInput: string): Promise<Account | undefined> {
    const displayName = displayNameInput.trim();
    if ([...displayName].length < 1 || [...displayName].length > 80) {
      throw new InputError('account_name_length', 'The display name must be 1 to 80 characters', [
        { field: 'displayName', message: 'must be 1 to 80 characters', in: 'body' },
      ]);
    }
    return this.o.store.updateDisplayName(accountId, displayName, this.now());
  }

  // The account rules, each in the flow that owns it.

  /** After a right first factor: the mfaToken of a second step when one is due (TOTP on), else undefined (sign in now). */
  secondStepFor(accountId: string, method: 'password' | 'google' | 'apple', options: { returnUrl?: string } = {}): Promise<string | undefined> {
    return this.links.secondStepFor(accountId, method, options);
  }

  /** A second-factor check under the account's login lockout (see `PasswordFlow.underLockout`). */
  underLockout(accountId: string, check: () => Promise<boolean>): Promise<boolean> {
    return this.passwords.underLockout(accountId, check);
  }

  /** Rule 3, sign-up: the new account, or undefined when the address had one (see `SignUpFlow.register`). */
  register(input: { email: string; password: string; displayName: string }, origin: RequestOrigin = {}): Promise<Account | undefined> {
    return this.signUp.register(input, origin);
  }

  /** Rule 6: confirms the address with its mailed link (see `SignUpFlow.confirmEmail`). */
  confirmEmail(userId: string, token: string): Promise<void> {
    return this.signUp.confirmEmail(userId, token);
  }

  /** Rule 8: the confirmation link mailed again (see `SignUpFlow.resendConfirmation`). */
  resendConfirmation(accountId: string, origin: RequestOrigin = {}): Promise<void> {
    return this.signUp.resendConfirmation(accountId, origin);
  }

  /** Every password check, under the login lockout: the account, or undefined (see `PasswordFlow.verifyPasswordWithLockout`). */
  verifyPasswordWithLockout(who: Account | string, password: string): Promise<Account | undefined> {
    return this.passwords.verifyPasswordWithLockout(who, password);
  }

  /** POST /auth/login: the account, and the mfaToken when TOTP is on (see `PasswordFlow.login`). */
  login(emailInput: string, password: string): Promise<{ account: Account; mfaToken?: string } | undefined> {
    return this.passwords.login(emailInput, password);
  }

  /** Rule 4 (login): `verifyPasswordWithLockout` by address. */
  verifyLogin(emailInput: string, password: string): Promise<Account | undefined> {
    return this.passwords.verifyLogin(emailInput, password);
  }

  /** Rule 1: a new password; answers the new security stamp (see `PasswordFlow.changePassword`). */
  changePassword(accountId: string, currentPassword: string | null, newPassword: string): Promise<string | undefined> {
    return this.passwords.changePassword(accountId, currentPassword, newPassword);
  }

  /** Logout (rule 5): a new stamp ends every session of the account at its next request. */
  rotateStamp(accountId: string): Promise<void> {
    return this.passwords.rotateStamp(accountId);
  }

  /** Rule 9: a reset link, always 204 (see `PasswordFlow.forgotPassword`). */
  forgotPassword(emailInput: string, origin: RequestOrigin = {}): Promise<void> {
    return this.passwords.forgotPassword(emailInput, origin);
  }

  /** Rule 10: a new password by the mailed link (see `PasswordFlow.resetPassword`). */
  resetPassword(emailInput: string, token: string, newPassword: string): Promise<void> {
    return this.passwords.resetPassword(emailInput, token, newPassword);
  }

  /** Rule 2: a link to the new address, a heads-up to the old one (see `EmailChangeFlow.requestEmailChange`). */
  requestEmailChange(accountId: string, newEmailInput: string, origin: RequestOrigin = {}): Promise<void> {
    return this.emailChange.requestEmailChange(accountId, newEmailInput, origin);
  }

  /** Rule 7: the new address becomes the login; answers the new stamp (see `EmailChangeFlow.confirmEmailChange`). */
  confirmEmailChange(userId: string, newEmailInput: string, token: string): Promise<string> {
    return this.emailChange.confirmEmailChange(userId, newEmailInput, token);
  }

  /** For social sign-in: an account without a password (see `SocialAccountFlow.createPasswordlessAccount`). */
  createPasswordlessAccount(
    input: { email: string | null; emailVerified: boolean; displayName: string },
    link?: (trx: Knex.Transaction, account: Account) => Promise<void>,
  ): Promise<Account | undefined> {
    return this.socialAccounts.createPasswordlessAccount(input, link);
  }

  /** For social sign-in: the account of an address the provider vouches for, taken over (see `SocialAccountFlow.adoptByVerifiedAddress`). */
  adoptByVerifiedAddress(
    accountId: string,
    link: (trx: Knex.Transaction, account: Account) => Promise<void>,
    providerName = 'Another sign-in',
  ): Promise<Account | undefined> {
    return this.socialAccounts.adoptByVerifiedAddress(accountId, link, providerName);
  }
}
