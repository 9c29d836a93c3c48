/**
 * @svc/contracts: the shapes that cross package boundaries, and nothing else (no logic, no
 * dependencies). A domain package states what it needs from another as one of these capability
 * types in its `createRouter` options; `services/api` hands in the real implementation. So no
 * domain package imports another, and the dependency graph keeps pointing one way.
 */

/** The one clock. Production passes the system clock; tests pass a manual one and move it instead of sleeping. */
export interface Clock {
  now(): Date;
}

/** The one source of randomness for tokens and ids; tests may pass a seeded one. */
export type RandomBytes = (size: number) => Buffer;

/** The session cookie's name (the contract names it; clients and the CSRF check rely on it). */
export const SESSION_COOKIE = 'service_session';

export type HouseholdRole = 'Owner' | 'Adult' | 'Junior';

/** Adult-only operations accept the Owner too (the Owner counts as an adult wherever adults may act). */
export const ADULT_ROLES: readonly HouseholdRole[] = ['Owner', 'Adult'];

/** MembershipResponse of the spec. */
export interface Membership {
  householdId: string;
  householdName: string;
  role: HouseholdRole;
  memberId: string | null;
}

/**
 * Who is asking, as the read kernel hands it to the route (http-kit's `Principal` is one): the
 * account and, when the principal's statement loaded them, its memberships.
 */
export interface Caller {
  readonly userId: string;
  /** The caller's memberships as this request's principal statement loaded them (undefined: not loaded). */
  readonly memberships?: readonly Membership[];
}

/** Answers "is this account a member, and as what?"; implemented by @svc/households. */
export interface HouseholdAccess {
  /**
   * The caller's role in the household: from the memberships the caller carries (loaded with the
   * principal, this request), else looked up. Throws NotFoundError (404 `not_found`) when the
   * household does not exist or the caller is not a member: a non-member never learns it exists.
   */
  roleOf(caller: Caller, householdId: string): Promise<HouseholdRole>;
}

/** Lists an account's memberships, for GET /me; implemented by @svc/households. */
export type MembershipsProvider = (userId: string) => Promise<Membership[]>;

/** What other packages may know of accounts; implemented by @svc/accounts. */
export interface AccountDirectory {
  /** Display name and address of each existing account among `ids`. */
  profiles(ids: string[]): Promise<Map<string, { id: string; email: string | null; displayName: string }>>;
  /** Puts the account on the waitlist; false when it already was there. */
  addToWaitlist(entry: { accountId: string; reason: string }): Promise<boolean>;
}

/**
 * Spends one AI turn of a household, or throws 429 (`quota_exceeded`, or paused with an HTTP-date
 * Retry-After); from @svc/households. Given `trx`, the spend is written inside it (and holds the
 * household's ledger lock until it ends), so the caller commits it together with what the turn
 * bought, or rolls it back when that failed.
 */
export type SpendTurn = (householdId: string, trx?: Transaction) => Promise<void>;

/** The household facts other packages plan around; implemented by @svc/households. */
export interface HouseholdProfile {
  id: string;
  /** ISO 3166-1 alpha-2, upper case (`ZZ` when unknown). */
  country: string;
  timeZoneId: string;
  /** BCP 47 tag. */
  preferredLanguage: string;
}

/** Looks a household up (no access check: call HouseholdAccess.roleOf first). Throws NotFoundError when there is none. */
export type HouseholdProfiles = (householdId: string) => Promise<HouseholdProfile>;

/**
 * A database transaction handed across packages (a `Knex.Transaction` at run time). Opaque here so
 * that contracts keeps no dependency; a package casts it to its own knex type.
 */
export interface Transaction {
  readonly isTransaction?: boolean;
}

/**
 * One package's part in deleting an account (a person's right to erasure). The accounts package
 * opens one transaction, calls every step in the order the host lists them, then deletes the
 * account row; a step that throws (e.g. ConflictError `owner_must_transfer`) rolls everything back.
 * A step deletes only its own package's rows (its foreign keys cascade to what hangs off them).
 * Implemented by @svc/households (memberships, and households where the person was the only
 * member) and @svc/push (devices).
 */
export interface AccountDeletionStep {
  /** Refuses, or deletes this package's data of the account, inside `trx`. */
  deleteAccountData(userId: string, trx: Transaction): Promise<void>;
}

/** API-shaped JSON of one record, as the package's own GET would answer it. */
export type ExportRecord = Record<string, unknown>;

/**
 * A page of records already written: `json` is the JSON text of their array (`[]` for none),
 * byte for byte what JSON.stringify writes of the records. The export writes it through as it is,
 * so the host never builds an object per record of the page.
 */
