import type { Knex } from 'knex';

/**
 * A household's own dishes. The household id is an opaque uuid of @svc/households; the foreign key
 * (and the cascade on its deletion) is added by this package's `relations` migrations.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('dishes', (t) => {
    t.uuid('id').primary().comment('The dish id (random uuid, made by the service)');
    t.uuid('household_id').notNullable().comment('The household the dish belongs to (opaque id from @svc/households)');
    t.text('name').notNullable().comment('The name as the household wrote it, 1–100 characters');
    // Byte order ("C"): the list's order and its keyset compare the same way on every server, whatever its locale.
    t.specificType('name_key', 'text collate "C"').notNullable().comment('The name in lower case (JavaScript toLowerCase): the list order and the q search');
    t.text('category').notNullable().comment('MealCategory');
    t.integer('active_minutes').notNullable().comment('Hands-on cooking minutes, 1–600');
    t.text('price_class').notNullable().comment('Cheap, Mid or Expensive');
    t.specificType('tags', 'text[]').notNullable().defaultTo('{}').comment('At most 20 tags, each 1–40 characters, in the order given');
    t.boolean('made_again').notNullable().defaultTo(false).comment('The household would make it again');
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().comment('When the dish was created (the service clock)');
    t.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable().comment('When it was last replaced (the service clock)');
  });
  await knex.raw(
    `alter table dishes add constraint dishes_category_check check (category in ('Fish','Meat','Poultry','Vegetarian','Vegan','Soup','Pasta','Taco','Leftovers','Other'))`,
  );
  await knex.raw(`alter table dishes add constraint dishes_price_class_check check (price_class in ('Cheap','Mid','Expensive'))`);
  await knex.raw('alter table dishes add constraint dishes_active_minutes_check check (active_minutes between 1 and 600)');
  await knex.raw('alter table dishes add constraint dishes_name_length_check check (char_length(name) between 1 and 100)');
  await knex.raw('alter table dishes add constraint dishes_tags_count_check check (coalesce(array_length(tags, 1), 0) <= 20)');
  // Serves the list (household, by name key then id: the keyset page), the count under the limit and the cascade.
  await knex.raw('create index dishes_household_name_idx on dishes (household_id, name_key, id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('dishes');
}
