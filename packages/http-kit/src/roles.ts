import type { HouseholdRole } from '@svc/contracts';
import { NotAllowedError } from './errors.js';

/** Throws 403 `forbidden` unless `role` is one of `allowed`. */
export function assertRole(role: HouseholdRole, allowed: readonly HouseholdRole[]): void {
  if (!allowed.includes(role)) throw new NotAllowedError('forbidden', `This operation is not open to the ${role} role`);
}
