// biome-ignore-all assist/source/organizeImports: every domain package's entry point has the same sections in the same order (docs/packages.md)
/**
 * @svc/accounts: accounts, sign-up and sign-in with e-mail and password, social sign-in (Google
 * and Apple, browser and app flows, native Apple sign-in), cookie sessions checked against a
 * security stamp, the mail outbox, login lockout, the waitlist.
 *
 * The host (services/api) builds `new ObjectionAccountStore(knex)`, hands `accountDirectory(store,
 * clock)` to households, builds `new AccountService({ store, knex, clock, config, … households'
 * capabilities })` and mounts `createRouter({ service, redis })` with its `authLimiter` and
 * `pages`, and `service.sessions.authenticate` as the session middleware.
 */

// Migrations: the package's tables.
export { jobSources, migrate, migrations, queues } from './migrations.js';

// Models: one per table.
export * from './models/index.js';

// Declared reads (the host's read kernel loads them with the caller) and the fields it lends to other packages' reads.
export { accountNameLink, identitiesRead, type SecondFactorLinks, sessionsRead } from './reads.js';

// The router.
export { type AccountsRouter, createRouter, type Redis, type RouterOptions } from './router.js';

// Schemas and their types.
export {
  AuthProviderResponseSchema,
  DeleteMeBody,
  type ExportedAccount,
  ExportedAccountSchema,
  type LinkedIdentity,
  LinkedIdentitySchema,
  type LoginsResponse,
  LoginsResponseSchema,
  MembershipResponseSchema,
  MeResponseSchema,
  PersonalDataExportSchema,
  ProviderParams,
  SessionIdParams,
  SessionListResponseSchema,
  type SessionResponse,
  SessionResponseSchema,
  UserResponseSchema,
} from './schemas.js';

// The service.
export {
  AccountService,
  type AccountServiceOptions,
  type AccountsConfig,
  type AccountsMetrics,
  type AccountsTuning,
  SESSION_MAX_AGE_DAYS,
  TOKEN_RATE_LIMIT,
  type UnaskedMailLimits,
} from './service.js';

// The store: its interface and its Objection implementation.
export {
  type Account,
  type AccountStore,
  type Db,
  type NewAccount,
  type NewToken,
  ObjectionAccountStore,
  type OutboxMail,
  type TokenQuery,
  type TokenRow,
  type WaitlistEntry,
} from './store.js';

// Also of this package: sessions, access tokens, the person's own operations, social sign-in, passwords, pages.
export { type AccessTokenStore, ObjectionAccessTokenStore } from './AccessTokenStore.js';
export { AccessTokenService } from './access-token-service.js';
export {
  type AccessTokenResponse,
  AccessTokenResponseSchema,
  CreateAccessTokenRequest,
  type CreatedAccessTokenResponse,
  CreatedAccessTokenResponseSchema,
} from './access-tokens.js';
export { type AccountDirectoryWithWaitlist, accountDirectory } from './directory.js';
export { looksLikeAddress, normalizeEmail } from './email.js';
export type { AccountSummary, MeResponse, UserResponse } from './me.js';
export { BCRYPT_NATIVE } from './PasswordHasher.js';
export { PAGE_PATHS } from './pages/index.js';
export { type Caller, type PasswordCheck, type PersonalDataExport, PersonService, type PersonServiceOptions } from './person-service.js';
export { ObjectionPersonStore, type PersonAccount, type PersonStore } from './person-store.js';
export type { CurrentSession, Sessions, SignInMethod } from './sessions.js';
export type { AppleConfig, GoogleConfig } from './social/config.js';
export type { IdentityStore } from './social/IdentityStore.js';
export type { AuthProviderResponse, SocialSignIn, SocialTuning } from './social/SocialSignIn.js';
