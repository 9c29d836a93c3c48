import { type Clock, type RandomBytes, SESSION_COOKIE } from '@svc/contracts';
import { isPgError, PG } from '@svc/db';
import { AuthenticationError, type Logger, type RateLimit, type RequestReads } from '@svc/http-kit';
import * as cookieModule from 'cookie';
import signature from 'cookie-signature';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Knex } from 'knex';
import { accessTokenPrincipal } from './AccessTokenStore.js';
import { AccountSessionStore, type SessionData, type SignInMethod } from './AccountSessionStore.js';
import { accessTokenHash, bearerToken } from './access-tokens.js';
import type { AccountSummary } from './me.js';

export type { SignInMethod } from './AccountSessionStore.js';

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
  /**
   * The host's read kernel, which runs the session's and the token's statements: with them the
   * caller's memberships and, on a GET of a route that serves a declared read, that read, handed to
   * the route by the kernel.
   */
  requestReads?: RequestReads;
  /**
   * The key of personal access tokens' keyed hash. With it, a request carrying `Authorization:
   * Bearer` is judged by that token alone (the cookie is not read): its principal comes from the
   * same statement as a session's, with the token's scopes. Without it every bearer answers 401.
   */
  tokenKey?: string;
  /** The per-token rate limit (429 `rate_limited`), taken while the token is looked up. */
  tokenLimit?: RateLimit;
}

/** The cookie session of a request, as `Sessions.current` answers it. */
export interface CurrentSession {
  /** The session id (the secret the cookie carries, signed; never shown to anyone). */
  readonly id: string;
  /** The signed-in account. */
  readonly accountId: string;
  /** The account's security stamp this session holds. */
  readonly stamp: string;
  /** How the person signed in. */
  readonly method?: SignInMethod;
  /** When the person signed in (ISO). */
  readonly signedInAt?: string;
}

export interface Sessions {
  /** The session middleware (cookie or bearer token, then the principal): the host mounts it on /api. */
  authenticate: RequestHandler[];
  /** This request's cookie session (after a sign-in in it: the new one); undefined without one, and for a bearer token. */
  current(req: Request): CurrentSession | undefined;
  /**
   * A new session id for `accountId`, recording `stamp`; sets the cookie on this answer and deletes
   * the session the request carried. `method` names how the person signed in; without it the
   * session is a re-issue of the caller's own (a password change), which keeps the current
   * session's method and sign-in time.
   */
  signIn(req: Request, accountId: string, stamp: string, method?: SignInMethod): Promise<void>;
  /** Keeps this session (same id) but records the account's new stamp. */
  restamp(req: Request, stamp: string): Promise<void>;
  /** Deletes this session and clears the cookie. */
  signOut(req: Request, res: Response): Promise<void>;
  /** The account the session of this request belongs to (loaded with the session, no extra query). */
  accountOf(req: Request): AccountSummary | undefined;
  /** When this request's session signed in (ISO); undefined without a session. */
  signedInAtOf(req: Request): string | undefined;
  store: AccountSessionStore;
}

/** Signed cookie values remembered as verified, and renewals remembered as made (each a few hundred kB at most). */
const VERIFIED_MAX = 10_000;

/** What the middleware learned of a request's cookie session. */
interface Held {
  /** The session id the cookie's signature vouched for (whether or not its row is live). */
  sid: string;
  /** The live session: its row's JSON and the account read with it. */
  sess?: SessionData;
  account?: AccountSummary;
}

/**
 * Cookie sessions without express-session: the cookie is `s:<id>.<HMAC>` (cookie-signature, the
 * session secret: the format express-session wrote, so its cookies still load), the session is
 * read by the store's one statement (with the route's declared read on a GET), and the row is
 * written only at sign-in, the daily renewal, a restamp and sign-out.
 */
