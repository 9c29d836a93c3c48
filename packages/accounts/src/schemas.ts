import { type Infer, singleLine, type TypedSchema } from '@svc/http-kit';

/** decisions.md §2: the longest accepted values (longer: 400 value_too_long). */
export const MAX = { email: 254, password: 256, displayName: 80, token: 200 } as const;

const email = { type: 'string', maxLength: MAX.email } as const;
const password = { type: 'string', maxLength: MAX.password } as const;
const token = { type: 'string', maxLength: MAX.token } as const;
const uuid = { type: 'string', format: 'uuid' } as const;

export const UserResponseSchema = {
  title: 'UserResponse',
  type: 'object',
  required: ['id', 'email', 'displayName'],
  properties: { id: uuid, email: { type: ['string', 'null'] }, displayName: { type: 'string' } },
} as const satisfies TypedSchema;

export const MembershipResponseSchema = {
  title: 'MembershipResponse',
  type: 'object',
  required: ['householdId', 'householdName', 'role', 'memberId'],
  properties: {
    householdId: uuid,
    householdName: { type: 'string' },
    role: { type: 'string', enum: ['Owner', 'Adult', 'Junior'] },
    memberId: { type: ['string', 'null'], format: 'uuid' },
  },
} as const satisfies TypedSchema;

export const MeResponseSchema = {
  title: 'MeResponse',
  type: 'object',
  required: ['user', 'memberships', 'isPlatformAdmin', 'emailConfirmed', 'hasPassword', 'serverNow'],
  properties: {
    user: UserResponseSchema,
    memberships: { type: 'array', items: MembershipResponseSchema },
    isPlatformAdmin: { type: 'boolean', description: 'the account is listed in PLATFORM_ADMIN_EMAILS and its address is confirmed' },
    emailConfirmed: { type: 'boolean' },
    hasPassword: { type: 'boolean', description: 'false for an account made by social sign-in that never set a password' },
    serverNow: { type: 'string', format: 'date-time', description: 'the server clock, ISO 8601 UTC with milliseconds' },
  },
} as const satisfies TypedSchema;

export const EmptyResponseSchema = {
  title: 'EmptyResponse',
  type: 'object',
  additionalProperties: false,
  description: 'always {}',
} as const satisfies TypedSchema;

export const UpdateMeRequest = {
  type: 'object',
  required: ['displayName'],
  properties: {
    displayName: {
      type: 'string',
      maxLength: MAX.displayName,
      ...singleLine,
      description:
        '1 to 80 characters after trimming (else 400 account_name_length); one line without control characters or bidirectional controls (else 400 validation_failed)',
    },
  },
} as const satisfies TypedSchema;
export type UpdateMeBody = Infer<typeof UpdateMeRequest>;

export const ChangePasswordRequest = {
  type: 'object',
  required: ['currentPassword', 'newPassword'],
  properties: {
    currentPassword: { type: ['string', 'null'], maxLength: MAX.password, description: 'required (non-null) when the account has a password' },
    newPassword: { ...password, description: '8 to 256 characters, not seen in a breach' },
    code: { type: 'string', maxLength: 20, description: 'with TOTP on (required then, or recoveryCode or passkey): the code the authenticator app shows now' },
    recoveryCode: { type: 'string', maxLength: 40, description: 'with TOTP on: an unused recovery code (spent)' },
    passkey: {
      type: 'object',
      additionalProperties: true,
      description: 'with TOTP on, for an account with a passkey: an assertion (JSON form) over a challenge of POST /api/v1/auth/passkey/options',
    },
  },
} as const satisfies TypedSchema;
export type ChangePasswordBody = Infer<typeof ChangePasswordRequest>;

export const ChangeEmailRequest = {
  type: 'object',
  required: ['newEmail'],
  properties: {
    newEmail: email,
    code: { type: 'string', maxLength: 20, description: 'with TOTP on (required then, or recoveryCode or passkey): the code the authenticator app shows now' },
    recoveryCode: { type: 'string', maxLength: 40, description: 'with TOTP on: an unused recovery code (spent)' },
    passkey: {
      type: 'object',
      additionalProperties: true,
      description: 'with a passkey: an assertion (JSON form) over a challenge of POST /api/v1/auth/passkey/options',
    },
  },
} as const satisfies TypedSchema;
export type ChangeEmailBody = Infer<typeof ChangeEmailRequest>;

