import type { ApiRouter, ResponseSpec } from '@svc/http-kit';
import type { MeResponse } from '../me.js';
import { MFA_REQUIRED_MEMBERS } from '../mfa-required.js';
import {
  AppleCallbackForm,
  AuthProviderResponseSchema,
  ChallengeParams,
  ChallengeQuery,
  ExchangeAuthCodeRequest,
  ExternalCallbackQuery,
  GoogleCallbackQuery,
  IdpNativeSignInRequest,
  MeResponseSchema,
} from '../schemas.js';
import type { Account } from '../store.js';
import type { SocialSignIn } from './SocialSignIn.js';

export interface SocialRoutesDeps {
  social: SocialSignIn;
  meResponse(account: Account): Promise<MeResponse>;
}

function redirect(description: string): Record<number, ResponseSpec> {
  return { 302: { description, headers: { Location: { description: 'where the browser goes next', schema: { type: 'string' } } } } };
}

/** The social sign-in operations, declared on the accounts router (so they are in the OpenAPI document). */
export function addSocialRoutes(api: ApiRouter, deps: SocialRoutesDeps): void {
  const { social } = deps;

  api.route(
    {
      method: 'get',
      path: '/api/v1/auth/providers',
      operationId: 'listAuthProviders',
      summary: 'The social login providers configured on this server',
      description:
        'Providers whose browser sign-in is configured: Google with GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET, Apple with APPLE_CLIENT_ID, APPLE_TEAM_ID, APPLE_KEY_ID and APPLE_PRIVATE_KEY. Native Apple sign-in alone does not list Apple.',
      responses: { 200: { description: 'the providers, Google first', schema: { type: 'array', items: AuthProviderResponseSchema } } },
    },
    (_req, res) => {
      res.json(social.providers());
    },
  );

  api.route(
    {
      method: 'get',
      path: '/api/v1/auth/challenge/{provider}',
      operationId: 'challengeAuthProvider',
      summary: 'Starts social sign-in: 302 to the provider (never JSON)',
      description:
        'Browser flow: optional `returnUrl`. App flow: `codeChallenge` (S256) and `redirectUri` together. A short-lived signed state cookie binds the round trip to this browser. Only one of codeChallenge and redirectUri: 400 `app_signin_incomplete`; a codeChallenge that is not S256, a redirectUri not in APP_REDIRECT_URIS, or a returnUrl that is not site-relative: 400 `validation_failed` naming the field.',
      params: ChallengeParams,
      query: ChallengeQuery,
      responses: redirect("the provider's authorization page"),
      errorCodes: { 400: ['app_signin_incomplete', 'validation_failed', 'value_too_long'], 404: ['unknown_login_provider'] },
    },
    async (req, res) => {
      await social.challenge(res, req.input.params.provider, req.input.query);
    },
  );

  api.route(
    {
      method: 'get',
      path: '/api/v1/auth/callback/google',
      operationId: 'googleCallback',
      summary: 'Google comes back here (registered with Google); 302 on to external-callback',
      description:
        'Checks `state` against the state cookie, exchanges the code (with PKCE) and reads the userinfo, then sets the five-minute external cookie. Any failure lands on /login, or on the app URI with ?error=account in the app flow. 404 `unknown_login_provider` when Google is not configured.',
      query: GoogleCallbackQuery,
      responses: redirect('external-callback, /login, or the app URI with ?error=account'),
      errorCodes: { 404: ['unknown_login_provider'] },
    },
    async (req, res) => {
      await social.googleCallback(req, res);
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/v1/auth/callback/apple',
      operationId: 'appleCallback',
      summary: 'Apple posts back here (form_post, registered with Apple); 302 on to external-callback',
      description:
        'A cross-site form POST by design, so it is proved by `state` (the state cookie), not by Origin, and carries no session cookie (SameSite=Lax). Exchanges the code with an ES256 client-secret JWT and verifies the id_token against APPLE_KEYS_URL (signature, iss, aud, exp, nonce), then sets the five-minute external cookie. Any failure lands on /login, or on the app URI with ?error=account. 404 `unknown_login_provider` when Apple web sign-in is not configured.',
      bodyContentType: 'application/x-www-form-urlencoded',
      body: AppleCallbackForm,
      responses: redirect('external-callback, /login, or the app URI with ?error=account'),
      errorCodes: { 404: ['unknown_login_provider'] },
    },
    async (req, res) => {
      await social.appleCallback(req, res, req.input.body);
    },
  );

  api.route(
    {
      method: 'get',
      path: '/api/v1/auth/external-callback',
      operationId: 'externalCallback',
      summary: 'Signs in the account behind the provider identity; 302 (never JSON)',
      description:
        'Reads and clears the external cookie, and spends it on the server (its unique id is recorded, so a replayed copy fails like any bad cookie). The account: the one linked to the provider subject, else the one with the same address when the provider vouches it is verified (then linked), else a new one. An unverified address that belongs to an account ends the sign-in (nothing is linked or created). Browser flow: session cookie, then 302 to returnUrl, or /login when none is usable or the sign-in failed. App flow: 302 to the app URI with ?code= (single use, two minutes; & when the URI has a query), or ?error=account. 400 only for a query that does not parse.',
      query: ExternalCallbackQuery,
      responses: redirect('returnUrl, /login, or the app URI with ?code= or ?error=account'),
      errorCodes: { 400: ['validation_failed', 'value_too_long'] },
    },
    async (req, res) => {
      await social.externalCallback(req, res, req.input.query.returnUrl);
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/v1/auth/exchange',
      operationId: 'exchangeAuthCode',
      summary: 'Redeems the app flow code with its PKCE verifier; sets the session cookie',
      description:
        'Every attempt spends the code, a wrong verifier included; of concurrent attempts exactly one can succeed. 401 `signin_code_spent` for an unknown, used, expired (two minutes) or mismatched code.',
      body: ExchangeAuthCodeRequest,
      responses: { 200: { description: 'the account, as GET /api/v1/me', schema: MeResponseSchema } },
      errorCodes: { 400: ['validation_failed', 'value_too_long'], 401: ['signin_code_spent', 'mfa_required'] },
      problemMembers: MFA_REQUIRED_MEMBERS,
    },
    async (req, res) => {
      const account = await social.exchange(req, req.input.body.code, req.input.body.codeVerifier);
      res.setHeader('Cache-Control', 'no-store');
      res.json(await deps.meResponse(account));
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/v1/auth/idp/native',
      operationId: 'idpNativeSignIn',
      summary: 'Sign in with Apple from the app: the identity token is the proof; sets the session cookie',
      description:
        "RS256 token checked against APPLE_KEYS_URL (cached; refetched for an unknown key id), iss = APPLE_ISSUER, aud one of APPLE_NATIVE_AUDIENCES, not expired; a token with a nonce needs rawNonce whose lower-case SHA-256 hex equals it exactly. Same account rules as external-callback; givenName/familyName name a new account. 404 `idp_signin_unavailable` without APPLE_NATIVE_AUDIENCES; 401 `idp_signin_rejected` when Apple does not vouch for the token; 401 `account_not_created` when the token's address is not verified and belongs to another account; 503 `service_unavailable` when Apple's keys cannot be fetched.",
      body: IdpNativeSignInRequest,
      responses: {
        200: { description: 'the account, as GET /api/v1/me', schema: MeResponseSchema },
        503: { description: "Apple's keys could not be fetched" },
      },
      errorCodes: {
        400: ['validation_failed', 'value_too_long'],
        401: ['idp_signin_rejected', 'account_not_created', 'mfa_required'],
        404: ['idp_signin_unavailable'],
        503: ['service_unavailable'],
      },
      problemMembers: MFA_REQUIRED_MEMBERS,
    },
    async (req, res) => {
      const account = await social.native(req, req.input.body);
      res.setHeader('Cache-Control', 'no-store');
      res.json(await deps.meResponse(account));
    },
  );
}
