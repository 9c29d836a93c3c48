import { BaseModel, rowSchema } from '@svc/db';
import { type MessageResponse, MessageSchema } from '../schemas.js';

/** One row of `household_messages`: a message of a day's thread (e.g. the onboarding recap). */
export class HouseholdMessageModel extends BaseModel {
  static override tableName = 'household_messages';
  static override idColumn = 'id';
  static override timestamps = ['createdAt'];
  static override jsonSchema = rowSchema(MessageSchema, { conversationId: { type: 'string', format: 'uuid' } });

  declare id: string;
  declare conversationId: string;
  declare kind: string;
  declare text: string;
  declare createdAt: string;

  toApi(): MessageResponse {
    return { id: this.id, kind: this.kind, text: this.text, createdAt: this.createdAt };
  }
}
