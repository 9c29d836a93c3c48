import { BaseModel, objection, type Pojo, rowSchema, TimestampSchema } from '@svc/db';
import { ConversationSchema } from '../schemas.js';

const { raw } = objection;

/** One row of `household_conversations`: the day's thread, one per household and calendar date (household time zone). */
export class HouseholdConversationModel extends BaseModel {
  static override tableName = 'household_conversations';
  static override idColumn = 'id';
  static override timestamps = ['createdAt'];
  static override jsonSchema = rowSchema(ConversationSchema, { createdAt: TimestampSchema });

  /** `apiColumns`: `date` formatted by PostgreSQL, so the answer does not depend on the driver's date parsing. */
  static override modifiers = {
    apiColumns(query: objection.QueryBuilder<HouseholdConversationModel>) {
      query.select('id', 'householdId', raw(`to_char(??, 'YYYY-MM-DD') as ??`, ['date', 'date']));
    },
  };

  declare id: string;
  declare householdId: string;
  /** YYYY-MM-DD */
  declare date: string;
  declare createdAt: string;

  override $parseDatabaseJson(json: Pojo): Pojo {
    const parsed = super.$parseDatabaseJson(json);
    const date = parsed.date;
    if (date instanceof Date) {
      parsed.date = `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`;
    }
    return parsed;
  }
}
