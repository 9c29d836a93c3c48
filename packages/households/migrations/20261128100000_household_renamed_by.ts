import type { Knex } from 'knex';

/**
 * Who last renamed the household: the rename's news (householdNews, "Ada renamed the household to
 * …") is enqueued by the renaming UPDATE itself (a trigger @svc/jobs installs from this package's
 * `jobSources`), which can name only what the row holds.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('households', (t) => {
    t.uuid('renamed_by')
      .nullable()
      .comment(
        'The account that last renamed the household (accounts.id; null before any rename and once that account is deleted); named by the news of the rename',
      );
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('households', (t) => {
    t.dropColumn('renamed_by');
  });
}
