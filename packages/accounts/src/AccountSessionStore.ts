import { AsyncResource } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import type { Clock, Membership } from '@svc/contracts';
import type { DeclaredReadRequest, DeclaredReads } from '@svc/db';
import { PreparedBatch } from '@svc/http-kit';
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

/** What `load` answers: the session's data, and its account when it is signed in (and valid). */
export interface LoadedSessionRow {
  sess: SessionData;
  account?: AccountSummary;
  /** The account's memberships, when the host's kernel loads them with the principal (its `memberships` column). */
  memberships?: Membership[];
  /** The declared read's value (null: none), when one was asked for (`DeclaredReads`). */
  read?: unknown;
}

/** What `loadToken` answers: the token's account, id and scopes. */
export interface LoadedTokenRow {
  tokenId: string;
  scopes: string[];
  account: AccountSummary;
  memberships?: Membership[];
  /** The declared read's value (null: none), when one was asked for. */
  read?: unknown;
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
interface SessionRow {
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
  memberships?: Membership[] | null;
  read_value?: unknown;
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
   * The host's read kernel: every statement of this store is its principal query, composed by the
   * kernel with the principal reads (the caller's memberships, in the `memberships` column) and the
   * declared read a request asks for. The kernel alone knows their tables. Without it the session
   * statement reads no memberships and GET /me asks MembershipsProvider.
   */
  reads?: DeclaredReads;
  /**
   * Personal access tokens as a second kind of principal: their part of the statement (see
   * PrincipalSource), used by `loadToken` in place of the session's. Without it `loadToken` finds nothing.
   */
  tokens?: PrincipalSource;
  /** Failures of the background lastSeenAt write (nothing waits for it). */
  onTouchError?(err: unknown): void;
}

/** The name follows the text: pg refuses one name for two different texts on a connection. */
function statementName(source: string, text: string): string {
  return `accounts_${source}_${createHash('sha256').update(text).digest('hex').slice(0, 16)}`;
}

/** A session's absolute lifetime when the store is given none (SESSION_MAX_AGE_DAYS' default). */
const DEFAULT_MAX_AGE_MS = 90 * 24 * 3600_000;

/** `last_seen_at` is written at most this often per session. */
export const LAST_SEEN_GRANULARITY_MS = 60_000;

/**
 * The session table: every read is ONE prepared statement (`loadSession`, `loadToken`) that also
 * loads the account, its security stamp and, when the host composed them in, its memberships and
 * the request's declared read; a session is refused when the account is gone or its stamp moved on
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

  /**
   * The session statement of every request, built once and named so each connection parses and plans
   * it once, as a batch (PreparedBatch): the sessions asked for in one turn of the event loop are
   * read by one run of it, each request getting only its own row.
   */
  private readonly batch: PreparedBatch<{ sid: string }, SessionRow>;
  /** Each principal's statement alone (by its source's name), as the kernel composes it with a declared read. */
  private readonly principals = new Map<string, { text: string; sessionColumn?: string }>();
  /** One batch per principal source and declared read, made on its first use. */
  private readonly readBatches = new Map<string, PreparedBatch<{ sid: string; read: DeclaredReadRequest }, SessionRow>>();
  /** The same, for a personal access token (`options.tokens`): `loadToken`. */
  private readonly tokenBatch?: PreparedBatch<{ sid: string }, SessionRow>;
  /** Sessions whose lastSeenAt write is under way: later requests of the same session skip theirs. */
  private readonly touchPending = new Set<string>();

  constructor(options: AccountSessionStoreOptions) {
    this.o = options;
    // `q` holds the batch: the credentials (a session id, or a token's hash), numbered from 1. The
    // credential's own part (`source`) joins its row and the account `a`; the rest of the statement
    // is the same for either.
    const statement = (source: PrincipalSource) => {
      const text = `${source.with ?? ''}select q.batch_index::int as batch_index, ${source.columns}, a.id, a.email, a.email_normalized, a.display_name,
              a.email_confirmed, a.password_hash is not null as has_password, a.security_stamp
         from unnest($1::text[]) with ordinality as q(sid, batch_index)
         ${source.join}`;
      this.principals.set(source.name, { text, sessionColumn: source.sessionColumn });
      // The kernel adds the principal reads (the memberships).
      const composed = options.reads?.compose({ text, accountColumn: 'id', sessionColumn: source.sessionColumn }) ?? text;
      const name = statementName(source.name, composed);
      return new PreparedBatch<{ sid: string }, SessionRow>(options.knex, {
        statement: (keys) => ({ name, text: composed, values: [keys.map((k) => k.sid), options.clock.now()] }),
      });
    };
    const session: PrincipalSource = {
      name: 'session',
      columns: `s.sess, s.sid as session_id, s.last_seen_at > $2::timestamptz - interval '${LAST_SEEN_GRANULARITY_MS} milliseconds' as seen_recently`,
      sessionColumn: 'session_id',
      join: `join ${SESSION_TABLE} s on s.sid = q.sid and s.expire > $2
              -- the absolute lifetime: signed in (a row without the time: last renewed) less than maxAgeMs ago
              and coalesce(s.created_at, s.expire - interval '${Math.trunc(options.ttlMs / 1000)} seconds') > $2::timestamptz - interval '${Math.trunc((options.maxAgeMs ?? DEFAULT_MAX_AGE_MS) / 1000)} seconds'
         left join accounts a on a.id = (s.sess->>'accountId')::uuid`,
    };
    this.batch = statement(session);
    // The same statement with a personal access token in place of the session (one round trip either way).
    this.tokenBatch = options.tokens ? statement(options.tokens) : undefined;
  }