export const RegisterRequest = {
  type: 'object',
  examples: [{ email: 'ada@example.com', password: 'correct horse battery staple', displayName: 'Ada Lovelace' }],
  required: ['email', 'password', 'displayName'],
  properties: {
    email,
    password: { ...password, description: '8 to 256 characters, not seen in a breach' },
    displayName: {
      type: 'string',
      maxLength: MAX.displayName,
      ...singleLine,
      description: '1 to 80 characters after trimming; one line without control characters or bidirectional controls (else 400 validation_failed)',
    },
  },
} as const satisfies TypedSchema;
export type RegisterBody = Infer<typeof RegisterRequest>;

export const LoginRequest = {
  type: 'object',
  required: ['email', 'password'],
  properties: { email, password },
  examples: [{ email: 'ada@example.com', password: 'correct horse battery staple' }],
} as const satisfies TypedSchema;
export type LoginBody = Infer<typeof LoginRequest>;

export const ConfirmEmailRequest = { type: 'object', required: ['userId', 'token'], properties: { userId: uuid, token } } as const satisfies TypedSchema;
export type ConfirmEmailBody = Infer<typeof ConfirmEmailRequest>;

export const ConfirmEmailChangeRequest = {
  type: 'object',
  required: ['userId', 'newEmail', 'token'],
  properties: { userId: uuid, newEmail: email, token },
} as const satisfies TypedSchema;
export type ConfirmEmailChangeBody = Infer<typeof ConfirmEmailChangeRequest>;

export const ForgotPasswordRequest = { type: 'object', required: ['email'], properties: { email } } as const satisfies TypedSchema;
export type ForgotPasswordBody = Infer<typeof ForgotPasswordRequest>;

export const ResetPasswordRequest = {
  type: 'object',
  required: ['email', 'token', 'newPassword'],
  properties: { email, token, newPassword: { ...password, description: '8 to 256 characters, not seen in a breach' } },
} as const satisfies TypedSchema;
export type ResetPasswordBody = Infer<typeof ResetPasswordRequest>;

// ---- Social sign-in (service-spec Account rules 11–14, decisions.md §4) ----

export const AuthProviderResponseSchema = {
  title: 'AuthProviderResponse',
  type: 'object',
  required: ['scheme', 'displayName'],
  properties: {
    scheme: { type: 'string', enum: ['Google', 'Apple'], description: 'the value for GET /api/v1/auth/challenge/{provider} (matched case-insensitively)' },
    displayName: { type: 'string' },
  },
} as const satisfies TypedSchema;

/** Longest returnUrl / redirectUri (decisions.md §2 lets the project document its own limits). */
const url = { type: 'string', maxLength: 2048 } as const;

export const ChallengeParams = {
  type: 'object',
  required: ['provider'],
  properties: { provider: { type: 'string', description: 'Google or Apple, any case' } },
} as const satisfies TypedSchema;

export const ChallengeQuery = {
  type: 'object',
  properties: {
    returnUrl: {
      ...url,
      description:
        'browser flow: a path on this site (/…; not //…, no scheme, no backslash, also once decoded) where the sign-in lands; else 400 validation_failed',
    },
    redirectUri: {
      ...url,
      description: 'app flow: exactly one of APP_REDIRECT_URIS (else 400 validation_failed); needs codeChallenge (else 400 app_signin_incomplete)',
    },
    codeChallenge: {
      type: 'string',
      maxLength: 200,
      description: 'app flow: PKCE S256 challenge, 43 base64url characters (else 400 validation_failed); needs redirectUri (else 400 app_signin_incomplete)',
    },
  },
} as const satisfies TypedSchema;
export type ChallengeQueryInput = Infer<typeof ChallengeQuery>;

export const ExternalCallbackQuery = {
  type: 'object',
  properties: { returnUrl: { ...url, description: 'used only when the challenge named none; must be site-relative, else the sign-in lands on /login' } },
} as const satisfies TypedSchema;
export type ExternalCallbackQueryInput = Infer<typeof ExternalCallbackQuery>;

