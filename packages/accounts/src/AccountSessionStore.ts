import { AsyncResource } from 'node:async_hooks';
import type { Clock, Membership } from '@svc/contracts';
import { type PrincipalReader, type PrincipalRow, type ReadingRequest, RequestReads } from '@svc/http-kit';
import type { Knex } from 'knex';
import type { AccountSummary } from './me.js';
import { sameSecret } from './tokens.js';

/** The session table (created by this package's migration). */
export const SESSION_TABLE = 'account_sessions';

/** How a session was signed in. */
export type SignInMethod = 'password' | 'google' | 'apple' | 'passkey';

/**
 * A session row's `sess` JSON (the layout express-session wrote before this module replaced it,
 * kept so sessions live across the change).
 */
export interface SessionData {
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
  /**
   * The cookie as express-session recorded it. Nothing here reads it; it is still written so an
   * instance of the release before this module (express-session, which cannot load a row without
   * it) reads the rows of this one during a rolling deploy.
   */
  cookie?: { originalMaxAge: number; expires: string; secure: boolean; httpOnly: true; path: '/'; sameSite: 'lax' };
}

/** What a sign-in writes besides the JSON: its columns (the User-Agent lives only in its column). */
export interface NewSessionRow {
  sid: string;
  sess: SessionData;
  /** When the person signed in: the row's `created_at` (the absolute lifetime counts from it). */
  signedInAt: Date;
  userAgent: string | null;
  /** The session this request carried, deleted in the same statement (a planted id is worth nothing after a sign-in). */
  replaces?: string;
}

/** What `loadSession` answers: the session's data, and its account when it is signed in (and valid). */
export interface LoadedSessionRow {
  sess: SessionData;
  account?: AccountSummary;
  /** The account's memberships, when the host's kernel loads them with the principal (its `memberships` column). */
  memberships?: Membership[];
}

/** What `loadToken` answers: the token's account, id and scopes. */
export interface LoadedTokenRow {
  tokenId: string;
  scopes: string[];
  account: AccountSummary;
  memberships?: Membership[];
}

/**
 * Who is asking, as the part of the principal statement that finds the credential's row and its
 * account: `join` joins the batch `q` (`q.sid` is the credential: a session id, or a token's keyed
 * hash; `$2` the statement's `now`) to the credential's row and to `accounts a`; `columns` are the
 * credential's own columns, `seen_recently` among them when it keeps a time of last use; `touch`
 * writes that time (in the background, when `seen_recently` is not true).
 */
export interface PrincipalSource {
  /** Names the prepared statements (`[a-z_]`). */
  name: string;
  /** An optional CTE before the statement (`with … `). */
  with?: string;
  columns: string;
  /** Among `columns`, the one holding the session's id, for a principal that is a session (the kernel marks "the session being read" by it). */
  sessionColumn?: string;
  join: string;
  /** Records a use of the credential `id` at `now` (a conditional write: instances that race write once). */
  touch?(knex: Knex, id: string, now: Date): PromiseLike<unknown>;
}

/** A row of the session statement (pg's own snake_case names: it does not go through knex). */
export interface SessionRow {
  sess?: unknown;
  /** A token's row (`loadToken`): its id and scopes. */
  token_id?: string;
  token_scopes?: string[];
  /** True when lastSeenAt is less than LAST_SEEN_GRANULARITY_MS before the statement's `now` (PostgreSQL compares: no Date made per read). */
  seen_recently: boolean | null;
  id: string | null;
  email: string | null;
  email_normalized: string | null;
  display_name: string;
  email_confirmed: boolean;
  has_password: boolean;
  security_stamp: string | null;
}