  /**
   * The session `sid` with its account (and, when the host's kernel composes them in, the
   * account's memberships and the value of the declared read `read` when asked) in ONE prepared
   * statement, run once for the sessions asked for in the same turn of the event loop (each gets
   * only its own row); null when there is no such live session, the
   * account is gone, or its stamp moved on. Schedules the lastSeenAt write when one is due.
   */
  async loadSession(sid: string, read?: DeclaredReadRequest): Promise<LoadedSessionRow | null> {
    const { row, loaded } = await this.loadPrincipal(this.batch, 'session', sid, read);
    if (!row) return null;
    const sess = (typeof row.sess === 'string' ? JSON.parse(row.sess) : row.sess) as SessionData;
    if (!sess.accountId) return { sess };
    // Account deleted, or its stamp rotated since this session signed in: the session is over.
    if (!row.id || !row.security_stamp || typeof sess.stamp !== 'string' || !sameSecret(sess.stamp, row.security_stamp)) return null;
    if (row.seen_recently !== true) this.touchLater(sid);
    return { sess, ...loaded(row) };
  }

  /**
   * One principal's row (a session's or a token's, by `key`) from the statement that also loads
   * what the request asked for: the declared read `read`, else nothing more; `loaded` answers the
   * account, memberships and loaded value of such a row.
   */
  private async loadPrincipal(batch: PreparedBatch<{ sid: string }, SessionRow>, source: string, key: string, read: DeclaredReadRequest | undefined) {
    const declared = read ? this.readBatch(source, read) : undefined;
    const row = await (declared ? declared.load({ sid: key, read: read! }) : batch.load({ sid: key }));
    const loaded = (r: SessionRow) => ({
      account: {
        id: r.id!,
        email: r.email,
        emailNormalized: r.email_normalized,
        displayName: r.display_name,
        emailConfirmed: r.email_confirmed,
        hasPassword: r.has_password,
      },
      memberships: r.memberships ?? undefined,
      ...(declared ? { read: r.read_value ?? null } : {}),
    });
    return { row, loaded };
  }

  /** The session statement with a declared read, as the kernel composes it (one prepared statement per read). */
  private readBatch(source: string, read: DeclaredReadRequest): PreparedBatch<{ sid: string; read: DeclaredReadRequest }, SessionRow> | undefined {
    const kernel = this.o.reads;
    if (!kernel) return undefined;
    const key = `${source}:${read.read.name}`;
    let batch = this.readBatches.get(key);
    const principal = this.principals.get(source);
    if (!principal) return undefined;
    if (!batch) {
      const text = kernel.compose({ text: principal.text, accountColumn: 'id', sessionColumn: principal.sessionColumn }, read);
      const name = statementName(source, text);
      batch = new PreparedBatch<{ sid: string; read: DeclaredReadRequest }, SessionRow>(this.o.knex, {
        statement: (keys) => ({ name, text, values: [keys.map((k) => k.sid), this.o.clock.now(), ...kernel.values(keys.map((k) => k.read))] }),
      });
      this.readBatches.set(key, batch);
    }
    return batch;
  }

  /**
   * The principal of a personal access token (by its keyed hash) in the same ONE statement as a
   * session's, with the same memberships and declared read: its account, id and scopes; null when
   * no live token has that hash (unknown, revoked, expired, or its account is gone).
   */
  async loadToken(hash: string, read?: DeclaredReadRequest): Promise<LoadedTokenRow | null> {
    if (!this.tokenBatch || !this.o.tokens) return null;
    const { row, loaded } = await this.loadPrincipal(this.tokenBatch, this.o.tokens.name, hash, read);
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
