import { createHash } from 'node:crypto';
import type { Clock, RandomBytes } from '@svc/contracts';
import { AuthenticationError, type Logger, NotFoundError, ServiceUnavailableError, timing } from '@svc/http-kit';
import type { Request, Response } from 'express';
import { mfaRequired, SIGN_IN_VERIFY_PATH } from '../mfa-required.js';
import type { IdpNativeBody } from '../schemas.js';
import type { Sessions } from '../sessions.js';
import type { SocialAccountFlow } from '../social-account-flow.js';
import type { Account, AccountStore } from '../store.js';
import { hashToken, sameSecret } from '../tokens.js';
import { type AppleCallbackForm, AppleSignIn } from './apple.js';
import { AppleTokenVerifier, KeysUnavailableError } from './apple-tokens.js';
import { type AppleConfig, callbackPath, EXTERNAL_CALLBACK_PATH, type GoogleConfig, PROVIDER_LABELS, type ProviderName } from './config.js';
import { type ChallengeQuery, type Flow, flowOf, safeReturnUrl, withQueryParam } from './flow.js';
import { GoogleSignIn } from './google.js';
import type { IdentityStore } from './IdentityStore.js';
import { composeDisplayName, type ExternalIdentity, vouched } from './identity.js';
import { AccountNotCreatedError, IdentityLinker } from './link-account.js';
import type { CallbackOutcome, ExternalSignIn, PendingSignIn } from './pending.js';
import { SignedCookie } from './signed-cookie.js';

/** The social part of the configuration (decisions.md §1). */
export interface SocialConfig {
  google?: GoogleConfig;
  apple?: AppleConfig;
  /** Exact `redirectUri` values the app flow may end on. */
  appRedirectUris: string[];
}

export interface SocialTuning {
  /** Longest wait for a provider's token / userinfo endpoint (default 10 000 ms). */
  providerTimeoutMs?: number;
  /** Longest wait for Apple's key set (default 5000 ms). */
  jwksTimeoutMs?: number;
  /** Minimum time between two key-set fetches triggered by unknown key ids (default 30 000 ms). */
  jwksCooldownMs?: number;
  /** Keys are refetched after this long in any case (default 600 000 ms). */
  jwksCacheMaxAgeMs?: number;
}

export interface SocialSignInOptions {
  config: SocialConfig;
  publicBaseUrl: string;
  sessionSecret: string;
  cookieSecure: boolean;
  service: SocialAccountFlow;
  store: AccountStore;
  identities: IdentityStore;
  sessions: Sessions;
  clock: Clock;
  random: RandomBytes;
  logger: Logger;
  fetch: typeof fetch;
  tuning?: SocialTuning;
}

/** Service-spec Limits: the app's sign-in code lives two minutes. */
export const APP_CODE_LIFETIME_MS = 120_000;
/** decisions.md §4: the external cookie lives five minutes. */
export const EXTERNAL_COOKIE_SECONDS = 300;
/** Time a person may spend at the provider between challenge and callback. */
export const STATE_COOKIE_SECONDS = 600;

export const EXTERNAL_COOKIE = 'service_external';
export const stateCookieName = (provider: ProviderName) => `service_oauth_${provider}`;

export interface AuthProviderResponse {
  scheme: 'Google' | 'Apple';
  displayName: string;
}

/** The body of native sign-in, as its schema declares it. */
export type NativeSignInBody = IdpNativeBody;

/** BASE64URL(SHA-256(verifier)): the PKCE S256 transformation. */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/**
 * Social sign-in (service-spec Account rules 11–14, decisions.md §4): the provider round trip
 * (challenge → provider → callback), the external cookie, external-callback with the account
 * rules, the app flow's single-use code and its exchange, and native Apple sign-in.
 */
export class SocialSignIn {
  private readonly google?: GoogleSignIn;
  private readonly apple?: AppleSignIn;
  private readonly appleTokens?: AppleTokenVerifier;
  private readonly external: SignedCookie<ExternalSignIn>;
  private readonly linker: IdentityLinker;

