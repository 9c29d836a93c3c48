import { isPgError, objection } from '@svc/db';
import { NotFoundError } from '@svc/http-kit';

/** A PostgreSQL error code, also when Objection wrapped the driver's error (DBError keeps it as `nativeError`). */
export function isDbError(err: unknown, code: string): boolean {
  return isPgError(err, code) || (err instanceof objection.DBError && isPgError(err.nativeError, code));
}

export const householdNotFound = () => new NotFoundError('not_found', 'No such household');
