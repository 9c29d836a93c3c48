/**
 * Reads of this package's own tables that the session statement loads in the same round trip (GET
 * /me/sessions: the caller's sessions, with the statement's session id and clock). Internal to
 * @svc/accounts: the reads of other packages are declared reads, composed by the host's kernel
 * (`@svc/db/kernel`); these stay here because they name the session being read itself.
 */
/**
 * One such read: when a GET (or HEAD) path matches `path`, the session loader adds
 * `select(accountId, id, known, arg, session)` to its one statement as one more column, and the
 * route finds the value with `Sessions.ownReadOf(req, name)` (explicitly, by the request) instead
 * of asking the database again. `scope` `account` (the caller's own data) is the only kind in use;
 * `household` reads are unguarded here and lend nothing (household reads are declared reads).
 */
export interface OwnRead {
  /** Names the statement variant and the value: unique among read-aheads, `[a-z_]+`. */
  name: string;
  /**
   * The operation's path, OpenAPI style: `/api/v1/households/{householdId}` (household, one
   * parameter), `/api/v1/households/{householdId}/events/{eventId}` (household and `arg`),
   * `/api/v1/me/devices/{token}` (account: `arg` only), `/api/v1/me/devices` (account, none).
   */
  path: string;
  /** `household` (default) or `account`: see above. */
  scope?: 'household' | 'account';
  /**
   * What `arg` must be for the read to be lent: `uuid` (the default: checked, then lower-cased;
   * any other value lends nothing and the package reads as it would without it) or `text` (the
   * parameter as the router decodes it, at most READ_AHEAD_ARG_MAX characters, no NUL).
   */
  argFormat?: 'uuid' | 'text';
  /**
   * A scalar subquery of type `json` for the account whose id is the SQL expression `accountId` (a
   * column of the caller's statement), the household whose id is the SQL expression `id` (of
   * type uuid: a placeholder or a column of the caller's statement, bound to the path's household
   * parameter, lower-cased, and only ever a uuid; null for an account read) and the path's other
   * parameter `arg` (type text, null when the path has none): the value the package's own read
   * would answer, or null when there is none; the package then reads as it would without it.
   * `known` is the SQL expression (type text) of what `known(id)` said this instance already holds,
   * null when it holds nothing or the read-ahead has no `known`. The expressions name the caller's
   * tables (`a.id`, `q.rid`): the subquery's own tables need aliases of their own (not `a`, `s`,
   * `q`), else they hide the caller's and `accountId` means the subquery's own row. `session`
   * holds the SQL expressions of the caller's session id and of the statement's clock (an account
   * read that marks the caller's own session, or leaves out what has expired by the injected clock).
   * The value may also be `text`: an answer's own JSON text, which the request sends as it comes.
   */
  select(accountId: string, id: string, known: string, arg: string, session: OwnReadSession): string;
  /**
   * What this instance already holds for the household `id` (a version of the package's own, say),
   * asked just before the session statement runs and bound as `select`'s `known`: the read can then
   * answer "unchanged" instead of the whole value, so PostgreSQL builds and sends the value only
   * when the instance does not have it. Undefined: nothing held. Household reads only.
   */
  known?(id: string): string | undefined;
}

/** What a OwnRead's `select` may name of the session being read: SQL expressions of the caller's statement. */
export interface OwnReadSession {
  /** The session id (type text). */
  sid: string;
  /** The clock the statement reads sessions by (type timestamptz): the service's injected clock, not PostgreSQL's. */
  now: string;
}

/** The longest `text` argument a read-ahead is lent for (a longer one is read as without a read-ahead). */
export const READ_AHEAD_ARG_MAX = 4096;

/**
 * The key under which a read-ahead's value is kept: the path's
 * parameters as the session loader bound them — a household id and an `arg` of format `uuid`
 * lower-cased — joined by `/`. `readAheadKey(householdId)`, `readAheadKey(householdId, eventId)`,
 * `readAheadKey(undefined, token)` for an account read, `readAheadKey(undefined)` for one
 * without a parameter.
 */
export function readAheadKey(householdId: string | undefined, arg?: string): string {
  return householdId === undefined ? `/${arg ?? ''}` : arg === undefined ? householdId : `${householdId}/${arg}`;
}
