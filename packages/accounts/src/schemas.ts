import type { JsonSchema } from '@svc/http-kit';

/** decisions.md §2: the longest accepted values (longer: 400 value_too_long). */
export const MAX = { email: 254, password: 256, displayName: 80, token: 200 } as const;

const email = { type: 'string', maxLength: MAX.email };
const password = { type: 'string', maxLength: MAX.password };
const token = { type: 'string', maxLength: MAX.token };
const uuid = { type: 'string', format: 'uuid' };

export const UserResponseSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'email', 'displayName'],
  properties: { id: uuid, email: { type: ['string', 'null'] }, displayName: { type: 'string' } },
};

export const MembershipResponseSchema: JsonSchema = {
  type: 'object',
  required: ['householdId', 'householdName', 'role', 'memberId'],
  properties: {
    householdId: uuid,
    householdName: { type: 'string' },
    role: { type: 'string', enum: ['Owner', 'Adult', 'Junior'] },
    memberId: { type: ['string', 'null'], format: 'uuid' },
  },
};

export const MeResponseSchema: JsonSchema = {
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
};

export const EmptyResponseSchema: JsonSchema = { type: 'object', additionalProperties: false, description: 'always {}' };

export interface UpdateMeBody {
  displayName: string;
}
export const UpdateMeRequest: JsonSchema = {
  type: 'object',
  required: ['displayName'],
  properties: { displayName: { type: 'string', maxLength: MAX.displayName, description: '1 to 80 characters after trimming (else 400 account_name_length)' } },
};

export interface ChangePasswordBody {
  currentPassword: string | null;
  newPassword: string;
}
export const ChangePasswordRequest: JsonSchema = {
  type: 'object',
  required: ['currentPassword', 'newPassword'],
  properties: {
    currentPassword: { type: ['string', 'null'], maxLength: MAX.password, description: 'required (non-null) when the account has a password' },
    newPassword: { ...password, description: '8 to 256 characters, not seen in a breach' },
  },
};

export interface ChangeEmailBody {
  newEmail: string;
}
export const ChangeEmailRequest: JsonSchema = { type: 'object', required: ['newEmail'], properties: { newEmail: email } };

export interface RegisterBody {
  email: string;
  password: string;
  displayName: string;
}
export const RegisterRequest: JsonSchema = {
  type: 'object',
  required: ['email', 'password', 'displayName'],
  properties: {
    email,
    password: { ...password, description: '8 to 256 characters, not seen in a breach' },
    displayName: { type: 'string', maxLength: MAX.displayName, description: '1 to 80 characters after trimming' },
  },
};

export interface LoginBody {
  email: string;
  password: string;
}
export const LoginRequest: JsonSchema = { type: 'object', required: ['email', 'password'], properties: { email, password } };

export interface ConfirmEmailBody {
  userId: string;
  token: string;
}
export const ConfirmEmailRequest: JsonSchema = { type: 'object', required: ['userId', 'token'], properties: { userId: uuid, token } };

export interface ConfirmEmailChangeBody {
  userId: string;
  newEmail: string;
  token: string;
}
export const ConfirmEmailChangeRequest: JsonSchema = { type: 'object', required: ['userId', 'newEmail', 'token'], properties: { userId: uuid, newEmail: email, token } };

export interface ForgotPasswordBody {
  email: string;
}
export const ForgotPasswordRequest: JsonSchema = { type: 'object', required: ['email'], properties: { email } };

export interface ResetPasswordBody {
  email: string;
  token: string;
  newPassword: string;
}
export const ResetPasswordRequest: JsonSchema = {
  type: 'object',
  required: ['email', 'token', 'newPassword'],
  properties: { email, token, newPassword: { ...password, description: '8 to 256 characters, not seen in a breach' } },
};
