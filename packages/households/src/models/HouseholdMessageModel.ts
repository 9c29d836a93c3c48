import { BaseModel, objection, rowSchema } from '@svc/db';
import { type MessageResponse, MessageSchema } from '../schemas.js';
import { HouseholdConversationModel } from './HouseholdConversationModel.js';

/** One row of `household_messages`: a message of a day's thread (e.g. the onboarding recap). */
export class HouseholdMessageModel extends BaseModel {
  static override tableName = 'household_messages';
  static override idColumn = 'id';
  static override timestamps = ['createdAt'];
  static override jsonSchema = rowSchema(MessageSchema, { conversationId: { type: 'string', format: 'uuid' } });

  /** The store joins messages with their day's thread (`rewriteRecaps`: a household's recaps). */
  static override relationMappings = () => ({
    conversation: {
      relation: objection.Model.BelongsToOneRelation,
      modelClass: HouseholdConversationModel,
      join: { from: 'household_messages.conversation_id', to: 'household_conversations.id' },
    },
  });

  declare id: string;
  declare conversationId: string;
  declare kind: string;
  declare text: string;
  declare createdAt: string;

  toApi(): MessageResponse {
    return { id: this.id, kind: this.kind, text: this.text, createdAt: this.createdAt };
  }
}
