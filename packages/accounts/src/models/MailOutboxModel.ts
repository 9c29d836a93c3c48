import { BaseModel } from '@svc/db';

/** One row of `mail_outbox`, as account deletion touches it (rows addressed to the person). */
export class MailOutboxModel extends BaseModel {
  static override tableName = 'mail_outbox';
  declare id: string;
  declare kind: string;
  declare recipient: string;
}
