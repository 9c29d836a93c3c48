import { singleLine, type TypedSchema } from '@svc/http-kit';

const code = { type: 'string', maxLength: 20, description: 'the 6-digit code the authenticator app shows now' } as const;
const recoveryCode = { type: 'string', maxLength: 40, description: 'one of the recovery codes (single use; case, spaces and dashes ignored)' } as const;
const webauthnJson = {
  type: 'object',
  description: 'a WebAuthn credential in its JSON form (what `PublicKeyCredential.toJSON()` or @simplewebauthn/browser answers)',
  additionalProperties: true,
} as const;

export const TotpEnrolmentSchema = {
  title: 'TotpEnrolment',
  type: 'object',
  required: ['secret', 'otpauthUrl'],
  properties: {
    secret: { type: 'string', description: 'base32 secret (SHA-1, 6 digits, 30 s), for typing into an authenticator app' },
    otpauthUrl: { type: 'string', description: 'otpauth://totp/… URL for a QR code' },
  },
} as const satisfies TypedSchema;

export const TotpConfirmRequest = {
  title: 'TotpConfirmRequest',
  type: 'object',
  required: ['code'],
  properties: { code },
} as const satisfies TypedSchema;

export const RecoveryCodesSchema = {
  title: 'RecoveryCodes',
  type: 'object',
  required: ['recoveryCodes'],
  properties: { recoveryCodes: { type: 'array', items: { type: 'string' }, minItems: 10, maxItems: 10, description: 'shown this once; each works once' } },
} as const satisfies TypedSchema;

export const TotpDisableRequest = {
  title: 'TotpDisableRequest',
  type: 'object',
  properties: {
    code,
    recoveryCode,
    passkey: {
      type: 'object',
      additionalProperties: true,
      description: 'for an account with a passkey: an assertion (JSON form) over a challenge of POST /api/v1/auth/passkey/options',
    },
    password: {
      type: 'string',
      maxLength: 256,
      description: "the account's password: checked when sent, but never enough alone (401 reauthentication_required)",
    },
  },
  description: 'a fresh second factor: code, recoveryCode or passkey (a password alone is refused); each counts toward the login lockout',
} as const satisfies TypedSchema;

export const MfaRequest = {
  title: 'MfaRequest',
  type: 'object',
  required: ['mfaToken'],
  properties: {
    mfaToken: { type: 'string', maxLength: 200, description: 'from the 401 mfa_required answer (five minutes, single use)' },
    code,
    recoveryCode,
  },
  description: 'mfaToken with code or recoveryCode',
} as const satisfies TypedSchema;

export const PasskeySchema = {
  title: 'Passkey',
  type: 'object',
  required: ['id', 'name', 'createdAt', 'lastUsedAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    createdAt: { type: 'string', format: 'date-time' },
    lastUsedAt: { type: ['string', 'null'], format: 'date-time' },
  },
} as const satisfies TypedSchema;

export const PasskeyListSchema = {
  title: 'PasskeyList',
  type: 'object',
  required: ['items'],
  properties: { items: { type: 'array', items: PasskeySchema, description: 'newest first' } },
} as const satisfies TypedSchema;

export const PasskeyRegisterRequest = {
  title: 'PasskeyRegisterRequest',
  type: 'object',
  required: ['name', 'response'],
  properties: {
    name: {
      type: 'string',
      minLength: 1,
      maxLength: 80,
      ...singleLine,
      description: 'a name the person gives it (1–80 characters, one line without control or bidirectional characters)',
    },
    response: { ...webauthnJson, description: 'the registration response (navigator.credentials.create), JSON form' },
  },
} as const satisfies TypedSchema;

export const PasskeySignInRequest = {
  title: 'PasskeySignInRequest',
  type: 'object',
  required: ['response'],
  properties: { response: { ...webauthnJson, description: 'the assertion (navigator.credentials.get), JSON form' } },
} as const satisfies TypedSchema;

export const WebAuthnOptionsSchema = {
  title: 'WebAuthnOptions',
  type: 'object',
  required: ['challenge'],
  additionalProperties: true,
  properties: { challenge: { type: 'string', description: 'base64url; single use, five minutes' } },
  description: 'PublicKeyCredentialCreationOptionsJSON or PublicKeyCredentialRequestOptionsJSON, top-level (not wrapped in publicKey)',
} as const satisfies TypedSchema;

export const PasskeyParams = {
  type: 'object',
  required: ['passkeyId'],
  properties: { passkeyId: { type: 'string', format: 'uuid' } },
} as const satisfies TypedSchema;
