import type { PlannedDinner } from '@svc/contracts';
import { isPgError, PG } from '@svc/db';
import { ConflictError } from '@svc/http-kit';
import type { Knex } from 'knex';
import { PlanModel } from './models/index.js';
import type { Plan, PlanDay } from './schemas.js';
import { RUN_ENDED_CHANNEL } from './waiter.js';

/** A plan with what only the package keeps: the plan a replan keeps locked days of, and the row's version. */
export type StoredPlan = Plan & { replanOf: string | null; version: number };

/** What a run needs of its plan. */
export type RunPlan = Pick<StoredPlan, 'id' | 'householdId' | 'startDate' | 'weeks' | 'replanOf'>;

/** How many days before a plan `RunHistory.earlierDinners` reaches (a RepeatAfterDays rule longer than this reads again). */
export const EARLIER_DINNERS_DAYS = 28;

/** What a run reads of the household's own plans, in the statement that claims it. */
export interface RunHistory {
  /** Dinners of the current plans in the `EARLIER_DINNERS_DAYS` days before the plan's start, by date. */
  earlierDinners: { date: string; id: string; origin: 'own' | 'starter' }[];
  /** Starter dish ids that a done or replaced plan starting before this one had. */
  knownStarterIds: string[];
  /** The days of the plan a replan keeps locked days of (as they are now); [] for a new plan. */
  replanDays: PlanDay[];
}

/** What a run ended with, written once. */
export type RunOutcome =
  | { status: 'done'; softCost: number; days: PlanDay[]; unmet: Plan['unmet'] }
  | { status: 'infeasible'; conflicts: Plan['conflicts'] }
  | { status: 'failed' };

export interface PlanStore {
  /** A new run, queued (inside `trx`); 409 `plan_run_in_progress` while another run of the household is queued or running. */
  createRun(input: { householdId: string; startDate: string; weeks: number; replanOf: string | null }, now: Date, trx?: Knex.Transaction): Promise<StoredPlan>;
  /** One plan of the household; undefined when there is none. */
  get(householdId: string, planId: string, trx?: Knex.Transaction): Promise<StoredPlan | undefined>;
  /** A plan by id alone (the run's job). */
  byId(planId: string, trx?: Knex.Transaction): Promise<StoredPlan | undefined>;
  /** The current (done) plans of the household that overlap `from`..`to`, by startDate then id. */
  listCurrent(householdId: string, from: string, to: string): Promise<Plan[]>;
  /**
   * Marks a queued run running and reads what the run needs of the household's plans, in one
   * statement; undefined when it has ended already (a rerun of a finished job) or is gone.
   */
  claim(planId: string, trx?: Knex.Transaction): Promise<{ plan: RunPlan; history: RunHistory } | undefined>;
  /** What `claim` reads of the household's plans, without claiming (the bench, tools). */
  history(plan: RunPlan): Promise<RunHistory>;
  /**
   * Writes a run's outcome, once: only while the run is still queued or running. A done run makes
   * every other current plan of the household that shares a week `replaced`. The waiters'
   * notification (`RUN_ENDED_CHANNEL`) goes in the same statement. False when it had ended already.
   */
  finish(planId: string, outcome: RunOutcome, now: Date, trx?: Knex.Transaction): Promise<boolean>;
  /** Writes day `index` of a current plan; false when the plan is not current (any more). */
  setDay(householdId: string, planId: string, index: number, day: PlanDay, trx?: Knex.Transaction): Promise<boolean>;
  /** Dinners of the household's current plans dated `from` (inclusive) to `to` (exclusive). */
  dinnersBetween(householdId: string, from: string, to: string): Promise<{ date: string; id: string; origin: 'own' | 'starter' }[]>;
  /** Every dinner (a day with a dish) of the household's current plans, by date. */
  plannedDinners(householdId: string): Promise<PlannedDinner[]>;
  /** Changes whenever the household's current plans or their days change. */
  plannedVersion(householdId: string): Promise<string>;
}

/** The plans in PostgreSQL (table `plans`). */
export class ObjectionPlanStore implements PlanStore {
  private readonly Plan: typeof PlanModel;

  constructor(private readonly knex: Knex) {
    this.Plan = PlanModel.bindKnex(knex);
  }

  private stored(row: PlanModel): StoredPlan {
    return { ...row.toApi(), replanOf: row.replanOf ?? null, version: row.version };
  }

