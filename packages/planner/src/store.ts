import type { PlannedDinner } from '@svc/contracts';
import { isPgError, PG } from '@svc/db';
import { ConflictError } from '@svc/http-kit';
import type { Knex } from 'knex';
import { PlanModel } from './models/index.js';
import type { Plan, PlanDay } from './schemas.js';

/** A plan with what only the package keeps: the plan a replan keeps locked days of, and the row's version. */
export type StoredPlan = Plan & { replanOf: string | null; version: number };

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
  /** Marks a queued run running; undefined when it has ended already (a rerun of a finished job). */
  claim(planId: string, trx?: Knex.Transaction): Promise<StoredPlan | undefined>;
  /**
   * Writes a run's outcome, once: only while the run is still queued or running. A done run makes
   * every other current plan of the household that shares a week `replaced`. False when it had ended already.
   */
  finish(planId: string, outcome: RunOutcome, now: Date, trx: Knex.Transaction): Promise<boolean>;
  /** Writes day `index` of a current plan; false when the plan is not current (any more). */
  setDay(householdId: string, planId: string, index: number, day: PlanDay, trx?: Knex.Transaction): Promise<boolean>;
  /** Dinners of the household's current plans dated `from` (inclusive) to `to` (exclusive). */
  dinnersBetween(householdId: string, from: string, to: string): Promise<{ date: string; id: string; origin: 'own' | 'starter' }[]>;
  /** Starter dish ids that a done or replaced plan of the household starting before `before` had. */
  knownStarterIds(householdId: string, before: string): Promise<string[]>;
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

  async claim(planId: string, trx?: Knex.Transaction): Promise<StoredPlan | undefined> {
    const [row] = (await this.Plan.query(trx)
      .patch({ status: 'running' })
      .where('id', planId)
      .whereIn('status', ['queued', 'running'])
      .returning('*')) as unknown as PlanModel[];
    return row && this.stored(row);
  }

  async finish(planId: string, outcome: RunOutcome, now: Date, trx: Knex.Transaction): Promise<boolean> {
    const values =
      outcome.status === 'done'
        ? { softCost: outcome.softCost, days: outcome.days, unmet: outcome.unmet, conflicts: [] }
        : outcome.status === 'infeasible'
          ? { softCost: null, days: [], unmet: [], conflicts: outcome.conflicts }
          : { softCost: null, days: [], unmet: [], conflicts: [] };
    // Conditional on the run still being open: a run done again (its first instance died after
    // writing) writes nothing the second time.
    const [row] = (await this.Plan.query(trx)
      .patch({ ...values, status: outcome.status, finishedAt: now.toISOString(), version: this.knex.raw('version + 1') as unknown as number })
      .where('id', planId)
      .whereIn('status', ['queued', 'running'])
      .returning('*')) as unknown as PlanModel[];
    if (!row) return false;
    if (outcome.status === 'done') {
      // Every other current plan of the household sharing a week with this one is replaced by it.
      await this.Plan.query(trx)
        .patch({ status: 'replaced', version: this.knex.raw('version + 1') as unknown as number })
        .where({ householdId: row.householdId, status: 'done' })
        .whereNot('id', planId)
        .whereRaw('start_date < ?::date + 7 * ?', [row.startDate, row.weeks])
        .whereRaw('start_date + 7 * weeks > ?::date', [row.startDate]);
    }
    return true;
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

  async knownStarterIds(householdId: string, before: string): Promise<string[]> {
    const rows = await this.Plan.query()
      .distinct(this.knex.raw(`d->'dish'->>'id' as id`))
      .joinRaw('cross join jsonb_array_elements(plans.days) d')
      .where({ householdId })
      .whereIn('status', ['done', 'replaced'])
      .where('startDate', '<', before)
      .whereRaw(`d->'dish'->>'origin' = 'starter'`)
      .orderBy('id');
    return (rows as unknown as { id: string }[]).map((r) => r.id);
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
