import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('household_subscriptions', (t) => {
    t.comment('Plan subscriptions; each household opens one on the default plan when it is created');
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()')).comment('Subscription id');
    t.uuid('household_id').notNullable().references('id').inTable('households').onDelete('CASCADE').comment('The household');
    t.text('plan').notNullable().comment('Plan code; default is the only plan so far (its allowance is AI_TURNS_PER_MONTH)');
    t.timestamp('started_at', { useTz: true }).notNullable().comment('When the subscription was opened');
    t.timestamp('ended_at', { useTz: true }).nullable().comment('When it ended; null while current');
  });
  await knex.raw('create unique index household_subscriptions_current_unique on household_subscriptions (household_id) where ended_at is null');

  await knex.schema.createTable('welcome_bundles', (t) => {
    t.comment('The welcome credits: one bundle per user, granted with the first household they create');
    t.uuid('user_id').primary().comment('Account id (opaque); the primary key is what makes the bundle once per user');
    t.uuid('household_id')
      .nullable()
      .references('id')
      .inTable('households')
      .onDelete('SET NULL')
      .comment('The household the bundle came with and that spends it');
    t.integer('credits').notNullable().comment('AI turns granted (WELCOME_CREDITS at the time)');
    t.timestamp('granted_at', { useTz: true }).notNullable().comment('When it was granted');
  });

  await knex.schema.createTable('credit_ledger', (t) => {
    t.comment('Every AI credit grant and spend of a household, one row each; balances are sums, never overwritten');
    t.bigIncrements('id').primary().comment('Entry number');
    t.uuid('household_id').notNullable().references('id').inTable('households').onDelete('CASCADE').comment('The household whose credits move');
    t.text('pool').notNullable().comment('allowance (the plan monthly turns) or welcome (the welcome bundle)');
    t.text('period').nullable().comment('allowance entries: the calendar month YYYY-MM in the household time zone; null for welcome');
    t.text('reason').notNullable().comment('monthly_allowance, welcome_bundle (grants) or ai_turn (a spend)');
    t.integer('delta').notNullable().comment('Turns added (grant, positive) or taken (spend, negative)');
    t.uuid('user_id').nullable().comment('welcome_bundle entries: the account the bundle belongs to');
    t.timestamp('created_at', { useTz: true }).notNullable().comment('When it was booked');
    t.index(['household_id', 'pool', 'period'], 'credit_ledger_household_pool_index');
  });
  await knex.raw(`alter table credit_ledger
    add constraint credit_ledger_pool check (pool in ('allowance', 'welcome')),
    add constraint credit_ledger_reason check (reason in ('monthly_allowance', 'welcome_bundle', 'ai_turn')),
    add constraint credit_ledger_period check ((pool = 'allowance') = (period is not null))`);
  await knex.raw(`create unique index credit_ledger_one_allowance_per_month on credit_ledger (household_id, period) where reason = 'monthly_allowance'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('credit_ledger');
  await knex.schema.dropTable('welcome_bundles');
  await knex.schema.dropTable('household_subscriptions');
}