  constructor(private readonly o: SocialSignInOptions) {
    const { config, clock, random } = o;
    const timeoutMs = o.tuning?.providerTimeoutMs ?? 10_000;
    const cookie = <T extends object>(name: string, path: string, seconds: number, sameSite: 'lax' | 'none') =>
      new SignedCookie<T>({ name, path, maxAgeSeconds: seconds, secret: o.sessionSecret, secure: o.cookieSecure || sameSite === 'none', sameSite, clock });
    this.external = cookie<ExternalSignIn>(EXTERNAL_COOKIE, EXTERNAL_CALLBACK_PATH, EXTERNAL_COOKIE_SECONDS, 'lax');
    this.linker = new IdentityLinker({ service: o.service, store: o.store, identities: o.identities, clock });
    if (config.google) {
      this.google = new GoogleSignIn({
        config: config.google,
        publicBaseUrl: o.publicBaseUrl,
        stateCookie: cookie<PendingSignIn>(stateCookieName('google'), callbackPath('google'), STATE_COOKIE_SECONDS, 'lax'),
        random,
        clock,
        fetch: o.fetch,
        timeoutMs,
      });
    }
    if (config.apple && (config.apple.web || config.apple.nativeAudiences.length > 0)) {
      this.appleTokens = new AppleTokenVerifier({
        keysUrl: config.apple.keysUrl,
        issuer: config.apple.issuer,
        clock,
        fetch: o.fetch,
        timeoutMs: o.tuning?.jwksTimeoutMs,
        cooldownMs: o.tuning?.jwksCooldownMs,
        cacheMaxAgeMs: o.tuning?.jwksCacheMaxAgeMs,
      });
    }
    if (config.apple?.web && this.appleTokens) {
      this.apple = new AppleSignIn({
        web: config.apple.web,
        config: config.apple,
        publicBaseUrl: o.publicBaseUrl,
        // Apple comes back with a cross-site form POST, which carries only SameSite=None cookies
        // (and browsers want those Secure). Over plain http (development) that cannot work; Apple
        // only accepts https return URLs anyway.
        stateCookie: cookie<PendingSignIn>(stateCookieName('apple'), callbackPath('apple'), STATE_COOKIE_SECONDS, o.cookieSecure ? 'none' : 'lax'),
        verifier: this.appleTokens,
        random,
        clock,
        fetch: o.fetch,
        timeoutMs,
      });
    }
  }

  /** GET /auth/providers: the providers whose browser sign-in is configured. */
  providers(): AuthProviderResponse[] {
    const out: AuthProviderResponse[] = [];
    if (this.google) out.push(PROVIDER_LABELS.google);
    if (this.apple) out.push(PROVIDER_LABELS.apple);
    return out;
  }

  /** GET /auth/challenge/{provider}: 404, 400, or 302 to the provider with the state cookie set. */
  async challenge(res: Response, providerParam: string, query: ChallengeQuery): Promise<void> {
    const name = providerParam.toLowerCase();
    const provider = name === 'google' ? this.google : name === 'apple' ? this.apple : undefined;
    if (!provider) throw new NotFoundError('unknown_login_provider', `Sign-in with "${providerParam}" is not available on this server`);
    const flow = flowOf(query, this.o.config.appRedirectUris);
    res.setHeader('Cache-Control', 'no-store');
    await provider.start(res, flow);
  }

  /** GET /auth/callback/google. Always a redirect. */
  async googleCallback(req: Request, res: Response): Promise<void> {
    if (!this.google) throw new NotFoundError('unknown_login_provider', 'Google sign-in is not available on this server');
    await this.afterProvider(res, 'google', () => this.google!.callback(req, res));
  }

  /** POST /auth/callback/apple (form_post). Always a redirect. */
  async appleCallback(req: Request, res: Response, form: AppleCallbackForm): Promise<void> {
    if (!this.apple) throw new NotFoundError('unknown_login_provider', 'Apple sign-in is not available on this server');
    await this.afterProvider(res, 'apple', () => this.apple!.callback(req, res, form));
  }

  /** The identity goes into the external cookie and the browser on to external-callback. */
  private async afterProvider(res: Response, provider: ProviderName, callback: () => Promise<CallbackOutcome>): Promise<void> {
    res.setHeader('Cache-Control', 'no-store');
    let outcome: CallbackOutcome;
    try {
      outcome = await callback();
    } catch (err) {
      this.o.logger.error({ err, provider }, 'social sign-in callback failed unexpectedly');
      outcome = { ok: false, reason: 'unexpected error' };
    }
    if (!outcome.ok) {
      this.fail(res, provider, outcome.flow, outcome.reason);
      return;
    }
    // A unique id (128 random bits) lets external-callback spend this cookie exactly once.
    await this.external.set(res, { identity: outcome.identity, flow: outcome.flow }, { jti: this.o.random(16).toString('base64url') });
    const { flow } = outcome;
    res.redirect(302, flow.kind === 'browser' && flow.returnUrl ? withQueryParam(EXTERNAL_CALLBACK_PATH, 'returnUrl', flow.returnUrl) : EXTERNAL_CALLBACK_PATH);
  }

