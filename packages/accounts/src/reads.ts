import { declareLink, declareRead, type ReadDeclaration, type ReadLink } from '@svc/db';
import { AccountIdentityModel, AccountModel } from './models/index.js';

/** GET /me/logins: the caller's linked identities, oldest first (the password flag comes with the session). */
export const identitiesRead: ReadDeclaration = declareRead({
  name: 'accounts_identities',
  model: AccountIdentityModel,
  scope: { account: 'accountId' },
  fields: ['provider', 'email', 'createdAt'],
  list: { orderBy: [{ column: 'createdAt' }, { column: 'id' }] },
});

/** An account's display name, lent to other packages' declared reads (GET …/members names members by it), as `AccountDirectory.profiles` reads it. */
export const accountNameLink: ReadLink = declareLink({ model: AccountModel, key: 'id', field: 'displayName' });