export interface ExportJsonPage {
  /** The JSON text of the page's records, an array. */
  readonly json: string;
}

/**
 * What the packages hold about a person, for the data export (GDPR Art. 15/20). Each part reads
 * only its own package's tables and answers API-shaped JSON; the export streams them so that at
 * most one household's events are held at once.
 */
export interface PersonalDataSources {
  /** @svc/households: a household's settings (HouseholdResponse) and its members (as GET members answers). */
  household(householdId: string): Promise<{ household: ExportRecord; members: ExportRecord[] }>;
  /** @svc/meal-rules: the household's rules (MealRuleResponse). */
  rules(householdId: string): Promise<ExportRecord[]>;
  /** @svc/meal-events: the household's meal events, in list order, yielded page by page. */
  events(householdId: string): AsyncIterable<ExportRecord[]>;
  /**
   * @svc/meal-events: the same pages as `events`, each as its JSON text (ExportJsonPage). When
   * given, the export reads a household's events through it (and not `events`) and writes each
   * page through as it is: no object per event is made.
   */
  eventPages?(householdId: string): AsyncIterable<ExportJsonPage>;
  /** @svc/push: the person's registered devices (as GET /me/devices answers, no more). */
  devices(userId: string): Promise<ExportRecord[]>;
  /** @svc/push: the person's inbox (items as GET /me/notifications answers them, newest first), yielded page by page; none: not exported. */
  notifications?(userId: string): AsyncIterable<ExportRecord[]>;
}

/**
 * The member ids of a household (HouseholdMembers of the spec); from @svc/households. No access
 * check: call HouseholdAccess.roleOf first. Given `trx`, the member rows are read inside it and
 * locked (FOR KEY SHARE) until it ends, so no member the answer lists can be removed before the
 * caller commits what it wrote on the strength of it (a removal waits, then sees that write).
 */
export type HouseholdMemberIds = (householdId: string, trx?: Transaction) => Promise<ReadonlySet<string>>;

/** Why someone stopped being a member of a household. */
export type DepartureReason = 'left' | 'removed' | 'account_deleted';

/** A member who is no longer one (MembershipListener.memberDeparted). */
export interface MemberDeparture {
  householdId: string;
  memberId: string;
  /** The member's account; null for a member without one. */
  userId: string | null;
  /** The role the member held until now. */
  role: HouseholdRole;
  /** `left` (the member themself), `removed` (by the Owner) or `account_deleted` (their account is being deleted). */
  reason: DepartureReason;
  /** When (the households service's clock). */
  at: Date;
}

/** A member whose role changed (MembershipListener.roleChanged); also the two changes of a hand-over. */
export interface MemberRoleChange {
  householdId: string;
  memberId: string;
  userId: string | null;
  from: HouseholdRole;
  to: HouseholdRole;
  at: Date;
}

/** An account being deleted, with every member id it held: in the households it still belongs to and in those it left or was removed from. */
export interface MemberErasure {
  userId: string;
  members: { householdId: string; memberId: string }[];
  at: Date;
}

/**
 * What another package does when a household's membership changes (a member leaves, is removed or
 * deletes their account; a role changes), implemented by @svc/meal-events (participants of its
 * events, the calendar feed) and called by @svc/households inside the transaction that makes the
 * change, after its own rows are written: the change and what follows from it commit together, or
 * neither does. A listener writes only its own package's rows.
 */
export interface MembershipListener {
  /** The member is no longer one (their member row is gone when `trx` commits). */
  memberDeparted(departure: MemberDeparture, trx: Transaction): Promise<void>;
  /** The member's role changed from `from` to `to`. */
  roleChanged(change: MemberRoleChange, trx: Transaction): Promise<void>;
  /**
   * An account is being deleted (after memberDeparted for each household it still belonged to):
   * forget whatever names the person under any of `members` — the person's right to erasure.
   */
  accountErased(erasure: MemberErasure, trx: Transaction): Promise<void>;
}

/**
 * The accounts of a household's members, in no particular order (members without an account are
 * left out); from @svc/households. Given `trx`, read inside it. No access check. @svc/push sends
 * to these people.
 */
export type HouseholdAccountIds = (householdId: string, trx?: Transaction) => Promise<string[]>;

/**
 * A change in a household its members hear about (the `householdNews` push kind). `actorUserId`
 * is the account that made it (it is not told); `subjectUserId`/`subjectName` the member it is
 * about (the name for a member without an account); `role` the new role of a role change.
 */
