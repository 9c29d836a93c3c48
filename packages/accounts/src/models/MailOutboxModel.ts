import { BaseModel } from '@svc/db';

/** One row of `mail_outbox` (the Mailer claims and sends them; account deletion and housekeeping delete them). */
export class MailOutboxModel extends BaseModel {
  static override tableName = 'mail_outbox';
  declare id: string;
  declare kind: string;
  declare recipient: string;
}
