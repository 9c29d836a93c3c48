import type { Knex } from 'knex';

/**
 * households.renamed_by SET NULL, as created_by: the household outlives the person who renamed it.
 * Indexed (partial) for the account deletion's lookup.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    'update households set renamed_by = null where renamed_by is not null and not exists (select 1 from accounts a where a.id = households.renamed_by)',
  );
  await knex.raw('alter table households add constraint households_renamed_by_fk foreign key (renamed_by) references accounts (id) on delete set null');
  await knex.raw('create index households_renamed_by_index on households (renamed_by) where renamed_by is not null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists households_renamed_by_index');
  await knex.raw('alter table households drop constraint if exists households_renamed_by_fk');
}
