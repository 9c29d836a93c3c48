import type { Clock, RandomBytes } from '@svc/contracts';
import { timing } from '@svc/http-kit';
import type { Request, Response } from 'express';
import * as oidc from 'openid-client';
import { sameSecret } from '../tokens.js';
import { callbackPath, type GoogleConfig } from './config.js';
import type { Flow } from './flow.js';
import { composeDisplayName, type ExternalIdentity, vouched } from './identity.js';
import type { CallbackOutcome, PendingSignIn } from './pending.js';
import type { SignedCookie } from './signed-cookie.js';

export interface GoogleSignInOptions {
  config: GoogleConfig;
  publicBaseUrl: string;
  /** The state cookie (SameSite=Lax: Google comes back with a top-level GET). */
  stateCookie: SignedCookie<PendingSignIn>;
  random: RandomBytes;
  /** The service clock: the id_token's times are checked against it. */
  clock: Clock;
  /** HTTP for the token and userinfo endpoints. */
  fetch: typeof fetch;
  /** Longest wait for each call to Google's token and userinfo endpoints. */
  timeoutMs: number;
}

/**
 * Google's issuer identifier. The configuration names Google's endpoints but not its issuer, and
 * openid-client compares it with the `iss` of an id_token (Google sends one for scope `openid`)
 * and of an RFC 9207 `iss` callback parameter, when either comes.
 */
export const GOOGLE_ISSUER = 'https://accounts.google.com';

const SCOPE = 'openid email profile';

/**
 * Google sign-in through openid-client's public API, every endpoint from configuration (no
 * discovery: the tests' provider has none, and the endpoints are fixed by GOOGLE_*). The caller
 * has no session yet, so the signed state cookie keeps the OAuth `state`, the PKCE verifier of our
 * own code exchange and the flow the challenge asked for. openid-client sends the access token to
 * userinfo as a Bearer header only (never in the URL, where logs keep it), and each call gets the
 * deadline `timeoutMs`.
 */
export class GoogleSignIn {
  private readonly server: oidc.ServerMetadata;
  /** Exactly the redirect_uri of the authorization request; openid-client sends the same one to the token endpoint. */
  private readonly redirectUri: string;
  /** Plain-http endpoints (a provider on loopback in tests): openid-client refuses them unless told. */
  private readonly insecure: boolean;

  constructor(private readonly o: GoogleSignInOptions) {
    const { config } = o;
    this.server = {
      issuer: GOOGLE_ISSUER,
      authorization_endpoint: config.authorizationUrl,
      token_endpoint: config.tokenUrl,
      userinfo_endpoint: config.userInfoUrl,
    };
    this.redirectUri = new URL(`${o.publicBaseUrl}${callbackPath('google')}`).href;
    this.insecure = [config.authorizationUrl, config.tokenUrl, config.userInfoUrl].some((u) => new URL(u).protocol === 'http:');
  }

  /**
   * The client for one sign-in. Made per call so that openid-client's clock (it reads the wall
   * clock for the id_token's `exp` and `iat`) is set to the service clock at that moment.
   */
  private client(): oidc.Configuration {
    const skewSeconds = Math.round((this.o.clock.now().getTime() - Date.now()) / 1000);
    const client = new oidc.Configuration(
      this.server,
      this.o.config.clientId,
      { client_secret: this.o.config.clientSecret, [oidc.clockSkew]: skewSeconds },
      // client_id and client_secret in the form body, as Google documents for its token endpoint.
      oidc.ClientSecretPost(this.o.config.clientSecret),
    );
    client.timeout = this.o.timeoutMs / 1000;
    client[oidc.customFetch] = (url, init) => this.o.fetch(url, init);
    if (this.insecure) oidc.allowInsecureRequests(client);
    return client;
  }

