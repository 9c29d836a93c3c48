import { type Clock, type Membership, type RandomBytes, SESSION_COOKIE } from '@svc/contracts';
import type { DeclaredReads } from '@svc/db';
import { isPgError, PG } from '@svc/db';
import { AuthenticationError, keepContext, type Logger, type RateLimit } from '@svc/http-kit';
import * as cookieModule from 'cookie';
import signature from 'cookie-signature';
import type { Request, RequestHandler, Response } from 'express';
import session from 'express-session';
import type { Knex } from 'knex';
import { accessTokenPrincipal } from './AccessTokenStore.js';
import { AccountSessionStore, cookieOnClock } from './AccountSessionStore.js';
import { accessTokenHash, bearerToken } from './access-tokens.js';
import type { AccountSummary } from './me.js';

declare module 'express-session' {
  interface SessionData {
    /** The signed-in account. */
    accountId: string;
    /** The account's security stamp when this session signed in (or was re-issued). */
    stamp: string;
    /** Last time the session's expiry was pushed out (ISO, injected clock). */
    renewedAt: string;
    /** How the person signed in (GET /me/sessions); kept when the session id is re-issued. */
    method?: SignInMethod;
    /** When the person signed in (ISO, injected clock); kept when the session id is re-issued. */
    signedInAt?: string;
    /** User-Agent at sign-in, trimmed and bounded; written to its column, never into the JSON. */
    userAgent?: string | null;
  }
}

/** How a session was signed in. */
export type SignInMethod = 'password' | 'google' | 'apple' | 'passkey';

/** The longest User-Agent a session keeps (a header may be kilobytes; the list only names the device). */
export const USER_AGENT_MAX = 256;

/** The User-Agent as a session records it: trimmed, at most USER_AGENT_MAX characters, null when blank or absent. */
export function sessionUserAgent(req: Request): string | null {
  const ua = req.get('user-agent')?.trim();
  return ua ? [...ua].slice(0, USER_AGENT_MAX).join('') : null;
}

/** decisions.md §3: the cookie and the session live 30 days, renewed while used. */
export const SESSION_TTL_MS = 30 * 24 * 3600_000;
/** Renewal writes the session row and re-sends the cookie; at most once a day per session. */
export const SESSION_RENEW_AFTER_MS = 24 * 3600_000;

export interface SessionsOptions {
  knex: Knex;
  clock: Clock;
  random: RandomBytes;
  secret: string;
  cookieSecure: boolean;
  /**
   * The absolute lifetime of a session (ASVS 7.3.2): one signed in longer ago than this is refused
   * and never renewed, however much it is used. The person signs in again.
   */
  maxAgeMs: number;
  /** Where a failed background lastSeenAt write is reported. */
  logger?: Logger;
  /** The host's read kernel: a GET of a route that serves a declared read loads it with the session, in the same statement. */
  reads?: DeclaredReads;
  /**
   * The key of personal access tokens' keyed hash. With it, a request carrying `Authorization:
   * Bearer` is judged by that token alone (the cookie is not read): its principal comes from the
   * same statement as a session's, with the token's scopes. Without it every bearer answers 401.
   */
  tokenKey?: string;
  /** The per-token rate limit (429 `rate_limited`), taken while the token is looked up. */
  tokenLimit?: RateLimit;
}

export interface Sessions {
  /** express-session (context-preserving) then the principal: the host mounts these on /api. */
  authenticate: RequestHandler[];
  /**
   * A new session id for `accountId`, recording `stamp`; sets the cookie on this answer. `method`
   * names how the person signed in; without it the session is a re-issue of the caller's own
   * (a password change), which keeps the current session's method and sign-in time.
   */
  signIn(req: Request, accountId: string, stamp: string, method?: SignInMethod): Promise<void>;
  /** Keeps this session (same id) but records the account's new stamp. */
  restamp(req: Request, stamp: string): Promise<void>;
  /** Deletes this session and clears the cookie. */
  signOut(req: Request, res: Response): Promise<void>;
  /** The account the session of this request belongs to (loaded with the session, no extra query). */
  accountOf(req: Request): AccountSummary | undefined;
  /** When this request's session signed in (ISO), on either path; undefined without a session. */
  signedInAtOf(req: Request): string | undefined;
  store: AccountSessionStore;
}

function call(fn: (cb: (err?: unknown) => void) => void): Promise<void> {
  return new Promise((resolve, reject) => fn((err) => (err ? reject(err) : resolve())));
}

/** Methods that never change a session: their requests may take the read path. */
const SAFE_METHODS = new Set(['GET', 'HEAD']);
/** Sign-in, sign-out and the providers' callbacks live here: they always take express-session's path. */
const AUTH_PATHS = '/api/v1/auth';
/** Signed cookie values remembered as verified (a few hundred kB at most). */
const VERIFIED_MAX = 10_000;