export function createSessions(o: SessionsOptions): Sessions {
  const held = new WeakMap<Request, Held>();
  /** For a bearer token: the account its statement loaded. */
  const tokenAccounts = new WeakMap<Request, AccountSummary>();
  const store = new AccountSessionStore({
    knex: o.knex,
    clock: o.clock,
    ttlMs: SESSION_TTL_MS,
    maxAgeMs: o.maxAgeMs,
    requestReads: o.requestReads,
    tokens: o.tokenKey ? accessTokenPrincipal : undefined,
    onTouchError: (err) => o.logger?.warn({ err: { message: (err as Error).message } }, 'session lastSeenAt not written'),
  });

  /** Sets the session cookie on `res`, in place of one set earlier in the same answer. */
  const putCookie = (res: Response, value: string, expires: Date) => {
    const line = cookieModule.serialize(SESSION_COOKIE, value, { httpOnly: true, sameSite: 'lax', path: '/', secure: o.cookieSecure, expires });
    const before = res.getHeader('Set-Cookie');
    const others = (Array.isArray(before) ? before : before === undefined ? [] : [String(before)]).filter((c) => !c.startsWith(`${SESSION_COOKIE}=`));
    res.setHeader('Set-Cookie', [...others, line]);
  };
  const sendCookie = (res: Response, sid: string) => putCookie(res, `s:${signature.sign(sid, o.secret)}`, new Date(o.clock.now().getTime() + SESSION_TTL_MS));
  /** The cookie as express-session recorded it in the row (see SessionData.cookie). */
  const cookieRecord = (now: Date): SessionData['cookie'] => ({
    originalMaxAge: SESSION_TTL_MS,
    expires: new Date(now.getTime() + SESSION_TTL_MS).toISOString(),
    secure: o.cookieSecure,
    httpOnly: true,
    path: '/',
    sameSite: 'lax',
  });

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
   * Renewals made by this process, by session id and the renewal they replaced (at most
   * VERIFIED_MAX, the oldest dropped first): requests of one session that read the row before its
   * renewal landed wait for that write instead of making their own.
   */
  const renewals = new Map<string, Promise<void>>();
  /** The daily renewal: the row's expiry pushed out (conditional on the renewal it read, so instances that race write once), the cookie re-sent. */
  const renew = (res: Response, h: Held & { sess: SessionData }): Promise<void> => {
    const key = `${h.sid} ${h.sess.renewedAt}`;
    let written = renewals.get(key);
    if (!written) {
      const now = o.clock.now();
      const sess = { ...h.sess, renewedAt: now.toISOString(), cookie: cookieRecord(now) };
      written = store.renew(h.sid, sess, h.sess.renewedAt).then(() => undefined);
      // A failed write is not remembered: the next request tries again.
      written.catch(() => renewals.delete(key));
      if (renewals.size >= VERIFIED_MAX) renewals.delete(renewals.keys().next().value!);
      renewals.set(key, written);
      h.sess = sess;
    }
    return written.then(() => sendCookie(res, h.sid));
  };

  /**
   * Every request under /api: a bearer token is judged by itself (`byToken`); otherwise the
   * session cookie's signature is checked, and the session, its account and memberships (and on a
   * GET or HEAD the route's declared read, when the kernel serves one for the path) are read by ONE
   * statement. The route gets `req.principal` and the read's value once the session held. Nothing
   * is written but the daily renewal (SESSION_RENEW_AFTER_MS), which re-sends the cookie.
   */
  const authenticate: RequestHandler = (req, res, next) => {
    const bearer = bearerToken(req.headers.authorization);
    if (bearer !== undefined) return byToken(req, res, next, bearer);
    const header = req.headers.cookie;
    if (!header) return next();
    const raw = cookieModule.parse(header)[SESSION_COOKIE];
    // An unsigned value, or one whose signature fails, is no session.
    const sid = raw?.startsWith('s:') ? unsign(raw) : false;
    if (sid === false) return next();
    const h: Held = { sid };
    held.set(req, h);
    store.loadSession(sid, req).then((found) => {
      if (!found?.account) return next();
      h.sess = found.sess;
      h.account = found.account;
      req.principal = { userId: found.account.id, sessionId: sid, memberships: found.memberships };
      if (o.clock.now().getTime() - Date.parse(found.sess.renewedAt ?? '') < SESSION_RENEW_AFTER_MS) return next();
      renew(res, h as Held & { sess: SessionData }).then(() => next(), next);
    }, next);
  };

  const refused = () => new AuthenticationError('unauthenticated', 'The access token is unknown, revoked, expired or malformed');
  /**
   * A request with `Authorization: Bearer`, whatever its method and path under /api: judged by the
   * token alone. A bearer not of the token shape answers 401 without a lookup; otherwise the
   * token's principal is read by the session's one statement in its token form (with the GET's
   * declared read, as for a session) while the token's rate limit is taken, so neither waits for the
   * other. No session is read or made (`current` answers undefined), and routes a token may not
   * reach answer 403 `insufficient_scope` (ApiRouter's scope gate) before their handlers.
   */
  const byToken = (req: Request, res: Response, next: NextFunction, token: string | false) => {
    if (token === false || !o.tokenKey) throw refused();
    const hash = accessTokenHash(o.tokenKey, token);
    const limit = o.tokenLimit;
    const limited = limit?.consume(hash).then(
      (state) => ({ state }),
      (err: unknown) => ({ err }),
    );
    Promise.all([store.loadToken(hash, req), limited]).then(([found, taken]) => {
      if (!found) return next(refused());
      if (limit && taken) {
        if ('err' in taken) return next(taken.err);
        res.setHeader('RateLimit-Policy', limit.policy);
        res.setHeader('RateLimit', taken.state);
      }
      tokenAccounts.set(req, found.account);
      req.principal = { userId: found.account.id, tokenId: found.tokenId, scopes: found.scopes, memberships: found.memberships };
      next();
    }, next);
  };

  const live = (req: Request): (Held & { sess: SessionData }) | undefined => {
    const h = held.get(req);
    return h?.sess ? (h as Held & { sess: SessionData }) : undefined;
  };

  return {
    authenticate: [authenticate],
    store,
    current(req) {
      const h = live(req);
      if (!h) return undefined;
      const { accountId, stamp, method, signedInAt } = h.sess;
      return { id: h.sid, accountId, stamp, method, signedInAt };
    },
    accountOf: (req) => live(req)?.account ?? tokenAccounts.get(req),
    signedInAtOf: (req) => live(req)?.sess.signedInAt,

    async signIn(req, accountId, stamp, method) {
      const h = held.get(req);
      const previous = h?.sess?.accountId === accountId ? h.sess : undefined;
      const now = o.clock.now();
      // A fresh id at every sign-in: a session id planted before sign-in is worth nothing after it,
      // and the session the request carried is deleted by the same statement.
      const sid = o.random(24).toString('base64url');
      const signedInAt = (method ? undefined : previous?.signedInAt) ?? now.toISOString();
      const sess: SessionData = {
        cookie: cookieRecord(now),
        accountId,
        stamp,
        renewedAt: now.toISOString(),
        method: method ?? previous?.method ?? 'password',
        signedInAt,
      };
      try {
        await store.insert({ sid, sess, signedInAt: new Date(signedInAt), userAgent: sessionUserAgent(req), replaces: h?.sid });
      } catch (err) {
        // The session row references its account: a sign-in that lost a race with the account's
        // deletion finds no account, as a sign-in a moment later would.
        if (isPgError(err, PG.foreignKeyViolation)) throw new AuthenticationError('invalid_credentials', 'Wrong e-mail address or password');
        throw err;
      }
      held.set(req, { sid, sess });
      sendCookie(req.res!, sid);
      req.principal = { userId: accountId, sessionId: sid };
    },

    async restamp(req, stamp) {
      const h = live(req);
      if (!h) return;
      const now = o.clock.now();
      h.sess = { ...h.sess, stamp, renewedAt: now.toISOString(), cookie: cookieRecord(now) };
      await store.renew(h.sid, h.sess);
      sendCookie(req.res!, h.sid);
    },

    async signOut(req, res) {
      const h = held.get(req);
      if (h) await store.destroy(h.sid);
      held.delete(req);
      putCookie(res, '', new Date(0));
      delete req.principal;
    },
  };
}
