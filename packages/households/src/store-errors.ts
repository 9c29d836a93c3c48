import { NotFoundError } from '@svc/http-kit';

export const householdNotFound = () => new NotFoundError('not_found', 'No such household');
