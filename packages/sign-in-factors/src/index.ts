/**
 * @svc/sign-in-factors: TOTP (RFC 6238) with recovery codes, passkeys (WebAuthn), and the second
 * step of a sign-in. The host builds `new SignInFactorsService({ store: new SignInFactorStore(knex),
 * accounts: <accounts' SignInCompletion>, … })`, hands it to accounts as its `SecondFactorGate`,
 * and mounts `createRouter({ service })`.
 */

export { migrate, migrations, relations } from './migrations.js';
export { PasskeyModel, type PasskeyResponse, TotpModel } from './models/index.js';
export { createRouter, type RouterOptions } from './router.js';
export * from './schemas.js';
export { FactorSecrets, normalizeRecoveryCode } from './secrets.js';
export {
  CHALLENGE_LIFETIME_MS,
  MFA_TOKEN_LIFETIME_MS,
  RECOVERY_CODE_COUNT,
  SignInFactorsService,
  type SignInFactorsServiceOptions,
  type WebAuthnConfig,
} from './service.js';
export { type Db, SignInFactorStore, type SpentSignInToken, type StoredPasskey } from './store.js';
export { matchingStep, newTotpSecret, otpauthUrl, TOTP_PARAMS, totpCode } from './totp.js';