  /** Where a failed sign-in lands: the app's URI with ?error=account, else /login. */
  private fail(res: Response, provider: ProviderName | undefined, flow: Flow | undefined, reason: string): void {
    this.o.logger.info({ provider: provider ?? null, flow: flow?.kind ?? null, reason }, 'social sign-in failed');
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(302, flow?.kind === 'app' ? withQueryParam(flow.redirectUri, 'error', 'account') : '/login');
  }

  /**
   * GET /auth/external-callback: the account behind the external cookie's identity (linked, else
   * same verified address, else new). Browser flow: session cookie and 302 to the returnUrl, or to
   * /login when none is usable. App flow: 302 to the app's URI with a single-use code. Failures
   * land on /login or the app's URI with ?error=account. Never JSON.
   *
   * The cookie is single use on the server, not only cleared in the browser: its id is recorded as
   * spent (one INSERT on a primary key) before anybody is signed in, so a copied cookie value,
   * replayed once or many times in parallel, fails like any other bad cookie.
   */
  async externalCallback(req: Request, res: Response, queryReturnUrl: string | undefined): Promise<void> {
    const cookie = await this.external.readSigned(req);
    this.external.clear(res);
    res.setHeader('Cache-Control', 'no-store');
    if (!cookie) {
      this.fail(res, undefined, undefined, 'no external sign-in cookie (missing, forged or over five minutes old)');
      return;
    }
    const { identity, flow } = cookie.value;
    if (cookie.jti === undefined) {
      this.fail(res, identity.provider, flow, 'external sign-in cookie without an id (cannot be spent once)');
      return;
    }
    const jti = cookie.jti;
    if (!(await timing.step('spend-external-cookie', () => this.o.identities.spendExternalCookie(jti, cookie.expiresAt)))) {
      this.fail(res, identity.provider, flow, 'external sign-in cookie already spent (replayed)');
      return;
    }
    let account: Account;
    try {
      // The browser's own session: the person signed in to an account may link back an identity
      // they unlinked from it.
      const signedIn = flow.kind === 'browser' ? this.o.sessions.current(req)?.accountId : undefined;
      account = await timing.step('link-account', () => this.linker.accountFor(identity, signedIn));
    } catch (err) {
      if (!(err instanceof AccountNotCreatedError)) this.o.logger.error({ err, provider: identity.provider }, 'social sign-in could not settle the account');
      this.fail(res, identity.provider, flow, (err as Error).message);
      return;
    }
    if (flow.kind === 'app') {
      const code = await this.issueAppCode(account.id, flow, identity.provider);
      res.redirect(302, withQueryParam(flow.redirectUri, 'code', code));
      return;
    }
    const target = flow.returnUrl !== undefined ? safeReturnUrl(flow.returnUrl) : safeReturnUrl(queryReturnUrl);
    // TOTP on: no session yet; the service's page asks for the code, then lands on the returnUrl.
    const mfaToken = await this.o.service.secondStepFor(account.id, identity.provider, { returnUrl: target });
    if (mfaToken) {
      res.redirect(302, withQueryParam(SIGN_IN_VERIFY_PATH, 'mfaToken', mfaToken));
      return;
    }
    await this.o.sessions.signIn(req, account.id, account.securityStamp, identity.provider);
    res.redirect(302, target ?? '/login');
  }

  private async issueAppCode(accountId: string, flow: Extract<Flow, { kind: 'app' }>, method: ProviderName): Promise<string> {
    const code = this.o.random(32).toString('base64url');
    const now = this.o.clock.now();
    await this.o.identities.insertAppCode({
      codeHash: hashToken(code),
      accountId,
      codeChallenge: flow.codeChallenge,
      redirectUri: flow.redirectUri,
      method,
      createdAt: now,
      expiresAt: new Date(now.getTime() + APP_CODE_LIFETIME_MS),
    });
    return code;
  }