export interface HouseholdNewsEvent {
  type: 'memberJoined' | 'memberLeft' | 'memberRemoved' | 'roleChanged' | 'ownershipTransferred' | 'householdRenamed';
  householdId: string;
  actorUserId: string;
  subjectUserId?: string | null;
  subjectName?: string | null;
  role?: HouseholdRole;
  /**
   * The news' id (a uuid), when the teller may tell the same news again (a job run twice): told
   * again with the same id, nobody hears it twice. None: a new id.
   */
  id?: string;
}

/**
 * Tells a household's members about a change; from @svc/push, called by @svc/households once per
 * change inside the change's transaction (one INSERT: the news is sent after the commit, never for
 * a change that rolled back). Without `trx` — from a job that runs after the change committed,
 * with the event's `id` — the news is written and on its way when the call returns.
 */
export type HouseholdNews = (event: HouseholdNewsEvent, trx?: Transaction) => Promise<void>;

/**
 * Told, inside the transaction of a PATCH that writes a household's time zone, the zone it has now
 * (from @svc/meal-events: reminders derived from local times in the zone move with it).
 */
export type HouseholdZoneWritten = (householdId: string, timeZoneId: string, now: Date, trx: Transaction) => Promise<void>;

/** How a session was first signed in (GET /me/sessions' `method`); a second step keeps the first factor's. */
export type SignInMethod = 'password' | 'google' | 'apple' | 'passkey';

/** A fresh second factor sent where an operation asks for the password (step-up): a TOTP code, a recovery code, or a passkey assertion. */
export interface StepUpProof {
  code?: string;
  recoveryCode?: string;
  /** A WebAuthn assertion (JSON form) over a challenge of POST /api/v1/auth/passkey/options. */
  passkey?: Record<string, unknown>;
}

/**
 * What @svc/accounts asks of the second factors (implemented by @svc/sign-in-factors): after a
 * right first factor whether a second step is due, what a person has on (GET /me/logins, the last
 * way to sign in), and a step-up proof's verdict.
 */
export interface SecondFactorGate {
  /**
   * Called after a right first factor. Undefined: sign in now. Otherwise the single-use `mfaToken`
   * (five minutes) that `POST /api/v1/auth/mfa` takes with the code; no session is made.
   */
  demand(accountId: string, method: Exclude<SignInMethod, 'passkey'>, options?: { returnUrl?: string }): Promise<string | undefined>;
  /** Whether TOTP is on and how many passkeys the account has (inside `trx` when given). */
  summary(accountId: string, trx?: Transaction): Promise<{ totp: boolean; passkeys: number }>;
  /**
   * Checks a step-up proof: `none` when the proof names no factor the account has on, `wrong`
   * when it did not verify (a wrong code counts toward the lockout), `ok` when it did (a code is
   * spent).
   */
  stepUp(accountId: string, proof: StepUpProof, acceptLanguage?: string): Promise<'ok' | 'wrong' | 'none'>;
  /**
   * The second step from accounts' `/sign-in/verify` page (a browser social sign-in): as POST
   * /api/v1/auth/mfa, signing `req` in; answers where the sign-in was going (its returnUrl). Throws
   * what that operation answers (400 `invalid_code`, 401 `invalid_credentials`, 423).
   */
  finish(req: unknown, body: { mfaToken: string; code?: string; recoveryCode?: string }): Promise<{ returnUrl: string | null }>;
  /**
   * A password reset happened (inside `trx`): the count of wrong TOTP codes starts again, so codes
   * blocked by the cap of wrong codes in a row work again.
   */
  resetCodeFailures?(accountId: string, trx?: Transaction): Promise<void>;
}

/** A change of a person's sign-in factors, mailed to them as a notice. */
export type SignInFactorNotice = 'totp_enabled' | 'totp_disabled' | 'recovery_code_used' | 'passkey_added' | 'passkey_removed' | 'totp_codes_blocked';

/**
 * What @svc/sign-in-factors needs from @svc/accounts (wired by the host): finishing a sign-in, the
 * login lockout, the account's name, its password check, and the notice mail.
 */
