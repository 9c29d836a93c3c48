import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { ApiRouter, principalOf } from '@svc/http-kit';
import type { RequestHandler } from 'express';
import {
  MfaRequest,
  PasskeyListSchema,
  PasskeyParams,
  PasskeyRegisterRequest,
  PasskeySchema,
  PasskeySignInRequest,
  RecoveryCodesSchema,
  TotpConfirmRequest,
  TotpDisableRequest,
  TotpEnrolmentSchema,
  WebAuthnOptionsSchema,
} from './schemas.js';
import type { SignInFactorsService } from './service.js';

export interface RouterOptions {
  service: SignInFactorsService;
  /** The schema of what a login answers (accounts' MeResponse), for the document. */
  signInResponseSchema?: Record<string, unknown>;
  /**
   * The limit of POST /api/v1/me/passkeys/options per account (each answer stores a challenge);
   * the host hands in an http-kit `RateLimit` middleware. The sign-in options are under
   * /api/v1/auth/*, behind the host's per-IP limit.
   */
  passkeyOptionsLimit?: RequestHandler;
}

/** TOTP, recovery codes, passkeys, and the second step of a sign-in (decisions.md §8 "Stronger sign-in"). */
export function createRouter(options: RouterOptions): ApiRouter {
  const { service } = options;
  const api = new ApiRouter({ tags: ['Sign-in factors'] });
  const signedIn = { description: 'signed in: the session cookie is set; the account, as GET /api/v1/me', schema: options.signInResponseSchema };

  api.route(
    {
      method: 'post',
      path: '/api/v1/me/mfa/totp',
      operationId: 'startTotp',
      summary: 'Starts TOTP enrolment: a new secret, pending until confirmed',
      description: 'A second call while pending replaces the secret. 409 `mfa_already_enabled` while TOTP is on.',
      auth: true,
      responses: { 201: { description: 'the pending secret', schema: TotpEnrolmentSchema } },
      errorCodes: { 409: ['mfa_already_enabled'] },
    },
    async (req, res) => {
      res.setHeader('Cache-Control', 'no-store');
      // A secret: never kept for an Idempotency-Key replay (http-kit releases the key instead).
      res.locals.unkeptAnswer = true;
      res.status(201).json(await service.startTotp(principalOf(req).userId));
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/v1/me/mfa/totp/confirm',
      operationId: 'confirmTotp',
      summary: 'Confirms TOTP with a first code: TOTP is on; answers ten recovery codes',
      description: 'Mails a notice. 400 `invalid_code` for a wrong code or when no enrolment is pending.',
      auth: true,
      body: TotpConfirmRequest,
      responses: { 200: { description: 'the recovery codes, shown this once', schema: RecoveryCodesSchema } },
      errorCodes: { 400: ['invalid_code', 'validation_failed', 'value_too_long'], 409: ['mfa_already_enabled'] },
    },
    async (req, res) => {
      res.setHeader('Cache-Control', 'no-store');
      res.locals.unkeptAnswer = true; // the recovery codes are stored only hashed, nowhere else
      res.json(await service.confirmTotp(principalOf(req).userId, req.input.body.code, req.get('accept-language')));
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/api/v1/me/mfa/totp',
      operationId: 'disableTotp',
      summary: 'Turns TOTP off (its recovery codes go with it)',
      description:
        'Takes a fresh second factor: `{ code }`, `{ recoveryCode }` or `{ passkey }` (an assertion over a challenge of POST /api/v1/auth/passkey/options); a stolen session that knows the password cannot turn TOTP off, so `{ password }` alone answers 401 `reauthentication_required` (a password sent along is checked too). Each check counts toward the login lockout (423 while locked). A wrong code → 400 `invalid_code`; a passkey that does not verify → 401 `reauthentication_required`; a wrong password → 400 `wrong_current_password`. 404 when TOTP is not on. Mails a notice.',
      auth: true,
      body: TotpDisableRequest,
      responses: { 204: { description: 'TOTP is off' } },
      errorCodes: {
        400: ['invalid_code', 'wrong_current_password', 'validation_failed', 'value_too_long'],
        401: ['reauthentication_required'],
        404: ['not_found'],
        423: ['account_locked'],
      },
    },
    async (req, res) => {
      await service.disableTotp(principalOf(req).userId, req.input.body, req.get('accept-language'));
      res.status(204).end();
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/v1/auth/mfa',
      operationId: 'completeMfa',
      summary: 'The second step of a sign-in: the mfaToken with a TOTP code or a recovery code',
      description:
        'Answers what login answers, with the session cookie (the session keeps the first factor as its method). An unknown, spent or expired mfaToken → 401 `invalid_credentials`. A wrong code → 400 `invalid_code`; it counts toward the login lockout (423 while locked) and does not spend the token. After 100 wrong codes in a row (over any number of lockouts) codes are refused with 400 `invalid_code` until a recovery code is used or the password is reset by mail; reaching that mails a notice. A used code is refused within its window, on every instance. Using a recovery code mails a notice.',
      body: MfaRequest,
      responses: { 200: signedIn },
      errorCodes: { 400: ['invalid_code', 'validation_failed', 'value_too_long'], 401: ['invalid_credentials'], 423: ['account_locked'] },
    },
    async (req, res) => {
      const { answer } = await service.completeSignIn(req, req.input.body);
      res.setHeader('Cache-Control', 'no-store');
      res.json(answer);
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/v1/me/passkeys/options',
      operationId: 'passkeyRegistrationOptions',
      summary: 'WebAuthn creation options for adding a passkey (JSON form, top-level)',
      description:
        'ES256 and RS256; resident keys and user verification preferred; the account’s passkeys excluded. The challenge is single use and lives five minutes; an account keeps its five newest. Rate-limited per account (429 `rate_limited`).',
      auth: true,
      responses: { 200: { description: 'PublicKeyCredentialCreationOptionsJSON', schema: WebAuthnOptionsSchema } },
      errorCodes: { 429: ['rate_limited'] },
    },
    ...(options.passkeyOptionsLimit ? [options.passkeyOptionsLimit] : []),
    async (req, res) => {
      res.setHeader('Cache-Control', 'no-store');
      res.json(await service.registrationOptions(principalOf(req).userId));
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/v1/me/passkeys',
      operationId: 'addPasskey',
      summary: 'Adds a passkey from a registration response',
      description: 'A registration that does not verify (challenge, origin, RP ID, signature) → 400 `validation_failed`. Mails a notice.',
      auth: true,
      body: PasskeyRegisterRequest,
      responses: { 201: { description: 'the passkey', schema: PasskeySchema } },
      errorCodes: { 400: ['validation_failed', 'value_too_long'] },
    },
    async (req, res) => {
      const { name, response } = req.input.body;
      res.status(201).json(await service.register(principalOf(req).userId, name, response as unknown as RegistrationResponseJSON, req.get('accept-language')));
    },
  );

  api.route(
    {
      method: 'get',
      path: '/api/v1/me/passkeys',
      operationId: 'listPasskeys',
      summary: "The caller's passkeys",
      auth: true,
      responses: { 200: { description: 'newest first', schema: PasskeyListSchema } },
    },
    async (req, res) => {
      res.json({ items: await service.list(principalOf(req).userId) });
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/api/v1/me/passkeys/{passkeyId}',
      operationId: 'removePasskey',
      summary: 'Removes a passkey',
      description: '404 when it is not the caller’s; 409 `last_sign_in_method` when it is the only way left to sign in. Mails a notice.',
      auth: true,
      params: PasskeyParams,
      responses: { 204: { description: 'removed' } },
      errorCodes: { 404: ['not_found'], 409: ['last_sign_in_method'] },
    },
    async (req, res) => {
      await service.remove(principalOf(req).userId, req.input.params.passkeyId, req.get('accept-language'));
      res.status(204).end();
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/v1/auth/passkey/options',
      operationId: 'passkeySignInOptions',
      summary: 'WebAuthn request options for signing in with a passkey (discoverable credentials)',
      description:
        'No allowCredentials: the authenticator offers the passkeys it holds for this RP ID. The challenge is single use and lives five minutes. Also the challenge of a passkey step-up (DELETE /api/v1/me, POST /api/v1/me/email, POST /api/v1/me/password, DELETE /api/v1/me/mfa/totp). Rate-limited per IP like every /api/v1/auth/* operation; while 50,000 such challenges are live at once, 429 `rate_limited` (Retry-After 60).',
      responses: { 200: { description: 'PublicKeyCredentialRequestOptionsJSON', schema: WebAuthnOptionsSchema } },
      errorCodes: { 429: ['rate_limited'] },
    },
    async (_req, res) => {
      res.setHeader('Cache-Control', 'no-store');
      res.json(await service.authenticationOptions());
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/v1/auth/passkey',
      operationId: 'signInWithPasskey',
      summary: 'Signs in with a passkey assertion; sets the session cookie',
      description:
        'No second step, and a locked account can still sign in this way. An assertion that does not verify (signature, origin, RP ID, challenge, unknown credential, counter gone backwards) → 401 `invalid_credentials`. The session’s method is `passkey`.',
      body: PasskeySignInRequest,
      responses: { 200: signedIn },
      errorCodes: { 400: ['validation_failed'], 401: ['invalid_credentials'] },
    },
    async (req, res) => {
      const answer = await service.signInWithPasskey(req, req.input.body.response as unknown as AuthenticationResponseJSON);
      res.setHeader('Cache-Control', 'no-store');
      res.json(answer);
    },
  );

  return api;
}
