import type { Knex } from 'knex';

/**
 * One row per rule a household declared. The payload is kept whole as jsonb (its shape is chosen by
 * `kind`, validated by the API before it gets here); `kind` is also a column so the defaults check
 * ("does the household have a CategoryFrequency rule?") is a plain indexed lookup. No foreign key to
 * households: that table belongs to another package, and household ids are opaque here.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('meal_rules', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()')).comment('The rule id (random uuid)');
    t.uuid('household_id').notNullable().comment('The household the rule belongs to (opaque id from @svc/households; no foreign key)');
    t.text('kind').notNullable().comment('MealRuleKind; always equal to payload->>kind');
    t.text('strength').notNullable().comment('RuleStrength: Hard or Soft');
    t.text('scope').notNullable().comment('RuleScope: Permanent, DateRange or SpecificDate');
    t.date('start_date').nullable().comment('First day the rule holds; null when Permanent');
    t.date('end_date').nullable().comment('Last day the rule holds (inclusive); null when Permanent');
    t.text('source').notNullable().comment('RuleSource: UserDeclared for rules posted through the API');
    t.jsonb('payload').notNullable().comment('MealRulePayloadDto, kind included, members in the spec order');
    t.timestamp('created_at', { useTz: true }).notNullable().comment('When the rule was created (the service clock)');
    t.timestamp('updated_at', { useTz: true }).notNullable().comment('When the rule was last replaced (the service clock)');
  });
  await knex.raw(
    `alter table meal_rules add constraint meal_rules_kind_check check (kind in ('CategoryFrequency','CategoryExcludedDays','CategoryOnDay','MaximumActiveCookingTime','DinnerTimeOnWeekday','PriceClassOnDays','RepeatAfterDays'))`,
  );
  await knex.raw(`alter table meal_rules add constraint meal_rules_kind_matches_payload check (payload->>'kind' = kind)`);
  await knex.raw(`alter table meal_rules add constraint meal_rules_strength_check check (strength in ('Hard','Soft'))`);
  await knex.raw(`alter table meal_rules add constraint meal_rules_scope_check check (scope in ('Permanent','DateRange','SpecificDate'))`);
  await knex.raw(`alter table meal_rules add constraint meal_rules_source_check check (source in ('UserDeclared','SystemDefault','Learned'))`);
  // Serves the list (household, in creation order) and every lookup by household.
  await knex.raw('create index meal_rules_household_created_idx on meal_rules (household_id, created_at, id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('meal_rules');
}
