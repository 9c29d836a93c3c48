import { BaseModel, type objection, type Pojo, rowSchema } from '@svc/db';
import { type Plan, type PlanDay, PlanSchema, type PlanStatus } from '../schemas.js';

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/** A day with its members in the contract's order (jsonb keeps its own key order). */
function dayInOrder(d: PlanDay): PlanDay {
  const dish = d.dish && {
    id: d.dish.id,
    origin: d.dish.origin,
    name: d.dish.name,
    category: d.dish.category,
    activeMinutes: d.dish.activeMinutes,
    priceClass: d.dish.priceClass,
  };
  const why = d.why.map((w) => ({ ruleId: w.ruleId, eventId: w.eventId, text: w.text }));
  return { date: d.date, servingTime: d.servingTime, dinner: d.dinner, dish, servings: d.servings, locked: d.locked, why };
}

/**
 * One row of `plans`: a run of the planner for one household and what it ended with. The API's
 * fields are the row's, days, unmet and conflicts as jsonb; `replanOf` and `version` are the
 * row's own (the run's kept days, the calendar feed's revalidation).
 */
export class PlanModel extends BaseModel {
  static override tableName = 'plans';
  static override idColumn = 'id';
  static override timestamps = ['createdAt', 'finishedAt'];
  static override jsonSchema = rowSchema(PlanSchema, {
    days: { type: 'array' },
    unmet: { type: 'array' },
    conflicts: { type: 'array' },
    replanOf: { type: ['string', 'null'] },
    version: { type: 'integer' },
  });
  static override jsonAttributes = ['days', 'unmet', 'conflicts'];
  /** The start date as `YYYY-MM-DD` straight from PostgreSQL. */
  static override apiFormats = { startDate: 'date' } as const;
  /** PlanResponse's fields, in the contract's order. */
  static override apiFields: readonly string[] = Object.keys(PlanSchema.properties);

  declare id: string;
  /** The household the plan is for (an id of @svc/households; the relations migration adds the foreign key). */
  declare householdId: string;
  declare startDate: string;
  declare weeks: number;
  declare status: PlanStatus;
  declare softCost: number | null;
  declare days: PlanDay[];
  declare unmet: Plan['unmet'];
  declare conflicts: Plan['conflicts'];
  declare replanOf: string | null;
  declare createdAt: string;
  declare finishedAt: string | null;
  declare version: number;

  /** Holds the start date as YYYY-MM-DD however the row was read (`select *` gives pg's local-midnight Date). */
  override $parseDatabaseJson(json: Pojo): Pojo {
    const parsed = super.$parseDatabaseJson(json);
    const value = parsed.startDate;
    if (value instanceof Date) parsed.startDate = `${pad(value.getFullYear(), 4)}-${pad(value.getMonth() + 1)}-${pad(value.getDate())}`;
    return parsed;
  }

  /** PlanResponse. */
  toApi(): Plan {
    return {
      id: this.id,
      householdId: this.householdId,
      startDate: this.startDate,
      weeks: this.weeks,
      status: this.status,
      createdAt: this.createdAt,
      finishedAt: this.finishedAt ?? null,
      softCost: this.softCost ?? null,
      days: (this.days ?? []).map(dayInOrder),
      unmet: (this.unmet ?? []).map((u) => ({ ruleId: u.ruleId, dates: u.dates, cost: u.cost, text: u.text })),
      conflicts: (this.conflicts ?? []).map((c) => ({ ruleIds: c.ruleIds, eventIds: c.eventIds, dates: c.dates, text: c.text })),
    };
  }

  override $formatJson(_json: Pojo): Pojo {
    return this.toApi();
  }
}

export type PlanQuery = objection.QueryBuilder<PlanModel>;