export const GoogleCallbackQuery = {
  type: 'object',
  properties: {
    code: { type: 'string', maxLength: 2048 },
    state: { type: 'string', maxLength: 200 },
    error: { type: 'string', maxLength: 200 },
  },
} as const satisfies TypedSchema;

export const AppleCallbackForm = {
  type: 'object',
  properties: {
    code: { type: 'string', maxLength: 2048 },
    state: { type: 'string', maxLength: 200 },
    error: { type: 'string', maxLength: 200 },
    id_token: { type: 'string', maxLength: 8192, description: 'ignored: the id_token is taken from the token endpoint' },
    user: { type: 'string', maxLength: 4096, description: 'first sign-in only: the name the person gave Apple (JSON)' },
  },
} as const satisfies TypedSchema;

export const ExchangeAuthCodeRequest = {
  type: 'object',
  required: ['code', 'codeVerifier'],
  properties: {
    code: { type: 'string', maxLength: 200, description: 'the code the app flow delivered to the app (?code=)' },
    codeVerifier: { type: 'string', maxLength: 200, description: 'the PKCE verifier whose S256 challenge went to the challenge operation' },
  },
} as const satisfies TypedSchema;
export type ExchangeBody = Infer<typeof ExchangeAuthCodeRequest>;

export const IdpNativeSignInRequest = {
  type: 'object',
  required: ['identityToken'],
  properties: {
    identityToken: { type: 'string', maxLength: 8192, description: 'the identity token (JWT) Sign in with Apple gave the app' },
    rawNonce: { type: ['string', 'null'], maxLength: 512, description: 'required when the token carries a nonce: the value whose SHA-256 hex is that nonce' },
    givenName: {
      type: ['string', 'null'],
      maxLength: 200,
      ...singleLine,
      description: "for a new account's display name (Apple gives names only at the first sign-in)",
    },
    familyName: { type: ['string', 'null'], maxLength: 200, ...singleLine },
    email: {
      type: ['string', 'null'],
      maxLength: MAX.email,
      description: "never used to find or link an account (only the token's address counts); a display-name fallback only",
    },
  },
} as const satisfies TypedSchema;
export type IdpNativeBody = Infer<typeof IdpNativeSignInRequest>;

// ---------------------------------------------------------------------------------------------
// A person's own account: sessions, sign-in methods, the data export, deleting the account.
// Written `as const satisfies TypedSchema`: the same literal validates, documents and types.

export const SIGN_IN_METHODS = ['password', 'google', 'apple', 'passkey'] as const;
export const LINKED_PROVIDERS = ['google', 'apple'] as const;

/** One signed-in session of the caller (GET /me/sessions). `id` is a handle, never the session id. */
export const SessionResponseSchema = {
  title: 'SessionResponse',
  type: 'object',
  required: ['id', 'createdAt', 'lastSeenAt', 'userAgent', 'method', 'current'],
  properties: {
    id: { type: 'string', format: 'uuid', description: 'a handle for this session (not the session id, not the cookie value)' },
    createdAt: { type: 'string', format: 'date-time', description: 'when the person signed in' },
    lastSeenAt: { type: 'string', format: 'date-time', description: 'the last request on this session, to the minute' },
    userAgent: { type: ['string', 'null'], description: 'User-Agent at sign-in, trimmed, at most 256 characters' },
    method: { type: 'string', enum: SIGN_IN_METHODS },
    current: { type: 'boolean', description: 'the session of this request' },
  },
} as const satisfies TypedSchema;
export type SessionResponse = Infer<typeof SessionResponseSchema>;

export const SessionListResponseSchema = {
  title: 'SessionListResponse',
  type: 'object',
  required: ['items'],
  properties: { items: { type: 'array', items: SessionResponseSchema, description: 'newest sign-in first' } },
} as const satisfies TypedSchema;

export const SessionIdParams = {
  type: 'object',
  required: ['sessionId'],
  properties: { sessionId: { type: 'string', format: 'uuid', description: 'the `id` of GET /me/sessions' } },
} as const satisfies TypedSchema;