export interface AccountSessionStoreOptions {
  knex: Knex;
  clock: Clock;
  /** A session lives this long after its last write (decisions.md §3: 30 days). */
  ttlMs: number;
  /**
   * And never longer than this after its sign-in (`created_at`), whatever its use: the statement
   * refuses an older session, and a renewal never pushes the expiry past it. Default 90 days.
   */
  maxAgeMs?: number;
  /**
   * The host's read kernel, which runs this store's principal statements (`RequestReads` of
   * `@svc/http-kit`): with them the principal reads (the caller's memberships, in the `memberships`
   * column) and, on a GET, the route's declared read, which it hands to the route itself. Without
   * it the statements run alone: no memberships (GET /me asks MembershipsProvider), no read.
   */
  requestReads?: RequestReads;
  /**
   * Personal access tokens as a second kind of principal: their part of the statement (see
   * PrincipalSource), used by `loadToken` in place of the session's. Without it `loadToken` finds nothing.
   */
  tokens?: PrincipalSource;
  /** Failures of the background lastSeenAt write (nothing waits for it). */
  onTouchError?(err: unknown): void;
}

/** A session's absolute lifetime when the store is given none (SESSION_MAX_AGE_DAYS' default). */
const DEFAULT_MAX_AGE_MS = 90 * 24 * 3600_000;

/** `last_seen_at` is written at most this often per session. */
export const LAST_SEEN_GRANULARITY_MS = 60_000;

/** A session row's JSON (pg parses a json column; a text one is parsed here). */
function sessionData(row: SessionRow): SessionData {
  return (typeof row.sess === 'string' ? JSON.parse(row.sess) : row.sess) as SessionData;
}

/**
 * A session row's data when it is a signed-in principal: its account is there and its stamp is the
 * account's (else it was deleted, or the stamp rotated since: the session is over).
 */
function signedIn(row: SessionRow): SessionData | undefined {
  const sess = sessionData(row);
  if (!sess.accountId || !row.id || sess.accountId !== row.id || !row.security_stamp || typeof sess.stamp !== 'string') return undefined;
  return sameSecret(sess.stamp, row.security_stamp) ? sess : undefined;
}

/** The account and memberships of a principal's row. */
function loaded(r: PrincipalRow<SessionRow>): { account: AccountSummary; memberships?: Membership[] } {
  return {
    account: {
      id: r.id!,
      email: r.email,
      emailNormalized: r.email_normalized,
      displayName: r.display_name,
      emailConfirmed: r.email_confirmed,
      hasPassword: r.has_password,
    },
    memberships: r.memberships ?? undefined,
  };
}

/**
 * The session table: every read is ONE prepared statement (`loadSession`, `loadToken`), this
 * store's principal lookup run by the host's kernel, that also loads the account, its security
 * stamp and, with the kernel, its memberships and the request's declared read (which the kernel
 * hands to the route, never to this store); a session is refused when the account is gone or its stamp moved on
 * (logout, password change, change of address elsewhere). Writes happen only at sign-in
 * (`insert`), at the daily renewal and a restamp (`renew`), and at sign-out (`destroy`); expiry is
 * written and compared with the injected clock, never the database's or Date.now().
 */
export class AccountSessionStore {
  private readonly o: AccountSessionStoreOptions;
  // lastSeenAt is written outside any request's context (made here, when none is current), so the
  // write never counts toward, or delays, the request that caused it.
  private readonly background = new AsyncResource('session-last-seen');
  private readonly touching = new Set<Promise<void>>();

  /** The session's principal statement, run by the host's read kernel (with the memberships and a GET's declared read). */
  private readonly sessions: PrincipalReader<SessionRow>;
  /** The same, for a personal access token (`options.tokens`): `loadToken`. */
  private readonly tokens?: PrincipalReader<SessionRow>;
  /** Sessions whose lastSeenAt write is under way: later requests of the same session skip theirs. */
  private readonly touchPending = new Set<string>();

