import objection from 'objection';

const { Model } = objection;

/**
 * The base of every package's Objection models. Column names are mapped by the knex the model is
 * bound to (`createKnex` sets knexSnakeCaseMappers), so models use camelCase like the rest of the
 * code. A model is never bound globally (`Model.knex()`): stores bind it to the knex (or
 * transaction) they were given with `Model.bindKnex(knex)` or `Model.query(trx)`, so two apps in
 * one process (the tests run many) never share a database.
 */
export class BaseModel extends Model {
  /** Rows are written as given; the API layer has already validated the input with the same schemas. */
  static override useLimitInFirst = true;
}

export type { ModelClass, QueryBuilder, Transaction } from 'objection';
export { objection };