/** A Google or Apple identity linked to the caller (GET /me/logins). */
export const LinkedIdentitySchema = {
  title: 'LinkedIdentityResponse',
  type: 'object',
  required: ['provider', 'email', 'linkedAt'],
  properties: {
    provider: { type: 'string', enum: LINKED_PROVIDERS },
    email: { type: ['string', 'null'], description: 'the address the provider gave when the identity was linked' },
    linkedAt: { type: 'string', format: 'date-time' },
  },
} as const satisfies TypedSchema;
export type LinkedIdentity = Infer<typeof LinkedIdentitySchema>;

export const LoginsResponseSchema = {
  title: 'LoginsResponse',
  type: 'object',
  required: ['hasPassword', 'identities'],
  properties: {
    hasPassword: { type: 'boolean' },
    identities: { type: 'array', items: LinkedIdentitySchema, description: 'oldest link first' },
    totp: { type: 'boolean', description: 'TOTP is on (a second step after a password or a social sign-in)' },
    passkeys: { type: 'integer', minimum: 0, description: 'how many passkeys the account has' },
  },
} as const satisfies TypedSchema;
export type LoginsResponse = Infer<typeof LoginsResponseSchema>;

export const ProviderParams = {
  type: 'object',
  required: ['provider'],
  properties: { provider: { type: 'string', maxLength: 200, description: '`google` or `apple`, any case' } },
} as const satisfies TypedSchema;

export const DeleteMeBody = {
  title: 'DeleteMeRequest',
  type: 'object',
  properties: {
    password: {
      type: 'string',
      maxLength: MAX.password,
      description:
        "the account's password (required when it has one, unless a second factor is sent; counts toward the login lockout). Without a password: a sign-in within the last 10 minutes, or a second factor",
    },
    code: { type: 'string', maxLength: 20, description: 'step-up with TOTP on: the code the authenticator app shows now (counts toward the login lockout)' },
    recoveryCode: { type: 'string', maxLength: 40, description: 'step-up with TOTP on: an unused recovery code (spent)' },
    passkey: {
      type: 'object',
      additionalProperties: true,
      description: 'step-up with a passkey: an assertion (JSON form) over a challenge of POST /api/v1/auth/passkey/options',
    },
  },
} as const satisfies TypedSchema;

/** The account as the export shows it: every column but the password hash and the security stamp. */
export const ExportedAccountSchema = {
  title: 'ExportedAccount',
  type: 'object',
  required: ['id', 'email', 'displayName', 'emailConfirmed', 'hasPassword', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    email: { type: ['string', 'null'] },
    displayName: { type: 'string' },
    emailConfirmed: { type: 'boolean' },
    hasPassword: { type: 'boolean' },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
} as const satisfies TypedSchema;
export type ExportedAccount = Infer<typeof ExportedAccountSchema>;

const exportRecords = (description: string) => ({ type: 'array', items: { type: 'object' }, description }) as const;

/** GET /me/export: one JSON document (streamed; the keys come in this order). */
export const PersonalDataExportSchema = {
  title: 'PersonalDataExport',
  type: 'object',
  required: ['exportedAt', 'account', 'identities', 'sessions', 'memberships', 'devices', 'households'],
  properties: {
    exportedAt: { type: 'string', format: 'date-time' },
    account: ExportedAccountSchema,
    identities: { type: 'array', items: LinkedIdentitySchema },
    sessions: { type: 'array', items: SessionResponseSchema },
    memberships: { type: 'array', items: MembershipResponseSchema },
    devices: exportRecords('push devices, as GET /me/devices/{token} answers them'),
    households: {
      type: 'array',
      description: 'every household the person belongs to',
      items: {
        type: 'object',
        required: ['household', 'members', 'rules', 'events'],
        properties: {
          household: { type: 'object', description: 'HouseholdResponse: the settings' },
          members: exportRecords('as GET /households/{householdId}/members answers them'),
          rules: exportRecords('MealRuleResponse of every rule'),
          events: exportRecords('every meal event, in list order'),
        },
      },
    },
  },
} as const satisfies TypedSchema;
