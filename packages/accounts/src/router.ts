import type { Clock, MembershipsProvider } from '@svc/contracts';
import { ApiRouter, AuthenticationError, principalOf, RateLimit, type RateLimitOptions } from '@svc/http-kit';
import type { Request, RequestHandler, Response, Router } from 'express';
import passportModule, { type PassportStatic } from 'passport';
import { Strategy as LocalStrategy } from 'passport-local';
import { addAccessTokenRoutes } from './access-token-router.js';
import { type AccountSummary, type MeResponse, summarize, toMeResponse } from './me.js';
import { MFA_REQUIRED_MEMBERS, mfaRequired } from './mfa-required.js';
import { createPages } from './pages/index.js';
import { addPersonRoutes } from './person-router.js';
import {
  ChangeEmailRequest,
  ChangePasswordRequest,
  ConfirmEmailChangeRequest,
  ConfirmEmailRequest,
  EmptyResponseSchema,
  ForgotPasswordRequest,
  LoginRequest,
  MeResponseSchema,
  RegisterRequest,
  ResetPasswordRequest,
  UpdateMeRequest,
} from './schemas.js';
import type { AccountService } from './service.js';
import type { Sessions } from './sessions.js';
import { addSocialRoutes } from './social/router.js';
import type { Account, AccountStore } from './store.js';

/** What the e-mail and password operations need (createRouter takes them from the service). */
interface AccountsRouterDeps {
  service: AccountService;
  store: AccountStore;
  sessions: Sessions;
  passport: PassportStatic;
  memberships: MembershipsProvider;
  clock: Clock;
  platformAdminEmails: readonly string[];
}

const ok204 = { 204: { description: 'done' } };

/** What the local strategy answers: the account, and the mfaToken when a second step is due. */
interface LocalSignIn {
  account: Account;
  mfaToken?: string;
}

/** passport-local, as a promise: the account, or 401 invalid_credentials (423 comes from the verify step). */
function authenticateLocal(passport: PassportStatic, req: Request, res: Response): Promise<LocalSignIn> {
  return new Promise((resolve, reject) => {
    passport.authenticate('local', { session: false }, (err: unknown, user: LocalSignIn | false) => {
      if (err) reject(err);
      else if (!user) reject(new AuthenticationError('invalid_credentials', 'Wrong e-mail address or password'));
      else resolve(user);
    })(req, res, (err?: unknown) => reject(err ?? new Error('passport did not answer')));
  });
}

