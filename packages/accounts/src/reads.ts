import { declareRead, type ReadDeclaration } from '@svc/db';
import { AccountIdentityModel } from './models/index.js';

/** GET /me/logins: the caller's linked identities, oldest first (the password flag comes with the session). */
export const identitiesRead: ReadDeclaration = declareRead({
  name: 'accounts_identities',
  model: AccountIdentityModel,
  scope: { account: 'accountId' },
  fields: ['provider', 'email', 'createdAt'],
  list: { orderBy: [{ column: 'createdAt' }, { column: 'id' }] },
});
