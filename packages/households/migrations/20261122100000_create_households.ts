import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('households', (t) => {
    t.comment('A household: its settings and sharing choices (HouseholdResponse), onboarding state and AI pause');
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()')).comment('HouseholdResponse.id');
    t.text('name').notNullable().comment('Display name, 1 to 100 characters, not blank');
    t.text('time_zone_id').notNullable().comment('IANA id from the server time-zone database; decides the day thread date and the AI allowance month');
    t.specificType('default_dinner_time', 'time(0)').notNullable().comment('Usual dinner time, answered as HH:mm');
    t.text('preferred_language').notNullable().defaultTo('en').comment('Canonical BCP 47 tag');
    t.specificType('country', 'char(2)').notNullable().comment('ISO 3166-1 alpha-2, upper case; ZZ when unknown');
    t.text('measurement_system').notNullable().comment('Metric, Imperial or UsCustomary');
    t.text('dry_goods_measure').notNullable().comment('Weight or Volume');
    t.text('pantry_weight').notNullable().defaultTo('Normal').comment('Low, Normal or High');
    t.boolean('prefer_own_recipes').notNullable().defaultTo(false).comment('Planner prefers the household own recipes');
    t.boolean('prefers_leftover_dinners').notNullable().defaultTo(false).comment('Planner may plan leftover dinners');
    t.boolean('share_receipt_prices').notNullable().defaultTo(false).comment('Sharing choice: prices read from receipts');
    t.boolean('share_unit_weights').notNullable().defaultTo(true).comment('Sharing choice: unit weights');
    t.boolean('tailor_serving_to_tastes').notNullable().defaultTo(true).comment('Servings tailored to members tastes');
    t.boolean('show_soft_serving_advice').notNullable().defaultTo(true).comment('Show soft serving advice');
    t.boolean('baby_eats_separately_when_needed').notNullable().defaultTo(false).comment('A baby gets a separate meal when needed');
    t.integer('max_new_dishes_per_week').notNullable().defaultTo(3).comment('New dishes the planner may bring per week, 0 to 21');
    t.boolean('always_new_dishes').notNullable().defaultTo(false).comment('Prefer new dishes every time');
    t.boolean('use_starter_library').notNullable().defaultTo(true).comment('Plan from the starter recipe library');
    t.boolean('show_child_tasks').notNullable().defaultTo(true).comment('Show tasks children can help with');
    t.boolean('made_again_lift').notNullable().defaultTo(true).comment('Dishes marked made-again are planned more often');
    t.text('address').nullable().comment('Free-text address, null when not given');
    t.specificType('loyalty_programs', 'text[]')
      .notNullable()
      .defaultTo(knex.raw("'{}'::text[]"))
      .comment('Names of the loyalty programmes the household uses, in the order given');
    t.timestamp('onboarding_completed_at', { useTz: true }).nullable().comment('When onboarding was completed; null until then, never changed after');
    t.uuid('onboarding_conversation_id').nullable().comment('The day thread that received the onboarding recap');
    t.specificType('onboarding_skipped_steps', 'text[]').nullable().comment('Onboarding steps skipped, as sent with the completion');
    t.timestamp('ai_paused_until', { useTz: true })
      .nullable()
      .comment('An operator paused this household AI until then (429 with Retry-After); null when not paused');
    t.uuid('created_by').notNullable().comment('Account id of the creator (opaque; accounts owns it)');
    t.timestamp('created_at', { useTz: true }).notNullable().comment('When the household was created');
    t.timestamp('updated_at', { useTz: true }).notNullable().comment('Last change of a setting or of the onboarding state');
  });
  await knex.raw(`alter table households
    add constraint households_name_length check (char_length(name) between 1 and 100),
    add constraint households_country_format check (country ~ '^[A-Z]{2}$'),
    add constraint households_measurement_system check (measurement_system in ('Metric', 'Imperial', 'UsCustomary')),
    add constraint households_dry_goods_measure check (dry_goods_measure in ('Weight', 'Volume')),
    add constraint households_pantry_weight check (pantry_weight in ('Low', 'Normal', 'High')),
    add constraint households_max_new_dishes check (max_new_dishes_per_week between 0 and 21)`);

  await knex.schema.createTable('household_members', (t) => {
    t.comment('Who belongs to a household, and as what');
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()')).comment('memberId');
    t.uuid('household_id').notNullable().references('id').inTable('households').onDelete('CASCADE').comment('The household');
    t.uuid('user_id').nullable().comment('Account id of the member (opaque; no foreign key across packages); null for a person without an account');
    t.text('display_name').nullable().comment('Name of a member without an account; account members take theirs from accounts');
    t.text('role').notNullable().comment('Owner, Adult or Junior');
    t.timestamp('created_at', { useTz: true }).notNullable().comment('When the member joined');
    t.unique(['household_id', 'user_id'], { indexName: 'household_members_household_user_unique' });
    t.index(['user_id'], 'household_members_user_index');
  });
  await knex.raw(`alter table household_members add constraint household_members_role check (role in ('Owner', 'Adult', 'Junior'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('household_members');
  await knex.schema.dropTable('households');
}