  /** Sets the state cookie and answers 302 to Google's authorization endpoint. */
  async start(res: Response, flow: Flow): Promise<void> {
    const pending: PendingSignIn = { state: this.o.random(32).toString('base64url'), verifier: this.o.random(32).toString('base64url'), flow };
    await this.o.stateCookie.set(res, pending);
    const url = oidc.buildAuthorizationUrl(this.client(), {
      redirect_uri: this.redirectUri,
      scope: SCOPE,
      state: pending.state,
      code_challenge: await oidc.calculatePKCECodeChallenge(pending.verifier!),
      code_challenge_method: 'S256',
    });
    res.redirect(302, url.href);
  }

  /** Checks `state` against the cookie, exchanges the code (with PKCE) and reads the userinfo. */
  async callback(req: Request, res: Response): Promise<CallbackOutcome> {
    const pending = await this.o.stateCookie.read(req);
    this.o.stateCookie.clear(res);
    if (!pending) return { ok: false, reason: 'no Google sign-in in progress in this browser (state cookie missing, forged or expired)' };
    const { flow } = pending;
    const query = req.query as Record<string, unknown>;
    // openid-client checks state too; this check is in constant time and comes before any call.
    if (typeof query.state !== 'string' || !sameSecret(query.state, pending.state)) return { ok: false, flow, reason: 'state does not match' };
    if (query.error !== undefined) return { ok: false, flow, reason: `Google answered error ${String(query.error).slice(0, 100)}` };
    if (typeof query.code !== 'string' || query.code === '') return { ok: false, flow, reason: 'Google sent no code' };
    if (!pending.verifier) return { ok: false, flow, reason: 'the state cookie holds no PKCE verifier' };
    const verifier = pending.verifier;
    try {
      const identity = await timing.step('google-exchange', () => this.exchange(req, pending.state, verifier));
      return identity ? { ok: true, flow, identity } : { ok: false, flow, reason: 'Google gave no subject' };
    } catch (err) {
      return { ok: false, flow, reason: `Google token or userinfo call failed: ${describe(err)}` };
    }
  }

  /** The code for tokens (state and PKCE verifier checked by openid-client), then the userinfo with them. */
  private async exchange(req: Request, state: string, verifier: string): Promise<ExternalIdentity | undefined> {
    const client = this.client();
    // The callback as Google called it: our redirect_uri with the query Google added.
    const current = new URL(this.redirectUri);
    current.search = new URL(req.originalUrl, 'http://callback.invalid').search;
    const tokens = await oidc.authorizationCodeGrant(client, current, { pkceCodeVerifier: verifier, expectedState: state });
    // With an id_token (Google sends one), userinfo must speak of the same subject.
    const userinfo = await oidc.fetchUserInfo(client, tokens.access_token, tokens.claims()?.sub ?? oidc.skipSubjectCheck);
    return identityOf(userinfo);
  }
}

/** Who Google says signed in, from the OpenID Connect userinfo claims. */
function identityOf(info: oidc.UserInfoResponse): ExternalIdentity | undefined {
  if (typeof info.sub !== 'string' || info.sub === '') return undefined;
  const email = typeof info.email === 'string' && info.email !== '' ? info.email : null;
  return {
    provider: 'google',
    subject: info.sub,
    email,
    emailVerified: email !== null && vouched(info.email_verified),
    displayName: composeDisplayName({ givenName: info.given_name, familyName: info.family_name, fullName: info.name, email }, 'Google user'),
  };
}

/** For the log: what failed, without any token (openid-client's errors carry none). */
function describe(err: unknown): string {
  const parts: string[] = [];
  // openid-client wraps: its error, the cause (oauth4webapi's), and the provider's Response under that.
  for (let e: unknown = err, depth = 0; e !== undefined && depth < 4; depth++) {
    if (e instanceof Response) {
      parts.push(`HTTP ${e.status}`);
      break;
    }
    if (e instanceof oidc.ResponseBodyError) {
      parts.push(`${e.message}: HTTP ${e.status}, error ${e.error.slice(0, 100)}`);
      break;
    }
    if (!(e instanceof Error)) {
      parts.push(String(e).slice(0, 200));
      break;
    }
    const code = (e as { code?: unknown }).code;
    parts.push(`${e.message}${typeof code === 'string' ? ` [${code}]` : ''}`);
    e = e.cause;
  }
  return parts.join(': ');
}
