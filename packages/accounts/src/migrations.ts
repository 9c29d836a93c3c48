import { type MigrationSet, runMigrations } from '@svc/db';
import { createQueueMigration, type JobSource } from '@svc/jobs';
import type { Knex } from 'knex';
import * as createAccounts from '../migrations/20261122090000_create_accounts.js';
import * as createSocialSignIn from '../migrations/20261123090000_create_social_sign_in.js';
import * as createSpentExternalCookies from '../migrations/20261124090000_create_spent_external_cookies.js';
import * as securityState from '../migrations/20261125090000_security_state.js';
import * as personSessionsAndExports from '../migrations/20261125120000_person_sessions_and_exports.js';
import * as unlinkedIdentities from '../migrations/20261127090000_unlinked_identities_and_mail_recipients.js';
import * as personalAccessTokens from '../migrations/20261127200000_personal_access_tokens.js';
import * as sessionMethodPasskey from '../migrations/20261127210000_session_method_passkey.js';
import { MailOutboxModel } from './models/index.js';

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

/** The queue mail is delivered on (@svc/jobs): one job per outbox row, made by the row's insert (`jobSources`). */
export const MAIL_QUEUE = 'accounts-mail';

/** The hourly housekeeping's queue (pg-boss's cron sends one job an hour for the cluster). */
export const HOUSEKEEPING_QUEUE = 'accounts-housekeeping';
/**
 * Seconds a delivery may stay active before another instance takes it over (a runner that died
 * mid-send): the SMTP exchange (at most ~50 s with the transport's timeouts) and the write-back fit
 * in half of it, where the handler is cut off.
 */
export const MAIL_EXPIRE_SECONDS = 600;

/** This package's queue in @svc/jobs: run after @svc/jobs' own migrations. */
export const queues: MigrationSet = {
  name: 'accounts_queues',
  migrations: [
    createQueueMigration('20261128090000_mail_queue', MAIL_QUEUE, { expireInSeconds: MAIL_EXPIRE_SECONDS }),
    createQueueMigration('20261202150100_housekeeping_queue', HOUSEKEEPING_QUEUE, { expireInSeconds: 600 }),
    {
      // The outbox's own claim (next_attempt_at order) is gone: the queue orders deliveries.
      name: '20261128090100_drop_mail_outbox_due_idx',
      up: async (knex: Knex) => {
        await knex.raw('drop index if exists mail_outbox_due_idx');
        await knex.raw(
          "comment on column mail_outbox.next_attempt_at is 'when the next delivery attempt is due (the service''s clock; a record: the queue accounts-mail holds the job)'",
        );
      },
      down: async (knex: Knex) => {
        await knex.raw('create index mail_outbox_due_idx on mail_outbox (next_attempt_at) where sent_at is null and gave_up_at is null');
        await knex.raw("comment on column mail_outbox.next_attempt_at is 'not tried before this instant (exponential backoff after a failure)'");
      },
    },
  ],
};

/**
 * Writes of this package that enqueue work by themselves (@svc/jobs installs the triggers): every
 * row inserted into the outbox makes its delivery job in the inserting statement, so the one
 * gated statement of `AccountStore.writeMail` enqueues with no statement of its own and the same
 * work whether it wrote a mail or not. Mail waiting when this is installed gets its job too.
 */
export const jobSources: readonly JobSource[] = [
  { model: MailOutboxModel, queue: MAIL_QUEUE, payload: { id: 'id' }, countFrom: 'createdAt', backfillWhenNull: ['sentAt', 'gaveUpAt'] },
];

/** Brings this package's tables up to date (dependencies' tables must already be there). */
export async function migrate(knex: Knex): Promise<string[]> {
  return runMigrations(knex, [migrations]);
}
