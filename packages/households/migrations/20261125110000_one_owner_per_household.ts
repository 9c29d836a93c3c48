import type { Knex } from 'knex';

/**
 * A household has one Owner: a partial unique index makes a second one impossible, whatever the
 * code does (a hand-over demotes the old Owner before it promotes the new one, so it holds at every
 * statement). That there is at least one is the code's job: the Owner cannot leave or be demoted.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create unique index household_members_one_owner on household_members (household_id) where role = 'Owner'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists household_members_one_owner');
}