  /**
   * POST /auth/exchange: any attempt spends the code, a wrong verifier included; 401
   * `signin_code_spent` for an unknown, used, expired or mismatched one. Signs the caller in.
   */
  async exchange(req: Request, code: string, codeVerifier: string): Promise<Account> {
    const now = this.o.clock.now();
    const codeHash = hashToken(code);
    const spent = await this.o.identities.spendAppCode(codeHash, now);
    const refused = () => new AuthenticationError('signin_code_spent', 'The sign-in code expired, was already used, or the verifier does not match');
    if (!spent) {
      // Presented again: whoever holds it now may have stolen it, so the session its first
      // exchange made ends too (RFC 6749 §4.1.2).
      if (await this.o.identities.revokeReplayedAppCode(codeHash, now)) this.o.logger.warn({}, 'app sign-in code replayed; its session was revoked');
      throw refused();
    }
    const good = spent.expiresAt.getTime() > now.getTime() && sameSecret(s256(codeVerifier), spent.codeChallenge);
    const account = good ? await this.o.store.findById(spent.accountId) : undefined;
    if (!account) throw refused();
    const mfaToken = await this.o.service.secondStepFor(account.id, spent.method ?? 'password');
    if (mfaToken) throw mfaRequired(mfaToken);
    await this.o.sessions.signIn(req, account.id, account.securityStamp, spent?.method ?? undefined);
    // From here on a replay ends this session (it was issued on the code). A replay that came
    // before it existed found nothing issued yet to revoke: it was refused, and the one exchange
    // that spent the code stays the one that wins ("works once": exactly one of any number of
    // parallel exchanges signs in).
    await this.o.identities.recordAppCodeSession(codeHash, this.o.sessions.current(req)!.id);
    return account;
  }

  /**
   * POST /auth/idp/native: Sign in with Apple from the app. 404 `idp_signin_unavailable` without
   * APPLE_NATIVE_AUDIENCES; 401 `idp_signin_rejected` for a token Apple does not vouch for (or a
   * nonce that does not match); 503 `service_unavailable` when Apple's keys cannot be fetched; 401
   * `account_not_created` when the token's address is unverified and taken. Signs the caller in.
   */
  async native(req: Request, body: NativeSignInBody): Promise<Account> {
    const apple = this.o.config.apple;
    if (!apple || apple.nativeAudiences.length === 0 || !this.appleTokens)
      throw new NotFoundError('idp_signin_unavailable', 'Native sign-in is not configured on this server');
    const rejected = (reason: string) => {
      this.o.logger.info({ provider: 'apple', reason }, 'native sign-in rejected');
      return new AuthenticationError('idp_signin_rejected', 'Apple did not confirm this sign-in');
    };
    let claims: Awaited<ReturnType<AppleTokenVerifier['verify']>>;
    try {
      claims = await timing.step('verify-id-token', () => this.appleTokens!.verify(body.identityToken, apple.nativeAudiences));
    } catch (err) {
      if (err instanceof KeysUnavailableError) {
        this.o.logger.warn({ provider: 'apple', reason: err.message }, 'native sign-in: Apple keys unavailable');
        throw new ServiceUnavailableError("Apple's signing keys could not be fetched; try again shortly");
      }
      throw rejected((err as Error).message);
    }
    // decisions.md §4: a token with a nonce needs the rawNonce it was made from. A rawNonce with a
    // token that has none proves nothing and is ignored.
    if (claims.nonce !== undefined) {
      if (typeof body.rawNonce !== 'string') throw rejected('the token carries a nonce and no rawNonce came');
      const expected = createHash('sha256').update(body.rawNonce, 'utf8').digest('hex');
      // Exactly the lower-case hex digest: no case folding, so one nonce has one spelling.
      if (typeof claims.nonce !== 'string' || !sameSecret(expected, claims.nonce)) throw rejected('nonce does not match SHA-256 of rawNonce');
    }
    // One sign-in per token: its nonce (or, without one, the token itself) is remembered until the
    // token expires, on every instance, so a captured token + rawNonce cannot sign in again.
    const spentKey =
      typeof claims.nonce === 'string' ? `apple:nonce:${claims.nonce}` : `apple:token:${createHash('sha256').update(body.identityToken, 'utf8').digest('hex')}`;
    if (!(await this.o.identities.spendIdentityToken(spentKey, new Date(claims.exp! * 1000)))) throw rejected('identity token already used');
    const email = typeof claims.email === 'string' && claims.email !== '' ? claims.email : null;
    const identity: ExternalIdentity = {
      provider: 'apple',
      subject: claims.sub,
      email,
      emailVerified: email !== null && vouched(claims.email_verified),
      displayName: composeDisplayName({ givenName: body.givenName, familyName: body.familyName, email: email ?? body.email }, 'Apple user'),
    };
    let account: Account;
    try {
      account = await timing.step('link-account', () => this.linker.accountFor(identity));
    } catch (err) {
      if (err instanceof AccountNotCreatedError)
        throw new AuthenticationError(
          'account_not_created',
          'No account could be signed in: the address is not verified by Apple and belongs to another account',
        );
      throw err;
    }
    const mfaToken = await this.o.service.secondStepFor(account.id, 'apple');
    if (mfaToken) throw mfaRequired(mfaToken);
    await this.o.sessions.signIn(req, account.id, account.securityStamp, 'apple');
    return account;
  }
}
