import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('household_invitations', (t) => {
    t.comment('Invitations into a household: random codes, stored only as hashes, seven days, single use');
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()')).comment('Invitation id');
    t.uuid('household_id').notNullable().references('id').inTable('households').onDelete('CASCADE').comment('The household invited into');
    t.text('code_hash').notNullable().unique().comment('SHA-256 hex of the code handed to the inviter; the code itself is never stored');
    t.text('role').notNullable().comment('Role the new member gets: Adult or Junior');
    t.uuid('created_by').notNullable().comment('Account id of the inviting member');
    t.timestamp('created_at', { useTz: true }).notNullable().comment('When the invitation was made');
    t.timestamp('expires_at', { useTz: true }).notNullable().comment('After this the code is refused (404 invitation_not_found)');
    t.timestamp('accepted_at', { useTz: true }).nullable().comment('When the code was spent; null while unused');
    t.uuid('accepted_by').nullable().comment('Account id that spent the code');
    t.uuid('member_id').nullable().references('id').inTable('household_members').onDelete('SET NULL').comment('The member the acceptance created');
  });
  await knex.raw(`alter table household_invitations add constraint household_invitations_role check (role in ('Adult', 'Junior'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('household_invitations');
}