export function createSessions(o: SessionsOptions): Sessions {
  const loaded = new WeakMap<Request, { account: AccountSummary; memberships?: Membership[]; signedInAt?: string }>();
  const store = new AccountSessionStore({
    knex: o.knex,
    clock: o.clock,
    ttlMs: SESSION_TTL_MS,
    maxAgeMs: o.maxAgeMs,
    reads: o.reads,
    tokens: o.tokenKey ? accessTokenPrincipal : undefined,
    onLoaded: (req, account, memberships) => loaded.set(req, { account, memberships }),
    onTouchError: (err) => o.logger?.warn({ err: { message: (err as Error).message } }, 'session lastSeenAt not written'),
  });
  const cookie = { httpOnly: true, sameSite: 'lax' as const, path: '/', secure: o.cookieSecure };

  const middleware = keepContext(
    session({
      name: SESSION_COOKIE,
      secret: o.secret,
      store,
      resave: false,
      saveUninitialized: false,
      // Not rolling: the cookie is re-sent only when the session is saved, i.e. at sign-in and
      // at the daily renewal below.
      rolling: false,
      genid: () => o.random(24).toString('base64url'),
      cookie: { ...cookie, maxAge: SESSION_TTL_MS },
    }),
  ); // express-session gives the store `generate` (a new session for a request) when the middleware is
  // made; every cookie it makes then runs on the injected clock too.
  const generate = store.generate.bind(store);
  store.generate = (req) => {
    generate(req);
    cookieOnClock(req.session.cookie, o.clock);
    req.session.cookie.maxAge = SESSION_TTL_MS;
  };

  const setPrincipal = (req: Request, found: { account: AccountSummary; memberships?: Membership[] }, sessionId: string) => {
    req.principal = { userId: found.account.id, sessionId, memberships: found.memberships };
  };

  const principal: RequestHandler = (req, _res, next) => {
    const found = loaded.get(req);
    const s = req.session;
    if (found && s && s.accountId === found.account.id) {
      found.signedInAt = s.signedInAt;
      setPrincipal(req, found, req.sessionID);
      const now = o.clock.now();
      const renewed = Date.parse(s.renewedAt ?? '');
      // Changing the session makes express-session save it (new expiry) and re-send the cookie.
      if (!(now.getTime() - renewed < SESSION_RENEW_AFTER_MS)) s.renewedAt = now.toISOString();
    }
    next();
  };
  const slow: RequestHandler = (req, res, next) => middleware(req, res, (err?: unknown) => (err ? next(err) : principal(req, res, next)));

  // Cookie values whose signature held, so a session's later requests skip the HMAC (only valid
  // ones are kept, and at most VERIFIED_MAX: the oldest goes first).
  const verified = new Map<string, string>();
  const unsign = (raw: string): string | false => {
    const known = verified.get(raw);
    if (known !== undefined) return known;
    const sid = signature.unsign(raw.slice(2), o.secret);
    if (sid !== false) {
      if (verified.size >= VERIFIED_MAX) verified.delete(verified.keys().next().value!);
      verified.set(raw, sid);
    }
    return sid;
  };

  /**
   * The read path: a GET or HEAD outside /api/v1/auth that carries a session cookie. The cookie's
   * signature is checked as express-session checks it (cookie-signature, same secret), the
   * session is read with the one statement the store uses, and nothing is written: a read never
   * saves the session. express-session's per-request machinery (its Session object, the hash it
   * takes to notice changes, its header hook) is skipped; every request that may change a session
   * (any other method, anything under /api/v1/auth in any letter case, a session due for its daily
   * renewal) takes express-session's path, so the session mechanism stays express-session +
   * connect-pg-simple. When the path is one a route serves a declared read for (the host's kernel,
   * `reads`: GET of a household, of its rules, of the caller's sessions), that read is one more
   * column of the same statement, so the whole authenticated GET is one round trip; the value is
   * handed to the route only once the session held.
   */
  const fast: RequestHandler = (req, res, next) => {
    const bearer = bearerToken(req.headers.authorization);
    if (bearer !== undefined) return byToken(req, res, next, bearer);
    if (!SAFE_METHODS.has(req.method) || req.originalUrl.toLowerCase().startsWith(AUTH_PATHS)) return slow(req, res, next);
    const header = req.headers.cookie;
    if (!header) return next(); // no session: express-session would make an empty one and save nothing
    const raw = cookieModule.parse(header)[SESSION_COOKIE];
    // An unsigned value, or one whose signature fails, is no session (express-session ignores it too).
    const sid = raw?.startsWith('s:') ? unsign(raw) : false;
    if (sid === false) return next();
    const read = o.reads?.size ? o.reads.match(req.path) : undefined;
    store.loadSession(sid, read).then((found) => {
      if (!found?.account || found.sess.accountId !== found.account.id) return next();
      // Due for the daily renewal: express-session's path saves it and re-sends the cookie.
      if (!(o.clock.now().getTime() - Date.parse(found.sess.renewedAt ?? '') < SESSION_RENEW_AFTER_MS)) return slow(req, res, next);
      loaded.set(req, { account: found.account, memberships: found.memberships, signedInAt: found.sess.signedInAt });
      req.sessionID = sid;
      setPrincipal(req, found as { account: AccountSummary; memberships?: Membership[] }, sid);
      // Lent only by a session that held. The declared read's value goes to the route that names it (ApiRouter hands it on; the route takes it with `loadedRead(req, read)`).
      if (read && found.read !== undefined && found.read !== null) req.lent = { name: read.read.name, value: found.read };
      next();
    }, next);
  };

  const refused = () => new AuthenticationError('unauthenticated', 'The access token is unknown, revoked, expired or malformed');
  /**
   * A request with `Authorization: Bearer`, whatever its method and path under /api: judged by the
   * token alone. A bearer not of the token shape answers 401 without a lookup; otherwise the
   * token's principal is read by the session's one statement in its token form (with the GET's
   * declared read, as for a session) while the token's rate limit is taken, so neither waits for the
   * other. No session is read or made: `req.session` stays unset, and routes a token may not reach
   * answer 403 `insufficient_scope` (ApiRouter's scope gate) before their handlers.
   */
  const byToken = (req: Request, res: Response, next: (err?: unknown) => void, token: string | false) => {
    if (token === false || !o.tokenKey) throw refused();
    const hash = accessTokenHash(o.tokenKey, token);
    // A declared read as for a session (an account read's route answers 403 to a token before its handler).
    const read = SAFE_METHODS.has(req.method) && o.reads?.size ? o.reads.match(req.path) : undefined;
    const limit = o.tokenLimit;
    const limited = limit?.consume(hash).then(
      (state) => ({ state }),
      (err: unknown) => ({ err }),
    );
    Promise.all([store.loadToken(hash, read), limited]).then(([found, taken]) => {
      if (!found) return next(refused());
      if (limit && taken) {
        if ('err' in taken) return next(taken.err);
        res.setHeader('RateLimit-Policy', limit.policy);
        res.setHeader('RateLimit', taken.state);
      }
      loaded.set(req, { account: found.account, memberships: found.memberships });
      req.principal = { userId: found.account.id, tokenId: found.tokenId, scopes: found.scopes, memberships: found.memberships };
      if (read && found.read !== undefined && found.read !== null) req.lent = { name: read.read.name, value: found.read };
      next();
    }, next);
  };

  return {
    authenticate: [fast],
    store,
    accountOf: (req) => loaded.get(req)?.account,
    signedInAtOf: (req) => req.session?.signedInAt ?? loaded.get(req)?.signedInAt,

    async signIn(req, accountId, stamp, method) {
      const previous = req.session?.accountId === accountId ? req.session : undefined;
      const now = o.clock.now().toISOString();
      // A fresh id at every sign-in: a session id planted before sign-in is worth nothing after it.
      // A session read from the table is destroyed with it; one made for this request was never
      // stored (an id the store does not know is never taken over), so it is only replaced, and no
      // DELETE is spent on it.
      if (store.cameFromStore(req)) await call((cb) => req.session.regenerate(cb));
      else store.generate(req);
      req.session.accountId = accountId;
      req.session.stamp = stamp;
      req.session.renewedAt = now;
      req.session.method = method ?? previous?.method ?? 'password';
      req.session.signedInAt = (method ? undefined : previous?.signedInAt) ?? now;
      req.session.userAgent = sessionUserAgent(req);
      try {
        await call((cb) => req.session.save(cb));
      } catch (err) {
        // The session row references its account: a sign-in that lost a race with the account's
        // deletion finds no account, as a sign-in a moment later would.
        // The session is dropped, or express-session would try to save it again as the answer ends.
        if (isPgError(err, PG.foreignKeyViolation)) {
          await call((cb) => req.session.destroy(cb));
          throw new AuthenticationError('invalid_credentials', 'Wrong e-mail address or password');
        }
        throw err;
      }
      loaded.delete(req);
      req.principal = { userId: accountId, sessionId: req.sessionID };
    },

    async restamp(req, stamp) {
      if (!req.session?.accountId) return;
      req.session.stamp = stamp;
      await call((cb) => req.session.save(cb));
    },

    async signOut(req, res) {
      if (req.session) await call((cb) => req.session.destroy(cb));
      res.clearCookie(SESSION_COOKIE, cookie);
      delete req.principal;
      loaded.delete(req);
    },
  };
}
