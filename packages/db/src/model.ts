import objection from 'objection';
import { type ApiFormat, formattedSql } from './api-format.js';

export type { ApiFormat };

const { Model } = objection;

/** A JSON schema as the models take it (the same literal objects the HTTP layer validates with). */
export type ModelSchema = { type?: unknown; properties?: Record<string, unknown>; [key: string]: unknown };

/**
 * The jsonSchema of a model whose row holds an API shape plus columns of its own: the API
 * schema's properties (so a field is declared once, for ajv, OpenAPI, the compiler and Objection)
 * and the row's own columns. Nothing is required at this level: Objection validates patches too,
 * and NOT NULL lives in the migration.
 */
export function rowSchema(api: ModelSchema, own: Record<string, unknown> = {}): objection.JSONSchema {
  return { type: 'object', properties: { ...(api.properties ?? {}), ...own } } as objection.JSONSchema;
}

/** A timestamp as models hold it: ISO 8601 UTC with milliseconds (pg's Date is turned into this on read). */
export const TimestampSchema = { type: 'string', format: 'date-time' } as const;

/** Per model class: its `apiObject`, made once. */
const apiObjectMakers = new WeakMap<typeof BaseModel, (m: object) => Record<string, unknown>>();

/**
 * The function a model's `apiObject` runs: an object literal of the declared fields, compiled once
 * per model class (a loop over the names, reading each by key, was far slower on the hot GETs:
 * docs/benchmarks.md, "What the bench settled").
 * The names are the model's own declaration, each written as a JSON string.
 */
function apiObjectMaker(fields: readonly string[], formats: Readonly<Record<string, ApiFormat>>): (m: object) => Record<string, unknown> {
  const body = fields
    .map((f) => {
      const key = JSON.stringify(f);
      const format = formats[f];
      if (typeof format !== 'object') return `${key}: m[${key}] ?? null`;
      const members = format.members.map((n) => `${JSON.stringify(n)}: o[${JSON.stringify(n)}]`).join(', ');
      return `${key}: Array.isArray(m[${key}]) ? m[${key}].map((o) => ({ ${members} })) : (m[${key}] ?? null)`;
    })
    .join(',\n    ');
  return new Function('m', `return {\n    ${body}\n  };`) as (m: object) => Record<string, unknown>;
}

/**
 * The base of every package's Objection models. Column names are mapped by the knex the model is
 * bound to (`createKnex` sets knexSnakeCaseMappers), so models use camelCase like the rest of the
 * code. A model is never bound globally (`Model.knex()`): stores bind it to the knex (or
 * transaction) they were given with `Model.bindKnex(knex)` or `Model.query(trx)`, so two apps in
 * one process (the tests run many) never share a database.
 *
 * Timestamps: the columns named in `timestamps` are held as ISO strings (what the API answers),
 * converted from pg's Date on read; writes pass ISO strings or Dates.
 */
export class BaseModel extends Model {
  /** `first()` adds `limit 1`. */
  static override useLimitInFirst = true;
  /** Columns held as ISO 8601 strings. */
  static timestamps: readonly string[] = [];
  /** bytea columns: held as Buffers; a read that carries them in JSON (a declared read) writes them as hex, turned back here. */
  static binaries: readonly string[] = [];
  /**
   * How PostgreSQL writes an API field whose column's own JSON is not the API's (`ApiFormat`;
   * `timestamps` aside): with `timestamps`, the one declaration `apiColumnsSql` selects by, so a
   * statement whose row (or `row_to_json` of it) is the answer writes what `toApi` answers.
   */
  static apiFormats: Readonly<Record<string, ApiFormat>> = {};
  /** The API fields the model answers (its `toApi`), in the answer's order; none for a model of no API shape of its own. */
  static apiFields: readonly string[] = [];

  /** `apiColumnsSql` of the model's `apiFields` on its table (or the table's alias `alias`). */
  static apiColumnsSql(alias: string = this.tableName): string {
    return apiColumnsSql(alias, this.apiFields, this.timestamps, this.apiFormats);
  }

