import type { SessionReadAhead } from '@svc/contracts';
import { isoTimestampSql, type Pojo } from '@svc/db';
import { preparedQuery, readAhead } from '@svc/http-kit';
import type { Knex } from 'knex';
import { MealRuleModel } from './models/index.js';
import { canonicalPayload } from './payload.js';
import type { MealRule, MealRuleKind, MealRuleRequest, RuleSource } from './schemas.js';

/**
 * What the meal-rules service needs from storage. Every lookup is scoped by household: a rule id of
 * another household is simply not there. Time comes in as `now`; the store holds no clock. A method
 * that can join a transaction takes it last (`trx`).
 */
export interface MealRuleStore {
  /** The household's rules, oldest first (createdAt, then id). */
  list(householdId: string, trx?: Knex.Transaction): Promise<MealRule[]>;
  create(householdId: string, request: MealRuleRequest, source: RuleSource, now: Date, trx?: Knex.Transaction): Promise<MealRule>;
  /** Full replacement (kind included); undefined when the household has no such rule. */
  replace(householdId: string, ruleId: string, request: MealRuleRequest, source: RuleSource, now: Date, trx?: Knex.Transaction): Promise<MealRule | undefined>;
  /** False when the household has no such rule. */
  remove(householdId: string, ruleId: string, trx?: Knex.Transaction): Promise<boolean>;
  /** Whether the household has at least one rule of this kind. */
  hasKind(householdId: string, kind: MealRuleKind, trx?: Knex.Transaction): Promise<boolean>;
  /** Runs `work` in one database transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T>;
}

/** The columns a request writes (`kind` twice: its own column, and inside the payload). */
function writable(request: MealRuleRequest) {
  const payload = canonicalPayload(request.payload);
  return { kind: payload.kind, strength: request.strength, scope: request.scope, startDate: request.startDate, endDate: request.endDate, payload };
}

/**
 * The columns `apiColumns` selects, by name and aliased to the model's camelCase names, timestamps
 * formatted by PostgreSQL as the API writes them: the same text in LIST_RULES and in the session
 * read's read-ahead, so both give the model the same values.
 */
const LIST_COLUMNS = `r.id, r.household_id as "householdId", r.kind, r.strength, r.scope, r.start_date::text as "startDate", r.end_date::text as "endDate",
                r.source, r.payload, ${isoTimestampSql('r.created_at')} as "createdAt", ${isoTimestampSql('r.updated_at')} as "updatedAt"`;

/**
 * The list read outside a transaction (GET …/rules, the hot read) when the session read did not
 * lend it: one prepared statement of LIST_COLUMNS, so the rows become models (and their answers)
 * without knex building, compiling and mapping a query each time.
 */
const LIST_RULES = {
  name: 'meal_rules_list',
  text: `select ${LIST_COLUMNS} from meal_rules r where r.household_id = $1 order by r.created_at, r.id`,
};

/** The name of the list read the session statement loads ahead (GET /api/v1/households/{householdId}/rules). */
const LIST_READ_AHEAD = 'meal_rules_list';

/**
 * GET …/rules as a read the session statement loads in its own round trip (SessionReadAhead): the
 * rows of LIST_RULES, in its order, as one JSON array (the session statement asks it only for a
 * member of the household, with households' `isMember`: this package names only its own table).
 */
export const rulesReadAhead: SessionReadAhead = {
  name: LIST_READ_AHEAD,
  path: '/api/v1/households/{householdId}/rules',
  select: (_accountId, id) =>
    `(select coalesce(json_agg(row_to_json(x) order by r.created_at, r.id), '[]'::json)
        from meal_rules r cross join lateral (select ${LIST_COLUMNS}) x
       where r.household_id = ${id})`,
};

/**
 * MealRuleStore on Objection: MealRuleModel bound to the knex the host hands in. Every operation is
 * one statement (each scoped by household), so none needs a transaction of its own.
 */
export class ObjectionMealRuleStore implements MealRuleStore {
  private readonly Rule: typeof MealRuleModel;

  constructor(knex: Knex) {
    this.Rule = MealRuleModel.bindKnex(knex);
  }

  private mine(householdId: string, ruleId: string, trx?: Knex.Transaction) {
    return this.Rule.query(trx).where({ householdId, id: ruleId });
  }

  async list(householdId: string, trx?: Knex.Transaction): Promise<MealRule[]> {
    if (!trx) {
      // The session read loaded the list ahead (no statement of its own), or this one statement.
      const found =
        (readAhead(LIST_READ_AHEAD, householdId) as Pojo[] | undefined) ??
        (await preparedQuery<Pojo>(this.Rule.knex(), { ...LIST_RULES, values: [householdId] }));
      return found.map((row) => this.Rule.fromDatabaseJson(row).toApi());
    }
    const rows = await this.Rule.query(trx)
      .modify('apiColumns')
      .where({ householdId })
      .orderBy([{ column: 'createdAt' }, { column: 'id' }]);
    return rows.map((row) => row.toApi());
  }

  async create(householdId: string, request: MealRuleRequest, source: RuleSource, now: Date, trx?: Knex.Transaction): Promise<MealRule> {
    const at = now.toISOString();
    // The id comes from the column default (gen_random_uuid()); everything else is known here.
    const rule = this.Rule.fromJson({ householdId, ...writable(request), source, createdAt: at, updatedAt: at });
    const inserted = await this.Rule.query(trx).insert(rule).returning('id');
    rule.id = inserted.id;
    return rule.toApi();
  }

  async replace(
    householdId: string,
    ruleId: string,
    request: MealRuleRequest,
    source: RuleSource,
    now: Date,
    trx?: Knex.Transaction,
  ): Promise<MealRule | undefined> {
    const updatedAt = now.toISOString();
    const values = { ...writable(request), source, updatedAt };
    const rows = await this.mine(householdId, ruleId, trx).patch(values).returning('createdAt');
    const row = rows[0];
    if (!row) return undefined;
    return this.Rule.fromJson({ id: ruleId, householdId, ...values, createdAt: row.createdAt }).toApi();
  }

  async remove(householdId: string, ruleId: string, trx?: Knex.Transaction): Promise<boolean> {
    return (await this.mine(householdId, ruleId, trx).delete()) > 0;
  }

  async hasKind(householdId: string, kind: MealRuleKind, trx?: Knex.Transaction): Promise<boolean> {
    return (await this.Rule.query(trx).select('id').where({ householdId, kind }).first()) !== undefined;
  }

  transaction<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return this.Rule.knex().transaction(work);
  }
}
