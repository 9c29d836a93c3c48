import { BaseModel, objection, type Pojo, rowSchema } from '@svc/db';
import { canonicalPayload } from '../payload.js';
import { type MealRule, type MealRuleKind, MealRuleResponseSchema, type RULE_SCOPES, type RULE_STRENGTHS, type RuleSource } from '../schemas.js';

const { raw } = objection;

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/**
 * One row of `meal_rules`: a rule of one household. Every column is part of the API shape, so the
 * row schema is the response schema, except `payload`: the HTTP layer has already checked it
 * against the kind's schema, and Objection only needs to know it is a JSON object (stored as jsonb).
 */
export class MealRuleModel extends BaseModel {
  static override tableName = 'meal_rules';
  static override idColumn = 'id';
  static override timestamps = ['createdAt', 'updatedAt'];
  static override jsonSchema = rowSchema(MealRuleResponseSchema, { payload: { type: 'object' } });

  /** The two dates as `YYYY-MM-DD` straight from PostgreSQL (with `timestamps`: `apiColumnsSql`). */
  static override apiFormats = { startDate: 'date', endDate: 'date' } as const;

  /** MealRuleResponse's fields, in the contract's order. */
  static override apiFields: readonly string[] = Object.keys(MealRuleResponseSchema.properties);

  /**
   * `apiColumns`: the API fields (`apiColumnsSql`), the dates and timestamps as text straight from
   * PostgreSQL, so the answer depends neither on the pg driver's date parsing (a local-midnight
   * Date) nor on the server's DateStyle.
   */
  static override modifiers = {
    apiColumns(query: objection.QueryBuilder<MealRuleModel>) {
      query.select(raw(MealRuleModel.apiColumnsSql()));
    },
  };

  declare id: string;
  /** The household the rule belongs to (an id of @svc/households; the relations migration adds the foreign key). */
  declare householdId: string;
  /** Always equal to `payload.kind` (a check constraint says so). */
  declare kind: MealRuleKind;
  declare strength: (typeof RULE_STRENGTHS)[number];
  declare scope: (typeof RULE_SCOPES)[number];
  /** YYYY-MM-DD, or null when Permanent. */
  declare startDate: string | null;
  declare endDate: string | null;
  declare source: RuleSource;
  declare payload: MealRule['payload'];
  declare createdAt: string;
  declare updatedAt: string;

  /** Holds the dates as YYYY-MM-DD however the row was read (`apiColumns` gives text already; `select *` gives pg's local-midnight Date). */
  override $parseDatabaseJson(json: Pojo): Pojo {
    const parsed = super.$parseDatabaseJson(json);
    for (const column of ['startDate', 'endDate']) {
      const value = parsed[column];
      if (value instanceof Date) parsed[column] = `${pad(value.getFullYear(), 4)}-${pad(value.getMonth() + 1)}-${pad(value.getDate())}`;
    }
    return parsed;
  }

  /** MealRuleResponse: every column, the payload with `kind` first and then its members in the contract's order (jsonb keeps its own key order). */
  toApi(): MealRule {
    return {
      id: this.id,
      householdId: this.householdId,
      kind: this.kind,
      strength: this.strength,
      scope: this.scope,
      startDate: this.startDate,
      endDate: this.endDate,
      source: this.source,
      payload: canonicalPayload(this.payload),
      createdAt: this.createdAt,
      updatedAt: this.updatedAt,
    };
  }

  /** JSON of a model instance is its API shape too. */
  override $formatJson(_json: Pojo): Pojo {
    return this.toApi();
  }
}