/** The account operations of the spec (all but social sign-in), with their schemas. */
function createAccountsRouter(deps: AccountsRouterDeps): ApiRouter {
  const { service, store, sessions, passport, memberships, clock } = deps;
  const api = new ApiRouter({ tags: ['Accounts'] });

  const me = async (account: AccountSummary): Promise<MeResponse> =>
    toMeResponse(account, await memberships(account.id), deps.platformAdminEmails, clock.now());

  /** The caller's account: loaded with the session when there is one (no query), else read. */
  const callerAccount = async (req: Request): Promise<AccountSummary> => {
    const { userId } = principalOf(req);
    const loaded = sessions.accountOf(req);
    if (loaded?.id === userId) return loaded;
    const account = await store.findById(userId);
    if (!account) throw new AuthenticationError('unauthenticated', 'The account of this session no longer exists');
    return summarize(account);
  };

  api.route(
    {
      method: 'get',
      path: '/api/v1/me',
      operationId: 'getMe',
      summary: 'The signed-in account with all its households',
      description:
        'Costs one query when the host composes the memberships into the session read (the session with its account, stamp and memberships), else two. Any personal access token reaches it, whatever its scopes: who the token acts as, and the households it may name.',
      auth: true,
      tokenScope: 'any',
      compiledResponse: true, // a hot read: its answer is written by a serializer compiled from the schema
      responses: { 200: { description: 'the account', schema: MeResponseSchema } },
    },
    async (req, res) => {
      const account = await callerAccount(req);
      const loaded = principalOf(req).memberships;
      // The memberships came with this request's session read when the host composed them in.
      res.json(loaded ? toMeResponse(account, [...loaded], deps.platformAdminEmails, clock.now()) : await me(account));
    },
  );

  api.route(
    {
      method: 'patch',
      path: '/api/v1/me',
      operationId: 'updateMe',
      summary: 'Renames the account (only the display name changes)',
      auth: true,
      body: UpdateMeRequest,
      fieldCodes: { displayName: 'account_name_length' },
      responses: { 200: { description: 'the updated account', schema: MeResponseSchema } },
      errorCodes: { 400: ['account_name_length', 'validation_failed'] },
    },
    async (req, res) => {
      const updated = await service.updateDisplayName(principalOf(req).userId, req.input.body.displayName);
      if (!updated) throw new AuthenticationError('unauthenticated', 'The account of this session no longer exists');
      res.json(await me(summarize(updated)));
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/v1/me/password',
      operationId: 'changePassword',
      summary: 'Changes (or, for a social-only account, sets) the password',
      description:
        'This session stays signed in under a new session id; every other session of the account ends, every open mailed link is retired, and the address gets a notice. The current password counts toward the login lockout (423 while locked). With TOTP on, a fresh second factor is required as well: `code`, `recoveryCode` or `passkey` (an assertion over a challenge of POST /api/v1/auth/passkey/options); without one that verifies, 401 `reauthentication_required` before the password is looked at (codes count toward the lockout).',
      auth: true,
      body: ChangePasswordRequest,
      responses: ok204,
      errorCodes: {
        400: ['wrong_current_password', 'password_rejected', 'password_pwned', 'validation_failed', 'value_too_long'],
        401: ['reauthentication_required'],
        423: ['account_locked'],
      },
    },
    async (req, res) => {
      const { userId } = principalOf(req);
      const { code, recoveryCode, passkey } = req.input.body;
      await service.requireStepUp(userId, { code, recoveryCode, passkey }, req.get('accept-language'), { onlyWithTotp: true });
      const stamp = await service.changePassword(userId, req.input.body.currentPassword, req.input.body.newPassword);
      if (!stamp) throw new AuthenticationError('unauthenticated', 'The account of this session no longer exists');
      await sessions.signIn(req, userId, stamp);
      res.status(204).end();
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/v1/me/email',
      operationId: 'changeEmail',
      summary: 'Starts moving the login to a new address',
      description:
        'Mails a confirmation link to the new address and a notice with a reset link to the old one. Nothing changes until the link is followed. 204 for every well-formed address. With TOTP or a passkey on, a fresh second factor is required: `code`, `recoveryCode` or `passkey` (an assertion over a challenge of POST /api/v1/auth/passkey/options); without one that verifies, 401 `reauthentication_required` (codes count toward the lockout, 423 while locked).',
      auth: true,
      body: ChangeEmailRequest,
      responses: ok204,
      errorCodes: { 400: ['email_not_an_address', 'validation_failed', 'value_too_long'], 401: ['reauthentication_required'], 423: ['account_locked'] },
    },
    async (req, res) => {
      const { newEmail, code, recoveryCode, passkey } = req.input.body;
      await service.requireStepUp(principalOf(req).userId, { code, recoveryCode, passkey }, req.get('accept-language'));
      await service.requestEmailChange(principalOf(req).userId, newEmail, { ip: req.ip });
      res.status(204).end();
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/v1/auth/register',
      operationId: 'register',
      summary: 'Signs up with e-mail and password',
      description:
        'Answers {} whether or not the address already has an account. A fresh address gets a confirmation mail and a session cookie; a known one an "account already exists" mail and no session.',
      body: RegisterRequest,
      responses: { 200: { description: 'always {}', schema: EmptyResponseSchema } },
      errorCodes: { 400: ['signup_rejected', 'password_pwned', 'validation_failed', 'value_too_long'] },
    },
    async (req, res) => {
      const created = await service.register(req.input.body, { ip: req.ip });
      if (created) await sessions.signIn(req, created.id, created.securityStamp, 'password');
      res.setHeader('Cache-Control', 'no-store');
      res.json({});
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/v1/auth/login',
      operationId: 'login',
      summary: 'Signs in with e-mail and password; sets the session cookie',
      description:
        'With TOTP on, a right password answers 401 `mfa_required` with an `mfaToken` member (five minutes, single use) and no session: POST /api/v1/auth/mfa completes the sign-in. That answer does not reset the lockout count; the completed second step does.',
      body: LoginRequest,
      responses: { 200: { description: 'the account, as GET /api/v1/me', schema: MeResponseSchema } },
      errorCodes: { 400: ['validation_failed', 'value_too_long'], 401: ['invalid_credentials', 'mfa_required'], 423: ['account_locked'] },
      problemMembers: MFA_REQUIRED_MEMBERS,
    },
    async (req, res) => {
      const { account, mfaToken } = await authenticateLocal(passport, req, res);
      res.setHeader('Cache-Control', 'no-store');
      if (mfaToken) throw mfaRequired(mfaToken);
      await sessions.signIn(req, account.id, account.securityStamp, 'password');
      res.setHeader('Cache-Control', 'no-store');
      res.json(await me(summarize(account)));
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/v1/auth/logout',
      operationId: 'logout',
      summary: 'Signs out: rotates the security stamp, so every session of the account ends',
      auth: true,
      responses: ok204,
    },
    async (req, res) => {
      await service.rotateStamp(principalOf(req).userId);
      await sessions.signOut(req, res);
      res.status(204).end();
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/v1/auth/confirm-email',
      operationId: 'confirmEmail',
      summary: 'Confirms the address with the mailed token',
      description: 'An address that is already confirmed answers 204 whatever the token.',
      body: ConfirmEmailRequest,
      responses: ok204,
      errorCodes: { 400: ['invalid_token', 'validation_failed', 'value_too_long'] },
    },
    async (req, res) => {
      await service.confirmEmail(req.input.body.userId, req.input.body.token);
      res.status(204).end();
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/v1/auth/confirm-email-change',
      operationId: 'confirmEmailChange',
      summary: 'Moves the login to the new address with the mailed token',
      description: 'Every other session of the account ends; a session of this account that sends the confirmation stays signed in.',
      body: ConfirmEmailChangeRequest,
      responses: ok204,
      errorCodes: { 400: ['invalid_token', 'validation_failed', 'value_too_long'] },
    },
    async (req, res) => {
      const { userId, newEmail, token } = req.input.body;
      const stamp = await service.confirmEmailChange(userId, newEmail, token);
      if (req.principal?.userId === userId) await sessions.restamp(req, stamp);
      res.status(204).end();
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/v1/auth/resend-confirmation',
      operationId: 'resendConfirmation',
      summary: 'Mails the confirmation link again',
      description:
        '204 without mail when the address is already confirmed; 429 resend_cooldown (Retry-After seconds) within five minutes of the last confirmation mail.',
      auth: true,
      responses: ok204,
      errorCodes: { 429: ['resend_cooldown'] },
    },
    async (req, res) => {
      await service.resendConfirmation(principalOf(req).userId, { ip: req.ip });
      res.status(204).end();
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/v1/auth/forgot-password',
      operationId: 'forgotPassword',
      summary: 'Mails a password-reset link, when the address has an account',
      description: 'Always 204; never says whether the address has an account. A second request for the same account within five minutes is dropped.',
      body: ForgotPasswordRequest,
      responses: ok204,
      errorCodes: { 400: ['validation_failed', 'value_too_long'] },
    },
    async (req, res) => {
      await service.forgotPassword(req.input.body.email, { ip: req.ip });
      res.status(204).end();
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/v1/auth/reset-password',
      operationId: 'resetPassword',
      summary: 'Sets a new password with the mailed reset token',
      description: 'Also confirms the address, lifts a login lock and ends every session of the account.',
      body: ResetPasswordRequest,
      responses: ok204,
      errorCodes: { 400: ['invalid_token', 'password_rejected', 'password_pwned', 'validation_failed', 'value_too_long'] },
    },
    async (req, res) => {
      const { email, token, newPassword } = req.input.body;
      await service.resetPassword(email, token, newPassword);
      res.status(204).end();
    },
  );

  return api;
}