  async createRun(
    input: { householdId: string; startDate: string; weeks: number; replanOf: string | null },
    now: Date,
    trx?: Knex.Transaction,
  ): Promise<StoredPlan> {
    try {
      const row = await this.Plan.query(trx)
        .insert({ ...input, status: 'queued', days: [], unmet: [], conflicts: [], softCost: null, createdAt: now.toISOString(), finishedAt: null, version: 1 })
        .returning('*');
      return this.stored(row);
    } catch (err) {
      // The partial unique index on the household's queued or running run: exactly one of parallel POSTs gets in.
      if (isPgError(err, PG.uniqueViolation)) throw new ConflictError('plan_run_in_progress', 'A plan run of this household is queued or running');
      throw err;
    }
  }

  async get(householdId: string, planId: string, trx?: Knex.Transaction): Promise<StoredPlan | undefined> {
    const row = await this.Plan.query(trx).findOne({ id: planId, householdId });
    return row && this.stored(row);
  }

  async byId(planId: string, trx?: Knex.Transaction): Promise<StoredPlan | undefined> {
    const row = await this.Plan.query(trx).findById(planId);
    return row && this.stored(row);
  }

  async listCurrent(householdId: string, from: string, to: string): Promise<Plan[]> {
    const rows = await this.Plan.query()
      .where({ householdId, status: 'done' })
      .where('startDate', '<=', to)
      .whereRaw('start_date + 7 * weeks > ?::date', [from])
      .orderBy([{ column: 'startDate' }, { column: 'id' }]);
    return rows.map((r) => r.toApi());
  }

  // A run's hot path is plain SQL, one statement each way (the claim with its reads; the outcome with
  // the plans it replaces and the notification): a run's fixed cost is mostly statements.
  async claim(planId: string, trx?: Knex.Transaction): Promise<{ plan: RunPlan; history: RunHistory } | undefined> {
    const claimed = `update plans set status = 'running' where id = ? and status in ('queued', 'running')
                     returning id, household_id, start_date, weeks, replan_of`;
    return this.readRun(claimed, planId, trx);
  }

  async history(plan: RunPlan): Promise<RunHistory> {
    return (
      (await this.readRun('select id, household_id, start_date, weeks, replan_of from plans where id = ?', plan.id))?.history ?? {
        earlierDinners: [],
        knownStarterIds: [],
        replanDays: [],
      }
    );
  }

  private async readRun(run: string, planId: string, trx?: Knex.Transaction): Promise<{ plan: RunPlan; history: RunHistory } | undefined> {
    // The subqueries see the plans as they were before the claim (one snapshot); none of them reads the claimed row.
    const { rows } = await (trx ?? this.knex).raw(
      `with c as (${run})
       select c.id, c.household_id, to_char(c.start_date, 'YYYY-MM-DD') as start_date, c.weeks, c.replan_of,
         coalesce((select r.days from plans r where r.id = c.replan_of and r.household_id = c.household_id), '[]'::jsonb) as replan_days,
         (select coalesce(array_agg(distinct d->'dish'->>'id' order by d->'dish'->>'id'), '{}')
            from plans p cross join jsonb_array_elements(p.days) d
           where p.household_id = c.household_id and p.status in ('done', 'replaced') and p.start_date < c.start_date
             and d->'dish'->>'origin' = 'starter') as known_starter_ids,
         (select coalesce(jsonb_agg(jsonb_build_object('date', d->>'date', 'id', d->'dish'->>'id', 'origin', d->'dish'->>'origin') order by d->>'date'), '[]'::jsonb)
            from plans p cross join jsonb_array_elements(p.days) d
           where p.household_id = c.household_id and p.status = 'done'
             and p.start_date < c.start_date and p.start_date + 7 * p.weeks > c.start_date - ?::int
             and jsonb_typeof(d->'dish') = 'object'
             and d->>'date' >= to_char(c.start_date - ?::int, 'YYYY-MM-DD') and d->>'date' < to_char(c.start_date, 'YYYY-MM-DD')) as earlier_dinners
       from c`,
      [planId, EARLIER_DINNERS_DAYS, EARLIER_DINNERS_DAYS],
    );
    const row = rows[0] as
      | {
          id: string;
          household_id: string;
          start_date: string;
          weeks: number;
          replan_of: string | null;
          replan_days: PlanDay[];
          known_starter_ids: string[];
          earlier_dinners: RunHistory['earlierDinners'];
        }
      | undefined;
    if (!row) return undefined;
    return {
      plan: { id: row.id, householdId: row.household_id, startDate: row.start_date, weeks: row.weeks, replanOf: row.replan_of },
      history: { earlierDinners: row.earlier_dinners, knownStarterIds: row.known_starter_ids, replanDays: row.replan_days },
    };
  }

