import { BaseModel, objection, type Pojo, rowSchema } from '@svc/db';
import { type MealEvent, MealEventSchema, type MealEventType, type Participant, ParticipantSchema } from '../schemas.js';

const { raw } = objection;

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/**
 * One row of `meal_events`: an event of one household. Every column is part of the API shape, so
 * the row schema is the response schema (the household id is an opaque uuid of @svc/households).
 */
export class MealEventModel extends BaseModel {
  static override tableName = 'meal_events';
  static override idColumn = 'id';
  static override timestamps = ['createdAt', 'updatedAt'];
  static override jsonSchema = rowSchema(MealEventSchema, {
    sequence: { type: 'integer', minimum: 0 },
    originalDate: { type: ['string', 'null'] },
    reminderAt: { type: ['string', 'null'] },
  });

  /** How PostgreSQL writes the fields whose columns' own JSON is not the API's (with `timestamps`: `apiColumnsSql`). */
  static override apiFormats = {
    date: 'date',
    servingTime: 'minutes',
    // Only the API's members, in its order: a departed member's `formerMemberId` is never answered.
    participants: { members: Object.keys(ParticipantSchema.properties) },
  } as const;

  /** MealEventResponse's fields, in the contract's order: what `toApi` answers and `apiColumns` selects. */
  static override apiFields: readonly string[] = Object.keys(MealEventSchema.properties);

  /**
   * `apiColumns`: the API fields, every one formatted by PostgreSQL as the API writes it
   * (`apiFormats`, `timestamps`), so the answer depends neither on the pg driver's type parsers
   * nor on the server's DateStyle, and its `row_to_json` is the answer's JSON. The formatted
   * columns keep their names: ORDER BY must therefore qualify the table's columns
   * (`meal_events.date`), or it would sort by the text (and could not use the index).
   */
  static override modifiers = {
    /** `apiColumns` and the iCalendar revision, for the calendar feed. */
    calendarColumns(query: objection.QueryBuilder<MealEventModel>) {
      query.modify('apiColumns').select('sequence');
    },
    apiColumns(query: objection.QueryBuilder<MealEventModel>) {
      query.select(raw(MealEventModel.apiColumnsSql()));
    },
  };

  declare id: string;
  /** The household the event belongs to (an opaque id from @svc/households). */
  declare householdId: string;
  /** YYYY-MM-DD */
  declare date: string;
  declare eventType: MealEventType;
  /** HH:mm, 24-hour (stored to the minute). */
  declare servingTime: string;
  declare availableCookingMinutes: number;
  declare notes: string;
  declare participants: Participant[];
  declare createdAt: string;
  declare updatedAt: string;
  /** The series this event is an occurrence of; null for a single event. */
  declare seriesId: string | null;
  /** Minutes before the serving time the participants are reminded; null: none. */
  declare reminderMinutes: number | null;
  /** When the reminder is due (not part of the API shape). */
  declare reminderAt: string | null;
  /** iCalendar SEQUENCE: 0 when created, one more on every replacement (not part of the API shape). */
  declare sequence: number;

  /**
   * Holds `date` as YYYY-MM-DD and `servingTime` as HH:mm however the row was read: `apiColumns`
   * already gives those; a plain `select *` gives pg's Date (local midnight) and `HH:mm:ss`.
   */
  override $parseDatabaseJson(json: Pojo): Pojo {
    const parsed = super.$parseDatabaseJson(json);
    const date = parsed.date;
    if (date instanceof Date) parsed.date = `${pad(date.getFullYear(), 4)}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
    if (typeof parsed.servingTime === 'string') parsed.servingTime = parsed.servingTime.slice(0, 5);
    return parsed;
  }

  /** MealEventResponse: `apiFields` in the contract's order (participants with their API members only: a departed member's `formerMemberId` is never answered). */
  toApi(): MealEvent {
    return this.apiObject() as unknown as MealEvent;
  }

  /** JSON of a model instance is its API shape too (never the bookkeeping of a query). */
  override $formatJson(_json: Pojo): Pojo {
    return this.toApi();
  }
}
