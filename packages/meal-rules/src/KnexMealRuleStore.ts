import type { Knex } from 'knex';
import type { MealRuleResponse, MealRuleStore } from './MealRuleStore.js';
import type { CreateMealRuleRequest } from './parser/index.js';
import { canonicalPayload } from './payload.js';
import type { MealRuleKind, RuleSource } from './schemas.js';

interface Row {
  id: string;
  householdId: string;
  kind: MealRuleKind;
  strength: MealRuleResponse['strength'];
  scope: MealRuleResponse['scope'];
  startDate: string | null;
  endDate: string | null;
  source: RuleSource;
  payload: MealRuleResponse['payload'];
  createdAt: Date;
  updatedAt: Date;
}

/** The rules table on knex (one statement per operation, so no transaction is needed). */
export class KnexMealRuleStore implements MealRuleStore {
  constructor(private readonly knex: Knex) {}

  /** Dates leave the database as text: pg would turn a `date` into a local-midnight Date. */
  private columns(): (string | Knex.Raw)[] {
    return [
      'id',
      'householdId',
      'kind',
      'strength',
      'scope',
      this.knex.raw('start_date::text as start_date'),
      this.knex.raw('end_date::text as end_date'),
      'source',
      'payload',
      'createdAt',
      'updatedAt',
    ];
  }

  async list(householdId: string): Promise<MealRuleResponse[]> {
    const rows: Row[] = await this.knex('meal_rules')
      .select(this.columns())
      .where({ householdId })
      .orderBy([{ column: 'createdAt' }, { column: 'id' }]);
    return rows.map(toResponse);
  }

  async create(householdId: string, request: CreateMealRuleRequest, source: RuleSource, now: Date): Promise<MealRuleResponse> {
    const [row] = (await this.knex('meal_rules')
      .insert({ householdId, ...writable(request), source, createdAt: now, updatedAt: now })
      .returning(this.columns() as string[])) as Row[];
    return toResponse(row as Row);
  }

  async replace(householdId: string, ruleId: string, request: CreateMealRuleRequest, source: RuleSource, now: Date): Promise<MealRuleResponse | undefined> {
    const [row] = (await this.knex('meal_rules')
      .update({ ...writable(request), source, updatedAt: now })
      .where({ householdId, id: ruleId })
      .returning(this.columns() as string[])) as Row[];
    return row && toResponse(row);
  }

  async remove(householdId: string, ruleId: string): Promise<boolean> {
    const count = await this.knex('meal_rules').where({ householdId, id: ruleId }).delete();
    return count > 0;
  }

  async hasKind(householdId: string, kind: MealRuleKind): Promise<boolean> {
    const row = await this.knex('meal_rules').first('id').where({ householdId, kind });
    return row !== undefined;
  }
}

function writable(request: CreateMealRuleRequest) {
  const payload = canonicalPayload(request.payload);
  return {
    kind: payload.kind,
    strength: request.strength,
    scope: request.scope,
    startDate: request.startDate,
    endDate: request.endDate,
    payload: JSON.stringify(payload),
  };
}

function toResponse(row: Row): MealRuleResponse {
  return {
    id: row.id,
    householdId: row.householdId,
    kind: row.kind,
    strength: row.strength,
    scope: row.scope,
    startDate: row.startDate,
    endDate: row.endDate,
    source: row.source,
    // jsonb keeps its own key order; answer in the spec's order.
    payload: canonicalPayload(row.payload),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
