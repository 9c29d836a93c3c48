import type { PasswordCheck } from './person-service.js';
import type { Account } from './store.js';

/**
 * Re-authentication (DELETE /me) checks a password exactly as a login does: the same lockout key
 * (the normalised address), the same count of failures, the same 423 while locked, one bcrypt.
 * This is the only place where it reaches the login's path, so the login's lockout and this check
 * can never drift apart (whatever makes the login's check race-free makes this one race-free).
 */
export function loginPasswordCheck(service: { verifyLogin(emailInput: string, password: string): Promise<Account | undefined> }): PasswordCheck {
  return async (emailNormalized, password) => (await service.verifyLogin(emailNormalized, password)) !== undefined;
}