  async finish(planId: string, outcome: RunOutcome, now: Date, trx?: Knex.Transaction): Promise<boolean> {
    const v =
      outcome.status === 'done'
        ? { softCost: outcome.softCost, days: outcome.days, unmet: outcome.unmet, conflicts: [] }
        : outcome.status === 'infeasible'
          ? { softCost: null, days: [], unmet: [], conflicts: outcome.conflicts }
          : { softCost: null, days: [], unmet: [], conflicts: [] };
    // Conditional on the run still being open: a run done again (its first instance died after
    // writing) writes nothing the second time. A done run replaces every other current plan of the
    // household sharing a week with it.
    const { rows } = await (trx ?? this.knex).raw(
      `with fin as (
         update plans set status = ?, soft_cost = ?, days = ?::jsonb, unmet = ?::jsonb, conflicts = ?::jsonb,
                finished_at = ?::timestamptz, version = version + 1
          where id = ? and status in ('queued', 'running')
         returning id, household_id, start_date, weeks
       ), replaced as (
         update plans p set status = 'replaced', version = p.version + 1
           from fin
          where ?::boolean and p.household_id = fin.household_id and p.status = 'done' and p.id <> fin.id
            and p.start_date < fin.start_date + 7 * fin.weeks and p.start_date + 7 * p.weeks > fin.start_date
       )
       select pg_notify(?, fin.id::text) from fin`,
      [
        outcome.status,
        v.softCost,
        JSON.stringify(v.days),
        JSON.stringify(v.unmet),
        JSON.stringify(v.conflicts),
        now.toISOString(),
        planId,
        outcome.status === 'done',
        RUN_ENDED_CHANNEL,
      ],
    );
    return rows.length > 0;
  }

  async setDay(householdId: string, planId: string, index: number, day: PlanDay, trx?: Knex.Transaction): Promise<boolean> {
    // One element of the jsonb array, in place, on the plan only while it is current: Objection
    // has no jsonb_set, so the patch is raw on the model's query.
    const n = await this.Plan.query(trx)
      .patch({
        days: this.knex.raw('jsonb_set(days, ?::text[], ?::jsonb)', [`{${index}}`, JSON.stringify(day)]) as unknown as PlanDay[],
        version: this.knex.raw('version + 1') as unknown as number,
      })
      .where({ id: planId, householdId, status: 'done' });
    return n > 0;
  }

  async dinnersBetween(householdId: string, from: string, to: string): Promise<{ date: string; id: string; origin: 'own' | 'starter' }[]> {
    const rows = await this.Plan.query()
      .select(this.knex.raw(`d->>'date' as date, d->'dish'->>'id' as id, d->'dish'->>'origin' as origin`))
      .joinRaw('cross join jsonb_array_elements(plans.days) d')
      .where({ householdId, status: 'done' })
      .where('startDate', '<', to)
      .whereRaw('start_date + 7 * weeks > ?::date', [from])
      .whereRaw(`jsonb_typeof(d->'dish') = 'object'`)
      .whereRaw(`d->>'date' >= ? and d->>'date' < ?`, [from, to])
      .orderByRaw(`d->>'date'`);
    return (rows as unknown as { date: string; id: string; origin: 'own' | 'starter' }[]).map((r) => ({ date: r.date, id: r.id, origin: r.origin }));
  }

  async plannedDinners(householdId: string): Promise<PlannedDinner[]> {
    const rows = await this.Plan.query()
      .select(this.knex.raw(`plans.id as "planId", d->>'date' as date, d->>'servingTime' as "servingTime", d->'dish'->>'name' as "dishName"`))
      .joinRaw('cross join jsonb_array_elements(plans.days) d')
      .where({ householdId, status: 'done' })
      .whereRaw(`jsonb_typeof(d->'dish') = 'object'`)
      .orderByRaw(`d->>'date', plans.id`);
    return (rows as unknown as PlannedDinner[]).map((r) => ({ planId: r.planId, date: r.date, servingTime: r.servingTime, dishName: r.dishName }));
  }

  async plannedVersion(householdId: string): Promise<string> {
    const row = (await this.Plan.query()
      .select(this.knex.raw(`count(*)::text || ':' || coalesce(md5(string_agg(id::text || '/' || version, ',' order by id)), '') as v`))
      .where({ householdId, status: 'done' })
      .first()) as unknown as { v: string };
    return row.v;
  }
}
