import type { Knex } from 'knex';

/**
 * Who left a household or was removed from it, and as what, so that an invitation code minted
 * before cannot give the account back what the Owner took away (a removed account is refused, one
 * that left as a Junior joins as a Junior at most), and so that deleting the account later can
 * still find the names it left behind in the household's events (the member ids it held). And a
 * sealed copy of each invitation code, so the household's adults can list outstanding codes.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('household_departures', (t) => {
    t.comment('Members who left or were removed: refuses or caps older invitation codes for that account; the member ids an account deletion erases');
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()')).comment('Departure id');
    t.uuid('household_id').notNullable().references('id').inTable('households').onDelete('CASCADE').comment('The household left');
    t.uuid('user_id').notNullable().comment('Account id of the member who departed (deleting the account deletes the row)');
    t.uuid('member_id').notNullable().comment('The member id the account held (its row is gone)');
    t.text('role').notNullable().comment('The role held until the departure: an older code never gives more');
    t.text('reason').notNullable().comment('left (the member themself) or removed (by the Owner: older codes are refused)');
    t.timestamp('departed_at', { useTz: true }).notNullable().comment('When; codes minted at or before this are refused (removed) or capped (left)');
    t.index(['household_id', 'user_id', 'departed_at'], 'household_departures_household_user_index');
    t.index(['user_id'], 'household_departures_user_index');
  });
  await knex.raw(`alter table household_departures
    add constraint household_departures_role check (role in ('Owner', 'Adult', 'Junior')),
    add constraint household_departures_reason check (reason in ('left', 'removed'))`);
  await knex.schema.alterTable('household_invitations', (t) => {
    t.binary('sealed_code')
      .nullable()
      .comment(
        'The code sealed (AES-256-GCM, key derived from SESSION_SECRET, household id as associated data) so adults can list it; null for codes minted before',
      );
    t.index(['household_id'], 'household_invitations_outstanding_index', { predicate: knex.whereNull('accepted_at') });
    t.index(['created_by'], 'household_invitations_created_by_outstanding_index', { predicate: knex.whereNull('accepted_at') });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('household_invitations', (t) => {
    t.dropIndex([], 'household_invitations_created_by_outstanding_index');
    t.dropIndex([], 'household_invitations_outstanding_index');
    t.dropColumn('sealed_code');
  });
  await knex.schema.dropTable('household_departures');
}