export interface SignInCompletion<Req = unknown> {
  /** Signs the account in on `req` (a new session id and cookie, `method` recorded); answers what a login answers (GET /me's body). */
  complete(req: Req, accountId: string, method: SignInMethod): Promise<unknown>;
  /**
   * Runs a second-factor check under the login lockout of the account (the same count as its
   * passwords, shared by every instance): throws 423 `account_locked` while locked; a failed
   * check keeps its failure counted; a passed one resets the count.
   */
  underLockout(accountId: string, check: () => Promise<boolean>): Promise<boolean>;
  /**
   * The account's address and display name, and how many ways to sign in it has besides passkeys
   * (a password with an address, each linked identity); undefined: gone. With `trx` the account
   * row is locked in it (FOR UPDATE), so a removal of a way to sign in is ordered with accounts'
   * own (unlinking a provider locks the same row).
   */
  profile(accountId: string, trx?: Transaction): Promise<{ email: string | null; displayName: string; otherSignInMethods: number } | undefined>;
  /** The account's password, checked like a login's (lockout included; 423 while locked). */
  checkPassword(accountId: string, password: string): Promise<boolean>;
  /**
   * Writes the notice mail to the account's holder in `trx` (nothing when the account has no
   * address), in the language the request's `Accept-Language` prefers (Norwegian Bokmål or English).
   */
  notify(accountId: string, notice: SignInFactorNotice, trx: Transaction, acceptLanguage?: string): Promise<void>;
}

/**
 * The accounts of a household's members by member id (members without an account are left out);
 * from @svc/households. No access check. @svc/meal-events finds whom an event's reminder is for.
 */
export type HouseholdMemberAccounts = (householdId: string) => Promise<ReadonlyMap<string, string>>;

/** A meal event's reminder, due now, for the accounts in `userIds` (decisions.md §8 "Push delivery"). */
export interface MealReminder {
  /** The notification's id, the same for every run of one reminder (a rerun sends nothing twice). */
  id: string;
  householdId: string;
  eventId: string;
  /** The event's date (YYYY-MM-DD) and serving time (HH:mm) in the household's zone. */
  date: string;
  servingTime: string;
  eventType: string;
  /** How long before the serving time the reminder comes. */
  minutes: number;
  /** The people reminded; those who are no longer members with an account are left out by the sender. */
  userIds: string[];
  /** When the reminder was due. */
  at: Date;
}

/**
 * Sends a meal event's reminder (the `reminders` push kind): its inbox items and deliveries to the
 * phones that want reminders, quiet hours or not; from @svc/push, called by @svc/meal-events' reminder job.
 */
export type SendReminder = (reminder: MealReminder) => Promise<void>;

/** The kinds of resource a household's changes feed reports (@svc/changes). */
export type ChangeResource = 'household' | 'member' | 'rule' | 'event' | 'dish' | 'plan';

/**
 * A table whose rows are one kind of resource of the changes feed, declared by the package that
 * owns the table (next to its models). @svc/changes turns each declaration into statement-level
 * triggers, so every write of those rows (the service, a cascade, a script) is recorded in the
 * writing transaction itself; the declaring package writes no SQL of the feed's.
 */
export interface ChangeSource {
  resource: ChangeResource;
  /** The model whose table holds the rows (its `tableName`), as a declared read names it. */
  model: { readonly tableName: string };
  /** The property of its uuid primary key (default `id`). */
  id?: string;
  /** The property holding the household's id (`householdId`; `id` for the households table itself). */
  household: string;
}

/** The meal categories of the contract (`MealCategory`). */
export type MealCategory = 'Fish' | 'Meat' | 'Poultry' | 'Vegetarian' | 'Vegan' | 'Soup' | 'Pasta' | 'Taco' | 'Leftovers' | 'Other';

/** A dish's price class. */
export type PriceClass = 'Cheap' | 'Mid' | 'Expensive';

/** Where a dish the planner may choose comes from: the household's own dishes or the starter library. */
export type DishOrigin = 'own' | 'starter';

/** The languages the starter library is written in. */
export type StarterLanguage = 'en' | 'nb';

/** A dish as the planner sees it (own or starter); `madeAgain` is false for every starter dish. */
export interface PlannableDish {
  id: string;
  origin: DishOrigin;
  name: string;
  category: MealCategory;
  activeMinutes: number;
  priceClass: PriceClass;
  madeAgain: boolean;
}

/**
 * What the dishes package offers the planner: the candidates of a household, and one dish by its
 * reference (for a day set by hand). Offered by `@svc/dishes`, used by `@svc/planner`.
 */
export interface DishCatalog {
  /** Every own dish of the household (at most 2,000), ordered by id. */
  ownDishes(householdId: string, trx?: Transaction): Promise<PlannableDish[]>;
  /** The whole starter library in one language, ordered by id (the same ids, categories, minutes and price classes in each). */
  starterDishes(language: StarterLanguage): readonly PlannableDish[];
  /** One dish: an own dish of that household, or a starter dish in that language; undefined when there is none. */
  find(householdId: string, ref: { id: string; origin: DishOrigin }, language: StarterLanguage, trx?: Transaction): Promise<PlannableDish | undefined>;
}

