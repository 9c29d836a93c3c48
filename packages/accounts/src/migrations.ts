import { type MigrationSet, runMigrations } from '@svc/db';
import type { Knex } from 'knex';
import * as createAccounts from '../migrations/20261122090000_create_accounts.js';
import * as createSocialSignIn from '../migrations/20261123090000_create_social_sign_in.js';
import * as createSpentExternalCookies from '../migrations/20261124090000_create_spent_external_cookies.js';
import * as securityState from '../migrations/20261125090000_security_state.js';
import * as personSessionsAndExports from '../migrations/20261125120000_person_sessions_and_exports.js';
import * as unlinkedIdentities from '../migrations/20261127090000_unlinked_identities_and_mail_recipients.js';
import * as personalAccessTokens from '../migrations/20261127200000_personal_access_tokens.js';
import * as sessionMethodPasskey from '../migrations/20261127210000_session_method_passkey.js';

/** This package's migrations, in the order they run; the history lives in `knex_migrations_accounts`. */
export const migrations: MigrationSet = {
  name: 'accounts',
  migrations: [
    { name: '20261122090000_create_accounts', up: createAccounts.up, down: createAccounts.down },
    { name: '20261123090000_create_social_sign_in', up: createSocialSignIn.up, down: createSocialSignIn.down },
    { name: '20261124090000_create_spent_external_cookies', up: createSpentExternalCookies.up, down: createSpentExternalCookies.down },
    { name: '20261125090000_security_state', up: securityState.up, down: securityState.down },
    { name: '20261125120000_person_sessions_and_exports', up: personSessionsAndExports.up, down: personSessionsAndExports.down },
    {
      name: '20261127090000_unlinked_identities_and_mail_recipients',
      up: unlinkedIdentities.up,
      down: unlinkedIdentities.down,
    },
    { name: '20261127200000_personal_access_tokens', up: personalAccessTokens.up, down: personalAccessTokens.down },
    { name: '20261127210000_session_method_passkey', up: sessionMethodPasskey.up, down: sessionMethodPasskey.down },
  ],
};

/** Brings this package's tables up to date (dependencies' tables must already be there). */
export async function migrate(knex: Knex): Promise<string[]> {
  return runMigrations(knex, [migrations]);
}
