import { declareLink, type ReadLink } from '@svc/db';
import { AccountModel } from './models/index.js';

/** An account's display name, lent to other packages' declared reads (GET …/members names members by it), as `AccountDirectory.profiles` reads it. */
export const accountNameLink: ReadLink = declareLink({ model: AccountModel, key: 'id', field: 'displayName' });