  constructor(options: AccountSessionStoreOptions) {
    this.o = options;
    const kernel = options.requestReads ?? new RequestReads({ knex: options.knex, clock: options.clock });
    // `q` holds the batch: the credentials (a session id, or a token's hash), numbered from 1. The
    // credential's own part (`source`) joins its row and the account `a`; the rest of the statement
    // is the same for either. This store judges the rows; the kernel runs the statement.
    const principal = (source: PrincipalSource, accepts: (row: SessionRow) => boolean) =>
      kernel.principal<SessionRow>({
        name: source.name,
        text: `${source.with ?? ''}select q.batch_index::int as batch_index, ${source.columns}, a.id, a.email, a.email_normalized, a.display_name,
              a.email_confirmed, a.password_hash is not null as has_password, a.security_stamp
         from unnest($1::text[]) with ordinality as q(sid, batch_index)
         ${source.join}`,
        accountColumn: 'id',
        sessionColumn: source.sessionColumn,
        accepts,
      });
    const session: PrincipalSource = {
      name: 'session',
      columns: `s.sess, s.sid as session_id, s.last_seen_at > $2::timestamptz - interval '${LAST_SEEN_GRANULARITY_MS} milliseconds' as seen_recently`,
      sessionColumn: 'session_id',
      join: `join ${SESSION_TABLE} s on s.sid = q.sid and s.expire > $2
              -- the absolute lifetime: signed in (a row without the time: last renewed) less than maxAgeMs ago
              and coalesce(s.created_at, s.expire - interval '${Math.trunc(options.ttlMs / 1000)} seconds') > $2::timestamptz - interval '${Math.trunc((options.maxAgeMs ?? DEFAULT_MAX_AGE_MS) / 1000)} seconds'
         left join accounts a on a.id = (s.sess->>'accountId')::uuid`,
    };
    this.sessions = principal(session, (row) => signedIn(row) !== undefined);
    // The same statement with a personal access token in place of the session (one round trip either way).
    this.tokens = options.tokens ? principal(options.tokens, (row) => Boolean(row.id && row.token_id)) : undefined;
  }

  /**
   * The session `sid` with its account (and, when the host's kernel composes them in, the
   * account's memberships) in ONE prepared statement, run once for the sessions asked for in the
   * same turn of the event loop (each gets only its own row); on a GET the same statement loads the
   * route's declared read, which the kernel hands to `req`'s route. Null when there is no such live
   * session, the account is gone, or its stamp moved on. Schedules the lastSeenAt write when one is due.
   */
  async loadSession(sid: string, req?: ReadingRequest): Promise<LoadedSessionRow | null> {
    const row = await this.sessions.load(sid, req);
    if (!row) return null;
    const sess = sessionData(row);
    if (!sess.accountId) return { sess };
    if (!signedIn(row)) return null;
    if (row.seen_recently !== true) this.touchLater(sid);
    return { sess, ...loaded(row) };
  }

  /**
   * The principal of a personal access token (by its keyed hash) in the same ONE statement as a
   * session's, with the same memberships and (on a GET, handed to `req`'s route) declared read: its account, id and scopes; null when
   * no live token has that hash (unknown, revoked, expired, or its account is gone).
   */
  async loadToken(hash: string, req?: ReadingRequest): Promise<LoadedTokenRow | null> {
    if (!this.tokens) return null;
    const row = await this.tokens.load(hash, req);
    if (!row?.id || !row.token_id) return null;
    // lastUsedAt: the token's own conditional write, at most once a minute, as a session's lastSeenAt.
    const touch = this.o.tokens?.touch;
    if (row.seen_recently !== true && touch) {
      const id = row.token_id;
      const now = this.o.clock.now();
      this.inBackground(`t:${id}`, () => touch(this.o.knex, id, now));
    }
    return {
      tokenId: row.token_id,
      scopes: row.token_scopes ?? [],
      ...loaded(row),
    };
  }

  /**
   * Writes lastSeenAt (the statement found the one on record a minute old or more, or none), after the request's read and
   * without the request waiting: an ordinary request stays one read, and a session costs at most
   * one small write a minute. The condition is in the statement, so instances that race write once.
   */
  private touchLater(sid: string): void {
    const now = this.o.clock.now();
    const due = new Date(now.getTime() - LAST_SEEN_GRANULARITY_MS + 1);
    this.inBackground(`s:${sid}`, () =>
      this.o
        .knex(SESSION_TABLE)
        .where({ sid })
        .where((q) => q.whereNull('lastSeenAt').orWhere('lastSeenAt', '<', due))
        .update({ lastSeenAt: now }),
    );
  }

