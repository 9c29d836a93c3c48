import type { Knex } from 'knex';

/**
 * One row per plan run of a household: its weeks, its status, and once it ended what it answers
 * (days, unmet Soft rules, conflicts) as jsonb, written once by the run. A day changed by hand is
 * written into `days` in place. No foreign key to households here: that table belongs to another
 * package (the relations migration adds it).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('plans', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()')).comment('The plan id (random uuid)');
    t.uuid('household_id').notNullable().comment('The household the plan is for (opaque id from @svc/households; no foreign key)');
    t.date('start_date').notNullable().comment('The first day of the plan, a Monday');
    t.integer('weeks').notNullable().comment('How many weeks the plan runs (1–4)');
    t.text('status').notNullable().comment('queued, running, done, infeasible, failed or replaced');
    t.integer('soft_cost').nullable().comment('What the plan breaks of the Soft rules; null unless the run ended done');
    t.jsonb('days').notNullable().defaultTo('[]').comment('The days (Day of the API), in date order; [] unless done or replaced');
    t.jsonb('unmet').notNullable().defaultTo('[]').comment('The Soft rules the plan breaks; [] unless done or replaced');
    t.jsonb('conflicts').notNullable().defaultTo('[]').comment('Hard rules and events that cannot hold together; [] unless infeasible');
    t.uuid('replan_of').nullable().comment('The plan whose locked days this run keeps (POST …/replan); null for a new plan');
    t.timestamp('created_at', { useTz: true }).notNullable().comment('When the run was asked for (the service clock)');
    t.timestamp('finished_at', { useTz: true }).nullable().comment('When the run ended (the service clock); null until then');
    t.integer('version').notNullable().defaultTo(1).comment('One more on every write of the row (the calendar feed revalidates by it)');
  });
  await knex.raw(`alter table plans add constraint plans_status_check check (status in ('queued','running','done','infeasible','failed','replaced'))`);
  await knex.raw('alter table plans add constraint plans_weeks_check check (weeks between 1 and 4)');
  // At most one run of a household queued or running: a second POST (or a parallel one) fails on
  // this index, which is what makes "409 plan_run_in_progress" hold under concurrency.
  await knex.raw(`create unique index plans_one_run_idx on plans (household_id) where status in ('queued','running')`);
  // The list of current plans and every lookup by household and date.
  await knex.raw('create index plans_household_start_idx on plans (household_id, start_date, id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('plans');
}
