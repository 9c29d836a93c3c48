import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('intake_invite_codes', (t) => {
    t.comment('Invite codes an operator created for INTAKE_MODE=invite (besides those of INVITE_CODES)');
    t.text('code').primary().comment('The code, upper case; compared case-insensitively');
    t.integer('max_uses').notNullable().defaultTo(1).comment('Households it may create; 1 = single use');
    t.integer('uses').notNullable().defaultTo(0).comment('Households created with it so far');
    t.text('note').nullable().comment('Operator note (who it was for)');
    t.timestamp('expires_at', { useTz: true }).nullable().comment('Refused after this; null = no expiry');
    t.timestamp('revoked_at', { useTz: true }).nullable().comment('Refused after an operator revoked it');
    t.timestamp('created_at', { useTz: true }).notNullable().comment('When it was created');
  });
  await knex.raw(`alter table intake_invite_codes
    add constraint intake_invite_codes_uses check (uses between 0 and max_uses),
    add constraint intake_invite_codes_max_uses check (max_uses >= 1)`);
  await knex.schema.createTable('intake_code_redemptions', (t) => {
    t.comment('Each household created with an invite code (database codes and INVITE_CODES alike)');
    t.bigIncrements('id').primary().comment('Entry number');
    t.text('code').notNullable().comment('The code used, upper case');
    t.uuid('user_id').notNullable().comment('Account id of the creator');
    t.uuid('household_id').notNullable().references('id').inTable('households').onDelete('CASCADE').comment('The household it created');
    t.timestamp('redeemed_at', { useTz: true }).notNullable().comment('When');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('intake_code_redemptions');
  await knex.schema.dropTable('intake_invite_codes');
}