  /**
   * Runs `write` after the request's read and without the request waiting, unless a write for
   * `key` is already under way (requests that read the row before it landed skip theirs).
   */
  private inBackground(key: string, write: () => PromiseLike<unknown>): void {
    if (this.touchPending.has(key)) return;
    this.touchPending.add(key);
    // knex runs a query when it is awaited: that happens on the next turn and inside the background
    // scope, after the request has gone on with its own work.
    const done = this.background.runInAsyncScope(
      () =>
        new Promise<void>((resolve) =>
          setImmediate(() =>
            write().then(
              () => resolve(),
              (err: unknown) => {
                this.o.onTouchError?.(err);
                resolve();
              },
            ),
          ),
        ),
    );
    this.touching.add(done);
    void done.finally(() => {
      this.touching.delete(done);
      this.touchPending.delete(key);
    });
  }

  /** Resolves once every lastSeenAt write started so far has finished (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.touching.size > 0) await Promise.all([...this.touching]);
  }

  private get ttlSeconds(): number {
    return Math.trunc(this.o.ttlMs / 1000);
  }

  private get maxAgeSeconds(): number {
    return Math.trunc((this.o.maxAgeMs ?? DEFAULT_MAX_AGE_MS) / 1000);
  }

  /**
   * A sign-in: the new session's row (expiring `ttlMs` from now), and in the same statement the
   * deletion of the session the request carried (`replaces`). Fails with the foreign key's error
   * when the account is gone (then nothing is written).
   */
  async insert(row: NewSessionRow): Promise<void> {
    const now = this.o.clock.now();
    const expire = new Date(now.getTime() + this.o.ttlMs);
    await this.o.knex.raw(
      `with replaced as (delete from ${SESSION_TABLE} where sid = ?)
       insert into ${SESSION_TABLE} (sid, sess, expire, account_id, created_at, last_seen_at, user_agent, method)
       values (?, ?::json, ?, ?, ?, ?, ?, ?)`,
      [row.replaces ?? null, row.sid, JSON.stringify(row.sess), expire, row.sess.accountId, row.signedInAt, now, row.userAgent, row.sess.method ?? null],
    );
  }

  /**
   * The daily renewal, or a restamp: writes `sess` and pushes the expiry to `ttlMs` from now, never
   * past the absolute lifetime (a row without a sign-in time, written before the column existed,
   * counts from its last renewal and keeps that time from now on). Only updates: a session ended
   * while its request ran stays ended. With `unlessRenewedSince`, only a row whose `renewedAt` is
   * still that one is written, so racing requests (or instances) renew a session once. Answers
   * whether a row was written.
   */
  async renew(sid: string, sess: SessionData, unlessRenewedSince?: string): Promise<boolean> {
    const expire = new Date(this.o.clock.now().getTime() + this.o.ttlMs);
    const ttl = this.ttlSeconds;
    const written = await this.o.knex.raw(
      `update ${SESSION_TABLE} set sess = ?::json,
              expire = least(?::timestamptz, coalesce(created_at, expire - ?::double precision * interval '1 second') + ?::double precision * interval '1 second'),
              created_at = coalesce(created_at, expire - ?::double precision * interval '1 second')
        where sid = ? and (?::text is null or sess->>'renewedAt' is not distinct from ?::text)`,
      [JSON.stringify(sess), expire, ttl, this.maxAgeSeconds, ttl, sid, unlessRenewedSince ?? null, unlessRenewedSince ?? null],
    );
    return (written as { rowCount: number }).rowCount > 0;
  }

  /** Ends the session `sid` (sign-out). */
  async destroy(sid: string): Promise<void> {
    await this.o.knex(SESSION_TABLE).where({ sid }).delete();
  }

  /** Deletes sessions past their expiry. */
  async prune(): Promise<number> {
    return this.o.knex(SESSION_TABLE).where('expire', '<=', this.o.clock.now()).delete();
  }
}
