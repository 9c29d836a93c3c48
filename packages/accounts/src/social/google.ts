import type http from 'node:http';
import type { RandomBytes } from '@svc/contracts';
import { timing } from '@svc/http-kit';
import type { Request, Response } from 'express';
import type { PassportStatic } from 'passport';
import { Strategy as GoogleStrategy, type Profile } from 'passport-google-oauth20';
import { sameSecret } from '../tokens.js';
import { callbackPath, type GoogleConfig } from './config.js';
import type { Flow } from './flow.js';
import { composeDisplayName, type ExternalIdentity, vouched } from './identity.js';
import type { CallbackOutcome, PendingSignIn } from './pending.js';
import type { SignedCookie } from './signed-cookie.js';

export interface GoogleSignInOptions {
  config: GoogleConfig;
  passport: PassportStatic;
  publicBaseUrl: string;
  /** The state cookie (SameSite=Lax: Google comes back with a top-level GET). */
  stateCookie: SignedCookie<PendingSignIn>;
  random: RandomBytes;
  /** Longest wait for Google's token and userinfo endpoints. */
  timeoutMs: number;
}

type StoreCallback = (err: Error | null, state?: string) => void;
type VerifyCallback = (err: Error | null, ok: string | false, info?: { message: string }) => void;

/** The parts of the `oauth` library's OAuth2 client the hardening below touches. */
interface OAuth2Client {
  useAuthorizationHeaderforGET(use: boolean): void;
  _executeRequest(lib: { request(options: http.RequestOptions): http.ClientRequest }, options: http.RequestOptions, body: unknown, callback: unknown): void;
}

const SCOPE = ['openid', 'email', 'profile'];

/**
 * Google sign-in through passport-google-oauth20, every endpoint from configuration. passport's
 * state store is replaced by the signed state cookie (the caller has no session yet), which also
 * keeps the PKCE verifier of our own code exchange and the flow the challenge asked for.
 */
export class GoogleSignIn {
  /** The cookie read for the callback in flight, for the state store's `verify`. */
  private readonly inFlight = new WeakMap<object, PendingSignIn>();
  private readonly strategyName = 'google';

  constructor(private readonly o: GoogleSignInOptions) {
    const stateStore = {
      // passport-oauth2 picks the PKCE form of `store` by its arity (5): keep every parameter.
      store: (req: Request, verifier: string, appState: { flow: Flow }, _meta: unknown, done: StoreCallback) => {
        const pending: PendingSignIn = { state: o.random(32).toString('base64url'), verifier, flow: appState.flow };
        o.stateCookie.set(req.res!, pending).then(
          () => done(null, pending.state),
          (err: Error) => done(err),
        );
      },
      verify: (req: Request, providedState: string, _meta: unknown, done: VerifyCallback) => {
        const pending = this.inFlight.get(req);
        if (!pending?.verifier || typeof providedState !== 'string' || !sameSecret(providedState, pending.state))
          done(null, false, { message: 'state does not match' });
        else done(null, pending.verifier);
      },
    };
    const strategy = new GoogleStrategy(
      {
        clientID: o.config.clientId,
        clientSecret: o.config.clientSecret,
        callbackURL: `${o.publicBaseUrl}${callbackPath('google')}`,
        authorizationURL: o.config.authorizationUrl,
        tokenURL: o.config.tokenUrl,
        userProfileURL: o.config.userInfoUrl,
        scope: SCOPE,
        pkce: true,
        state: true,
        store: stateStore as never,
      },
      (
        _accessToken: string,
        _refreshToken: string,
        profile: Profile,
        done: (err: Error | null, user?: ExternalIdentity | false, info?: { message: string }) => void,
      ) => {
        const identity = identityOf(profile);
        if (identity) done(null, identity);
        else done(null, false, { message: 'Google gave no subject' });
      },
    );
    harden((strategy as unknown as { _oauth2: OAuth2Client })._oauth2, o.timeoutMs);
    o.passport.use(this.strategyName, strategy);
  }

  /** Sets the state cookie and answers 302 to Google's authorization endpoint. */
  async start(req: Request, res: Response, flow: Flow): Promise<void> {
    // The strategy takes a request with a `code` for a callback: show it none, only the flow.
    const view = Object.create(req, { query: { value: {} }, body: { value: undefined } }) as Request;
    await new Promise<void>((resolve, reject) => {
      res.once('finish', resolve);
      res.once('close', resolve);
      // An object `state` makes passport-oauth2 hand it to the state store (a string would be sent as is).
      this.o.passport.authenticate(this.strategyName, { session: false, state: { flow } as unknown as string }, (err: unknown) =>
        reject(err ?? new Error('Google sign-in did not start')),
      )(view, res, reject);
    });
  }

  /** Checks `state` against the cookie, exchanges the code (with PKCE) and reads the userinfo. */
  async callback(req: Request, res: Response): Promise<CallbackOutcome> {
    const pending = await this.o.stateCookie.read(req);
    this.o.stateCookie.clear(res);
    if (!pending) return { ok: false, reason: 'no Google sign-in in progress in this browser (state cookie missing, forged or expired)' };
    const { flow } = pending;
    const query = req.query as Record<string, unknown>;
    if (typeof query.state !== 'string' || !sameSecret(query.state, pending.state)) return { ok: false, flow, reason: 'state does not match' };
    if (query.error !== undefined) return { ok: false, flow, reason: `Google answered error ${String(query.error).slice(0, 100)}` };
    if (typeof query.code !== 'string' || query.code === '') return { ok: false, flow, reason: 'Google sent no code' };
    this.inFlight.set(req, pending);
    try {
      const identity = await timing.step('google-exchange', () => this.run(req, res));
      return identity ? { ok: true, flow, identity } : { ok: false, flow, reason: 'Google did not confirm the sign-in' };
    } catch (err) {
      return { ok: false, flow, reason: `Google token or userinfo call failed: ${(err as Error).message}` };
    }
  }

  private run(req: Request, res: Response): Promise<ExternalIdentity | undefined> {
    return new Promise((resolve, reject) => {
      this.o.passport.authenticate(this.strategyName, { session: false }, (err: unknown, user: ExternalIdentity | false) => {
        if (err) reject(err instanceof Error ? err : new Error(String((err as { message?: string }).message ?? err)));
        else resolve(user || undefined);
      })(req, res, (err?: unknown) => reject(err ?? new Error('passport did not answer')));
    });
  }
}

function identityOf(profile: Profile): ExternalIdentity | undefined {
  if (typeof profile.id !== 'string' || profile.id === '') return undefined;
  const first = profile.emails?.[0];
  const email = typeof first?.value === 'string' && first.value !== '' ? first.value : null;
  return {
    provider: 'google',
    subject: profile.id,
    email,
    emailVerified: email !== null && vouched(first?.verified),
    displayName: composeDisplayName(
      { givenName: profile.name?.givenName, familyName: profile.name?.familyName, fullName: profile.displayName, email },
      'Google user',
    ),
  };
}

/**
 * The `oauth` client under passport-oauth2 puts the access token into the userinfo URL's query
 * (where logs keep it) and waits forever for a silent endpoint. Send it as a Bearer header
 * instead, and give every call a deadline.
 */
function harden(client: OAuth2Client, timeoutMs: number): void {
  client.useAuthorizationHeaderforGET(true);
  const execute = client._executeRequest.bind(client);
  client._executeRequest = (lib, options, body, callback) =>
    execute(
      {
        request(opts: http.RequestOptions) {
          const request = lib.request(opts);
          request.setTimeout(timeoutMs, () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
          return request;
        },
      },
      options,
      body,
      callback,
    );
}
