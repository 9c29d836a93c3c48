import { AuthenticationError } from '@svc/http-kit';

/** The page where a browser social sign-in with TOTP on asks for the code (decisions.md §8). */
export const SIGN_IN_VERIFY_PATH = '/sign-in/verify';

/** decisions.md §8: a right first factor with TOTP on answers 401 `mfa_required` with the mfaToken (no session). */
export function mfaRequired(mfaToken: string): AuthenticationError {
  return new AuthenticationError('mfa_required', 'A second step is needed: POST /api/v1/auth/mfa with this mfaToken and a code', { extensions: { mfaToken } });
}

/** The `mfa_required` answer's own member, for the OpenAPI document (`problemMembers` of the operations that answer it). */
export const MFA_REQUIRED_MEMBERS = {
  401: {
    mfaToken: {
      type: 'string',
      description: 'Only with code `mfa_required`: send it with a code to POST /api/v1/auth/mfa (five minutes, single use)',
    },
  },
} as const;
