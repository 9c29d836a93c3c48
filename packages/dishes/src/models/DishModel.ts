import { BaseModel, objection, type Pojo, rowSchema } from '@svc/db';
import { type Dish, DishSchema } from '../schemas.js';

const { raw } = objection;

/**
 * One row of `dishes`: a dish of one household. Every column but `nameKey` is part of the API
 * shape, so the row schema is the response schema plus that column.
 */
export class DishModel extends BaseModel {
  static override tableName = 'dishes';
  static override idColumn = 'id';
  static override timestamps = ['createdAt', 'updatedAt'];
  static override jsonSchema = rowSchema(DishSchema, { nameKey: { type: 'string' } });
  /** `tags` is a text[] column, not JSON: written as the array it is. */
  static override jsonAttributes: string[] = [];

  /** The Dish fields, in the contract's order: what `toApi` answers and `apiColumns` selects. */
  static override apiFields: readonly string[] = Object.keys(DishSchema.properties);

  /** `apiColumns`: the API fields, timestamps as text straight from PostgreSQL (as the API writes them). */
  static override modifiers = {
    apiColumns(query: objection.QueryBuilder<DishModel>) {
      query.select(raw(DishModel.apiColumnsSql()));
    },
  };

  declare id: string;
  /** The household the dish belongs to (an id of @svc/households; the relations migration adds the foreign key). */
  declare householdId: string;
  declare name: string;
  /** `name` in lower case: the list's order and what `q` is looked for in. */
  declare nameKey: string;
  declare category: Dish['category'];
  declare activeMinutes: number;
  declare priceClass: Dish['priceClass'];
  declare tags: string[];
  declare madeAgain: boolean;
  declare createdAt: string;
  declare updatedAt: string;

  /** The Dish answer. */
  toApi(): Dish {
    return this.apiObject() as Dish;
  }

  /** JSON of a model instance is its API shape too. */
  override $formatJson(_json: Pojo): Pojo {
    return this.toApi();
  }
}
