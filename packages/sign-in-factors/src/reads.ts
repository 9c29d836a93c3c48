import { declareLink, type ReadLink } from '@svc/db';
import { PasskeyModel, TotpModel } from './models/index.js';

/**
 * The fields this package lends to other packages' declared reads of the caller's account (GET
 * /me/logins), as `SignInFactorsService.summary` reads them: when TOTP was confirmed (null while
 * pending or off: TOTP is on when it is not null), and how many passkeys the account has.
 */
export const secondFactorLinks: { readonly totpConfirmedAt: ReadLink; readonly passkeys: ReadLink } = {
  totpConfirmedAt: declareLink({ model: TotpModel, key: 'accountId', field: 'confirmedAt' }),
  passkeys: declareLink({ model: PasskeyModel, key: 'accountId', field: 'id', aggregate: 'count' }),
};
