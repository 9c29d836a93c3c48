import type { Clock } from '@svc/contracts';
import connectPgSimple from 'connect-pg-simple';
import type { Request } from 'express';
import session, { type SessionData } from 'express-session';
import type { Knex } from 'knex';
import type { AccountSummary } from './me.js';
import { sameSecret } from './tokens.js';

const PGStore = connectPgSimple(session);

/** The session table (created by this package's migration, never by the store). */
export const SESSION_TABLE = 'account_sessions';

/** Where `get` leaves the account it loaded, for `createSession` to hand on; symbols stay out of the session's JSON. */
const LOADED = Symbol('account');

interface LoadedSession {
  [LOADED]?: AccountSummary;
}

/**
 * connect-pg-simple speaks to a pg-promise-like object; this one runs its SQL through knex so
 * every session query is counted in Server-Timing like any other. `$n` placeholders become `?`.
 */
function knexAdapter(knex: Knex) {
  return {
    any: async (sql: string, params: unknown[] = []) => {
      const bindings: unknown[] = [];
      const text = sql.replace(/\$(\d+)/g, (_m, n: string) => {
        bindings.push(params[Number(n) - 1]);
        return '?';
      });
      const result = await knex.raw(text, bindings as Knex.RawBinding[]);
      return result.rows as unknown[];
    },
  };
}

/**
 * express-session's Cookie computes its expiry from Date.now() (when made, and again when the
 * header goes out); this makes one cookie compute it from the injected clock instead, so the
 * cookie's Expires and the session row's expiry are on the same clock.
 */
export function cookieOnClock(cookie: session.Cookie, clock: Clock): void {
  type Expiring = { expires?: Date | null };
  Object.defineProperty(cookie, 'maxAge', {
    configurable: true,
    enumerable: false,
    get(this: Expiring) {
      return this.expires instanceof Date ? this.expires.getTime() - clock.now().getTime() : this.expires;
    },
    set(this: Expiring, ms: number | null | undefined) {
      this.expires = typeof ms === 'number' ? new Date(clock.now().getTime() + ms) : ms;
    },
  });
}

export interface AccountSessionStoreOptions {
  knex: Knex;
  clock: Clock;
  /** A session lives this long after its last write (decisions.md §3: 30 days). */
  ttlMs: number;
  /** Receives the account loaded with the session, for the request that asked. */
  onLoaded(req: Request, account: AccountSummary): void;
}

/**
 * connect-pg-simple's store with three changes:
 * - `get` reads the session, its account and the account's security stamp in ONE query, and
 *   refuses the session when the account is gone or the stamp moved on (logout, password change,
 *   change of address elsewhere);
 * - expiry is written and compared with the injected clock, not the database's or Date.now();
 * - `touch` writes nothing: the session is renewed (re-saved) at most once a day, by the
 *   authenticate middleware, so an ordinary request costs no write.
 */
export class AccountSessionStore extends PGStore {
  private readonly o: AccountSessionStoreOptions;
  /** Set by express-session when its middleware is made: a new session (and id) for the request. */
  declare generate: (req: Request) => void;
  /** Requests whose session was read from the table (as opposed to made new for this request). */
  private readonly stored = new WeakSet<Request>();

  constructor(options: AccountSessionStoreOptions) {
    super({ pgPromise: knexAdapter(options.knex), tableName: SESSION_TABLE, createTableIfMissing: false, pruneSessionInterval: false, disableTouch: true });
    this.o = options;
  }

  override get(sid: string, callback: (err: unknown, session?: SessionData | null) => void): void {
    this.readSession(sid).then(
      (sess) => callback(null, sess),
      (err) => callback(err),
    );
  }

  private async readSession(sid: string): Promise<SessionData | null> {
    const result = await this.o.knex.raw(
      `select s.sess, a.id, a.email, a.email_normalized, a.display_name, a.email_confirmed,
              a.password_hash is not null as has_password, a.security_stamp
         from ${SESSION_TABLE} s
         left join accounts a on a.id = (s.sess->>'accountId')::uuid
        where s.sid = ? and s.expire > ?`,
      [sid, this.o.clock.now()],
    );
    const row = result.rows[0] as
      // knex.raw rows keep the database's snake_case names.
        | {
            sess: unknown;
            id: string | null;
            email: string | null;
            email_normalized: string | null;
            display_name: string;
            email_confirmed: boolean;
            has_password: boolean;
            security_stamp: string | null;
          }
        | undefined;
    if (!row) return null;
    const sess = (typeof row.sess === 'string' ? JSON.parse(row.sess) : row.sess) as SessionData & LoadedSession;
    if (!sess.accountId) return sess;
    // Account deleted, or its stamp rotated since this session signed in: the session is over.
    if (!row.id || !row.security_stamp || typeof sess.stamp !== 'string' || !sameSecret(sess.stamp, row.security_stamp)) return null;
    sess[LOADED] = {
      id: row.id,
      email: row.email,
      emailNormalized: row.email_normalized,
      displayName: row.display_name,
      emailConfirmed: row.email_confirmed,
      hasPassword: row.has_password,
    };
    return sess;
  }

  /** express-session builds req.session here, right after `get`: the request learns its account. */
  override createSession(req: Request, sess: SessionData): session.Session & SessionData {
    const loaded = sess as SessionData & LoadedSession;
    const account = loaded[LOADED];
    delete loaded[LOADED];
    if (account) this.o.onLoaded(req, account);
    this.stored.add(req);
    const made = super.createSession(req, sess);
    cookieOnClock(made.cookie, this.o.clock);
    return made;
  }

  /** True when this request's session was read from the table, false when it was made for it. */
  cameFromStore(req: Request): boolean {
    return this.stored.has(req);
  }

  override set(sid: string, sess: SessionData, callback?: (err?: unknown) => void): void {
    const expire = new Date(this.o.clock.now().getTime() + this.o.ttlMs);
    this.o.knex
      .raw(
        `insert into ${SESSION_TABLE} (sid, sess, expire) values (?, ?::json, ?) on conflict (sid) do update set sess = excluded.sess, expire = excluded.expire`,
        [sid, JSON.stringify(sess), expire],
      )
      .then(
        () => callback?.(),
        (err: unknown) => callback?.(err),
      );
  }

  override touch(_sid: string, _sess: SessionData, callback?: () => void): void {
    callback?.();
  }

  /** Deletes sessions past their expiry. */
  async prune(): Promise<number> {
    return this.o.knex(SESSION_TABLE).where('expire', '<=', this.o.clock.now()).delete();
  }
}
