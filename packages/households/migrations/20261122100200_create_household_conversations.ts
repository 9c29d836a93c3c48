import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('household_conversations', (t) => {
    t.comment('The day thread: one conversation per household per calendar date in the household time zone');
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()')).comment('conversationId');
    t.uuid('household_id').notNullable().references('id').inTable('households').onDelete('CASCADE').comment('The household');
    t.date('date').notNullable().comment('Calendar date in the household time zone when the thread was opened');
    t.timestamp('created_at', { useTz: true }).notNullable().comment('When the thread was opened');
    t.unique(['household_id', 'date'], { indexName: 'household_conversations_household_date_unique' });
  });
  await knex.schema.createTable('household_messages', (t) => {
    t.comment('Messages of a day thread');
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()')).comment('Message id');
    t.uuid('conversation_id').notNullable().references('id').inTable('household_conversations').onDelete('CASCADE').comment('The thread');
    t.text('kind').notNullable().comment('What wrote it, e.g. onboarding_recap');
    t.text('text').notNullable().comment('The message text');
    t.timestamp('created_at', { useTz: true }).notNullable().comment('When it was written');
    t.index(['conversation_id', 'created_at'], 'household_messages_conversation_index');
  });
  await knex.schema.alterTable('households', (t) => {
    t.foreign('onboarding_conversation_id', 'households_onboarding_conversation_fk').references('id').inTable('household_conversations').onDelete('SET NULL');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('households', (t) => {
    t.dropForeign('onboarding_conversation_id', 'households_onboarding_conversation_fk');
  });
  await knex.schema.dropTable('household_messages');
  await knex.schema.dropTable('household_conversations');
}