  /**
   * The instance's `apiFields`, in order, as the API answers them: a field it does not hold is
   * null, a `{ members }` field's objects carry those members alone (timestamps, dates and times
   * are held as the API writes them: `$parseDatabaseJson`). What a model's `toApi` answers, made
   * from the same declaration as `apiColumnsSql`.
   */
  protected apiObject(): Record<string, unknown> {
    const model = this.constructor as typeof BaseModel;
    let make = apiObjectMakers.get(model);
    if (make === undefined) {
      make = apiObjectMaker(model.apiFields, model.apiFormats);
      apiObjectMakers.set(model, make);
    }
    return make(this);
  }

  /**
   * Objection's validator with its own options, plus strict mode off (as the HTTP layer's ajv has
   * it): a row schema made from an API schema may carry formats the HTTP layer defines and checks
   * (http-kit's `single-line`, `multi-line`); here they are ignored rather than refused, since the
   * request was checked against them before any row is made.
   */
  static override createValidator(): objection.Validator {
    return new objection.AjvValidator({
      onCreateAjv: () => {},
      options: { allErrors: true, validateSchema: false, ownProperties: true, strict: false, logger: false },
    });
  }

  override $parseDatabaseJson(json: objection.Pojo): objection.Pojo {
    const parsed = super.$parseDatabaseJson(json);
    const model = this.constructor as typeof BaseModel;
    for (const column of model.timestamps) {
      const value = parsed[column];
      if (value instanceof Date) parsed[column] = value.toISOString();
    }
    for (const column of model.binaries) {
      const value = parsed[column];
      if (typeof value === 'string') parsed[column] = Buffer.from(value, 'hex');
    }
    return parsed;
  }
}

export type { ModelClass, Pojo, QueryBuilder, Transaction } from 'objection';
export { objection };

/**
 * SQL formatting a timestamptz `column` as the API writes timestamps, exactly as
 * `Date.prototype.toISOString` would after pg read it (UTC, milliseconds cut, not rounded, as pg's
 * driver cuts them): `2026-11-25T13:16:28.416Z`. For reads whose rows do not pass through a Date
 * (a JSON value built by PostgreSQL, a statement whose row becomes the answer as it is).
 */
export function isoTimestampSql(column: string): string {
  return `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/**
 * A select list of the columns `names` (camelCase, as the model and the API name them; each the
 * snake_case column of the table aliased `alias`), every one aliased back to its camelCase name, and
 * those among `timestamps` formatted by `isoTimestampSql`, those in `formats` as it says (a model's
 * `timestamps` and `apiFormats`): the row (or `row_to_json` of it) becomes the model with the values
 * a read through knex would give it, and with every field formatted, the API's answer itself. By
 * name, never `*`: a migration that adds a column must not break a prepared statement on live
 * connections.
 */
export function apiColumnsSql(
  alias: string,
  names: readonly string[],
  timestamps: readonly string[] = [],
  formats: Readonly<Record<string, ApiFormat>> = {},
): string {
  return names
    .map((name) => {
      const column = `${alias}.${name.replace(/[A-Z]/g, (m) => `_${m.toLowerCase()}`)}`;
      return `${timestamps.includes(name) ? isoTimestampSql(column) : formattedSql(column, formats[name])} as "${name}"`;
    })
    .join(', ');
}

/**
 * SQL of one `json` array: the rows of `from` (a table and its alias) where `where`, each the
 * object of the select list `columns` (naming `from`'s alias), in `orderBy`'s order; `[]` when
 * there are none. The shape of a list read lent to the session statement.
 */
export function jsonRowsSql(from: string, columns: string, where: string, orderBy: string): string {
  return `(select coalesce(json_agg(row_to_json(x) order by ${orderBy}), '[]'::json)
        from ${from} cross join lateral (select ${columns}) x
       where ${where})`;
}
