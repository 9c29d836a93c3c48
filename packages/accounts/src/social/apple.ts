import type { Clock, RandomBytes } from '@svc/contracts';
import type { Infer } from '@svc/http-kit';
import { timing } from '@svc/http-kit';
import type { Request, Response } from 'express';
import { importPKCS8, SignJWT } from 'jose';
import type { AppleCallbackForm as AppleCallbackFormSchema } from '../schemas.js';
import { sameSecret } from '../tokens.js';
import type { AppleTokenVerifier } from './apple-tokens.js';
import { type AppleConfig, callbackPath } from './config.js';
import type { Flow } from './flow.js';
import { composeDisplayName, vouched } from './identity.js';
import type { CallbackOutcome, PendingSignIn } from './pending.js';
import type { SignedCookie } from './signed-cookie.js';

export interface AppleSignInOptions {
  web: NonNullable<AppleConfig['web']>;
  config: AppleConfig;
  publicBaseUrl: string;
  /** The state cookie: SameSite=None (Secure) where possible, since Apple comes back with a cross-site POST. */
  stateCookie: SignedCookie<PendingSignIn>;
  verifier: AppleTokenVerifier;
  random: RandomBytes;
  clock: Clock;
  fetch: typeof fetch;
  timeoutMs: number;
}

/**
 * The form Apple posts to the callback (response_mode=form_post), as its schema declares it
 * (`user`: JSON, first sign-in only, `{ "name": { "firstName", "lastName" }, "email" }`; unsigned,
 * used for names only).
 */
export type AppleCallbackForm = Infer<typeof AppleCallbackFormSchema>;

/**
 * Sign in with Apple on the web, with jose rather than passport-apple: under Express 5 that
 * strategy cannot see an `error` Apple posts (it assigns to the read-only `req.query`, so a
 * cancelled sign-in bounces back to Apple), parses the token answer with an unguarded JSON.parse
 * inside a socket callback (a malformed answer crashes the process), lets every option leak into
 * the authorization URL, replaces `state` with an unverified random one unless given an object,
 * and never verifies the id_token. Here: the authorization redirect with state and nonce, the
 * code exchange authenticated by an ES256 client-secret JWT, and the id_token checked against
 * Apple's keys (signature, iss, aud, exp) plus the nonce.
 */
export class AppleSignIn {
  private privateKey: ReturnType<typeof importPKCS8> | undefined;

  constructor(private readonly o: AppleSignInOptions) {}

  private get redirectUri(): string {
    return `${this.o.publicBaseUrl}${callbackPath('apple')}`;
  }

  /** Sets the state cookie and answers 302 to Apple's authorization endpoint. */
  async start(res: Response, flow: Flow): Promise<void> {
    const pending: PendingSignIn = { state: this.o.random(32).toString('base64url'), nonce: this.o.random(32).toString('base64url'), flow };
    await this.o.stateCookie.set(res, pending);
    const url = new URL(this.o.config.authorizationUrl);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('response_mode', 'form_post');
    url.searchParams.set('client_id', this.o.web.clientId);
    url.searchParams.set('redirect_uri', this.redirectUri);
    url.searchParams.set('scope', 'name email');
    url.searchParams.set('state', pending.state);
    url.searchParams.set('nonce', pending.nonce!);
    res.redirect(302, url.href);
  }

  /** Checks `state`, exchanges the code, verifies the id_token and its nonce. */
  async callback(req: Request, res: Response, form: AppleCallbackForm): Promise<CallbackOutcome> {
    const pending = await this.o.stateCookie.read(req);
    this.o.stateCookie.clear(res);
    if (!pending) return { ok: false, reason: 'no Apple sign-in in progress in this browser (state cookie missing, forged or expired)' };
    const { flow } = pending;
    if (typeof form.state !== 'string' || !sameSecret(form.state, pending.state)) return { ok: false, flow, reason: 'state does not match' };
    if (form.error !== undefined) return { ok: false, flow, reason: `Apple answered error ${String(form.error).slice(0, 100)}` };
    if (typeof form.code !== 'string' || form.code === '') return { ok: false, flow, reason: 'Apple sent no code' };
    let idToken: string;
    try {
      idToken = await timing.step('apple-exchange', () => this.exchange(form.code!));
    } catch (err) {
      return { ok: false, flow, reason: `Apple token call failed: ${(err as Error).message}` };
    }
    try {
      const claims = await timing.step('verify-id-token', () => this.o.verifier.verify(idToken, this.o.web.clientId));
      if (typeof claims.nonce !== 'string' || !pending.nonce || !sameSecret(claims.nonce, pending.nonce))
        return { ok: false, flow, reason: 'id_token nonce does not match' };
      const email = typeof claims.email === 'string' && claims.email !== '' ? claims.email : null;
      const names = namesOf(form.user);
      return {
        ok: true,
        flow,
        identity: {
          provider: 'apple',
          subject: claims.sub,
          email,
          emailVerified: email !== null && vouched(claims.email_verified),
          displayName: composeDisplayName({ ...names, email }, 'Apple user'),
        },
      };
    } catch (err) {
      // Rejected or unverifiable (keys unreachable) alike: this browser's sign-in did not happen.
      return { ok: false, flow, reason: (err as Error).message };
    }
  }

  /** The code for an id_token at APPLE_TOKEN_URL. */
  private async exchange(code: string): Promise<string> {
    const body = new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: this.redirectUri,
      client_id: this.o.web.clientId,
      client_secret: await this.clientSecret(),
    });
    const answer = await this.o.fetch(this.o.config.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(this.o.timeoutMs),
    });
    if (answer.status !== 200) throw new Error(`token endpoint answered ${answer.status}`);
    const json = (await answer.json().catch(() => undefined)) as { id_token?: unknown } | undefined;
    if (typeof json?.id_token !== 'string') throw new Error('token endpoint answered no id_token');
    return json.id_token;
  }

  /** Apple's client secret: a JWT signed ES256 with the team's key, iss = team, sub = client, aud = Apple, five minutes. */
  private async clientSecret(): Promise<string> {
    this.privateKey ??= importPKCS8(this.o.web.privateKey, 'ES256');
    const key = await this.privateKey.catch((err: Error) => {
      this.privateKey = undefined;
      throw new Error(`APPLE_PRIVATE_KEY is not a PKCS #8 P-256 key: ${err.message}`);
    });
    const now = Math.floor(this.o.clock.now().getTime() / 1000);
    return new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: this.o.web.keyId })
      .setIssuer(this.o.web.teamId)
      .setSubject(this.o.web.clientId)
      .setAudience(this.o.config.issuer)
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .sign(key);
  }
}

function namesOf(user: unknown): { givenName?: string; familyName?: string } {
  if (typeof user !== 'string' || user.length > 4096) return {};
  try {
    const parsed = JSON.parse(user) as { name?: { firstName?: unknown; lastName?: unknown } };
    const given = parsed?.name?.firstName;
    const family = parsed?.name?.lastName;
    return { givenName: typeof given === 'string' ? given : undefined, familyName: typeof family === 'string' ? family : undefined };
  } catch {
    return {};
  }
}