/** One dinner of a household's current plans, as the calendar feed shows it. */
export interface PlannedDinner {
  /** The plan it belongs to. */
  planId: string;
  /** YYYY-MM-DD, in the household's zone. */
  date: string;
  /** HH:mm, in the household's zone. */
  servingTime: string;
  /** The dish's name (the plan's snapshot). */
  dishName: string;
}

/**
 * What the planner offers the calendar feed: the dinners of the household's current plans, and a
 * version that changes whenever they change (so a cached feed can be revalidated cheaply).
 * Offered by `@svc/planner`, used by `@svc/meal-events`.
 */
export interface PlannedDinners {
  version(householdId: string): Promise<string>;
  dinners(householdId: string): Promise<PlannedDinner[]>;
}

/** A weekday as meal rules name it. */
export type Weekday = 'Sunday' | 'Monday' | 'Tuesday' | 'Wednesday' | 'Thursday' | 'Friday' | 'Saturday';

/** A household rule as the planner reads it (MealRuleResponse, only what planning needs). */
export interface PlanningRule {
  id: string;
  strength: 'Hard' | 'Soft';
  scope: 'Permanent' | 'DateRange' | 'SpecificDate';
  /** YYYY-MM-DD, or null when Permanent. */
  startDate: string | null;
  endDate: string | null;
  /** ISO date-time. */
  updatedAt: string;
  payload:
    | { kind: 'CategoryFrequency'; category: string; minimumPerWeek: number; maximumPerWeek: number }
    | { kind: 'CategoryExcludedDays'; category: string; excludedWeekdays: Weekday[] }
    | { kind: 'CategoryOnDay'; category: string; weekday: Weekday | null; specificDate: string | null }
    | { kind: 'MaximumActiveCookingTime'; minutes: number; weekdays: Weekday[]; specificDate: string | null }
    | { kind: 'DinnerTimeOnWeekday'; time: string; weekdays: Weekday[] }
    | { kind: 'PriceClassOnDays'; ceiling: 'Cheap' | 'CheapOrMid'; weekdays: Weekday[] }
    | { kind: 'RepeatAfterDays'; days: number };
}

/** Every rule of a household (no access check); from @svc/meal-rules, used by @svc/planner. */
export type PlanningRules = (householdId: string) => Promise<PlanningRule[]>;

/** A meal event as the planner reads it (MealEventResponse, only what planning needs). */
export interface PlanningEvent {
  id: string;
  /** YYYY-MM-DD. */
  date: string;
  eventType: 'Guests' | 'EatingOut' | 'Away' | 'Activity';
  /** HH:mm, or null. */
  servingTime: string | null;
  /** 0 or null: no cap. */
  availableCookingMinutes: number | null;
  participants: { memberId: string | null }[];
}

/**
 * A household's events dated `from`..`to` inclusive (YYYY-MM-DD), occurrences of series included
 * (no access check); from @svc/meal-events, used by @svc/planner.
 */
export type PlanningEvents = (householdId: string, from: string, to: string) => Promise<PlanningEvent[]>;

/** What the planner reads of a household: its members and the settings a plan depends on. */
export interface PlanningHousehold {
  timeZoneId: string;
  /** HH:mm. */
  defaultDinnerTime: string;
  /** BCP 47. */
  preferredLanguage: string;
  useStarterLibrary: boolean;
  preferOwnRecipes: boolean;
  maxNewDishesPerWeek: number;
  alwaysNewDishes: boolean;
  madeAgainLift: boolean;
  /** Every member's id (with an account or not). */
  memberIds: string[];
}

/** A household's planning facts (no access check); throws NotFoundError when there is none. From @svc/households, used by @svc/planner. */
export type PlanningHouseholds = (householdId: string) => Promise<PlanningHousehold>;

/** A plan run that ended, told to the household's members (the `runDone` push kind). */
export interface PlanRunEnded {
  planId: string;
  householdId: string;
  status: 'done' | 'infeasible' | 'failed';
}

/**
 * Tells every member with an account of a household that a plan run ended (`runDone`, with `data`
 * `{ planId, householdId, status }`); from @svc/push, called by @svc/planner inside the run's final
 * transaction (the notification commits with the result, or not at all). Told twice for one plan
 * (a run done again), it is stored and sent once.
 */
export type TellRunDone = (ended: PlanRunEnded, trx?: Transaction) => Promise<void>;
