import type { Knex } from 'knex';

/**
 * Every column of this package that holds an account id of @svc/accounts gets its foreign key, with
 * the delete behaviour its row needs when the account is deleted:
 * - household_members.user_id CASCADE: the membership is the person's. (Account deletion runs the
 *   households step first, which refuses while the person owns a household that has other members
 *   and deletes the households where the person was alone; the cascade removes what is left.)
 * - welcome_bundles.user_id CASCADE: the bundle record is the person's (its credits were booked in
 *   the household's ledger, which keeps them).
 * - households.created_by, household_invitations.created_by / accepted_by, credit_ledger.user_id,
 *   intake_code_redemptions.user_id SET NULL: the rows are the household's (or the operator's)
 *   history and outlive the person; the NOT NULL ones become nullable for that.
 * An account deletion looks each of these columns up, so each has an index (partial where most rows
 * hold null). Ids of accounts that no longer exist were unreachable already; they are cleared first
 * so the constraints can be added to a database that ran without them.
 */
const SET_NULL: { table: string; column: string; nullable: boolean }[] = [
  { table: 'households', column: 'created_by', nullable: false },
  { table: 'household_invitations', column: 'created_by', nullable: false },
  { table: 'household_invitations', column: 'accepted_by', nullable: true },
  { table: 'credit_ledger', column: 'user_id', nullable: true },
  { table: 'intake_code_redemptions', column: 'user_id', nullable: false },
];

const orphan = (table: string, column: string) => `${column} is not null and not exists (select 1 from accounts a where a.id = ${table}.${column})`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`delete from household_members where ${orphan('household_members', 'user_id')}`);
  await knex.raw(`delete from welcome_bundles where ${orphan('welcome_bundles', 'user_id')}`);
  await knex.raw('alter table household_members add constraint household_members_user_fk foreign key (user_id) references accounts (id) on delete cascade');
  await knex.raw('alter table welcome_bundles add constraint welcome_bundles_user_fk foreign key (user_id) references accounts (id) on delete cascade');
  await knex.raw(
    "comment on column household_members.user_id is 'Account id of the member (accounts.id; deleting the account removes the membership); null for a person without an account'",
  );
  for (const { table, column, nullable } of SET_NULL) {
    if (!nullable) await knex.raw(`alter table ${table} alter column ${column} drop not null`);
    await knex.raw(`update ${table} set ${column} = null where ${orphan(table, column)}`);
    await knex.raw(`alter table ${table} add constraint ${table}_${column}_fk foreign key (${column}) references accounts (id) on delete set null`);
    await knex.raw(`create index ${table}_${column}_index on ${table} (${column}) where ${column} is not null`);
  }
}

export async function down(knex: Knex): Promise<void> {
  // Columns made nullable stay nullable: ids cleared while the relation was in force cannot be made up.
  for (const { table, column } of SET_NULL) {
    await knex.raw(`drop index if exists ${table}_${column}_index`);
    await knex.raw(`alter table ${table} drop constraint if exists ${table}_${column}_fk`);
  }
  await knex.raw('alter table welcome_bundles drop constraint if exists welcome_bundles_user_fk');
  await knex.raw('alter table household_members drop constraint if exists household_members_user_fk');
  await knex.raw("comment on column household_members.user_id is 'Account id of the member; null for a person without an account'");
}
