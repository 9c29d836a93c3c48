// biome-ignore-all assist/source/organizeImports: every domain package's entry point has the same sections in the same order (docs/packages.md)
/**
 * @svc/sign-in-factors: TOTP (RFC 6238) with recovery codes, passkeys (WebAuthn), and the second
 * step of a sign-in. The host builds `new SignInFactorsService({ store: new SignInFactorStore(knex),
 * accounts: <accounts' SignInCompletion>, … })`, hands it to accounts as its `SecondFactorGate`,
 * and mounts `createRouter({ service })`.
 */

// Migrations: the package's tables (and its relations to other packages' tables).
export { migrate, migrations, queues, relations, schedulePrune } from './migrations.js';

// Models: one per table.
export { PasskeyModel, type PasskeyResponse, TotpModel } from './models/index.js';

// Declared reads: the fields it lends to other packages' reads (the host hands them to accounts).
export { secondFactorLinks } from './reads.js';

// The router.
export { createRouter, type RouterOptions } from './router.js';

// Schemas and their types.
export * from './schemas.js';

// The service.
export { SignInFactorsService, type SignInFactorsServiceOptions, type WebAuthnConfig } from './service.js';

// The store.
export { type Db, SignInFactorStore, type SpentSignInToken, type StoredPasskey } from './store.js';

// Also of this package: the factors' secrets and TOTP.
export { FactorSecrets } from './secrets.js';
export { otpauthUrl, totpCode } from './totp.js';
