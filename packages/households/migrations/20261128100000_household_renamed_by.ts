import type { Knex } from 'knex';

/**
 * Who last wrote the household's name (a PATCH with `name`): the rename's news (householdNews, "Ada renamed the household to
 * …") is enqueued by the renaming UPDATE itself (a trigger @svc/jobs installs from this package's
 * `jobSources`), which can name only what the row holds.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('households', (t) => {
    t.uuid('renamed_by')
      .nullable()
      .comment('The account whose PATCH last wrote the name (accounts.id; null before any and once that account is deleted); named by the news of a rename');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('households', (t) => {
    t.dropColumn('renamed_by');
  });
}