/** ioredis, as http-kit's RateLimit takes it (no direct dependency on ioredis here). */
export type Redis = NonNullable<RateLimitOptions['redis']>;

/** What the accounts routes need: the package's service (which holds its store, sessions, social sign-in and config). */
export interface RouterOptions {
  service: AccountService;
  /** When given, the auth rate limit is shared by every instance through it. */
  redis?: Redis;
}

/** The accounts router and the two HTTP parts the host mounts apart from it. */
export type AccountsRouter = ApiRouter & {
  /** The per-client-IP limit shared by all /api/v1/auth/* (429 `rate_limited`, Retry-After seconds); the host mounts it before them. */
  authLimiter: RequestHandler;
  /**
   * HTML pages at the paths of the mailed links (/confirm-email, /confirm-email-change,
   * /reset-password, /login), for a person without the web client. The host mounts them before the JSON
   * body parser (their forms post urlencoded) unless WEB_PAGES=off.
   */
  pages: Router;
};

/** Every account operation of the spec on one router: e-mail and password, social sign-in, a person's own account. */
export function createRouter(options: RouterOptions): AccountsRouter {
  const { service } = options;
  const { config, logger } = service;
  // An instance of its own (not passport's singleton), so two apps in one process never share strategies.
  const passport = new passportModule.Passport() as PassportStatic;
  passport.use(
    'local',
    new LocalStrategy({ usernameField: 'email', passwordField: 'password', session: false }, (email, password, done) => {
      service.login(email, password).then((signIn) => done(null, signIn ?? false), done);
    }),
  );
  const authLimiter = new RateLimit({
    keyPrefix: 'auth',
    points: config.authRateLimit,
    durationSeconds: config.authRateWindowSeconds,
    redis: options.redis,
    code: 'rate_limited',
  }).middleware((req) => req.ip ?? 'unknown');

  const api = createAccountsRouter({
    service,
    store: service.store,
    sessions: service.sessions,
    passport,
    memberships: service.memberships,
    clock: service.clock,
    platformAdminEmails: service.platformAdminEmails,
  });
  addSocialRoutes(api, { social: service.social, meResponse: (account) => service.meResponse(account) });
  addPersonRoutes(api, { person: service.person, sessions: service.sessions, logger });
  addAccessTokenRoutes(api, { tokens: service.accessTokens, sessions: service.sessions });
  const pages = createPages({ service, authLimiter, publicBaseUrl: config.publicBaseUrl, webClientUrl: config.webClientUrl, logger });
  return Object.assign(api, { authLimiter, pages });
}
