import { BaseModel, rowSchema, TimestampSchema } from '@svc/db';

/**
 * One row of `unasked_mail_counts`: how many unasked mails one recipient got, or one client IP
 * asked for, in the current window. The count itself is written by a hand-written upsert in the
 * store (one statement for every key of a request, so the limit holds under parallel requests);
 * the model names the table for reads, housekeeping and account deletion.
 */
export class UnaskedMailCountModel extends BaseModel {
  static override tableName = 'unasked_mail_counts';
  static override idColumn = 'key';
  static override timestamps = ['windowStartedAt'];
  static override jsonSchema = rowSchema(
    {},
    {
      key: { type: 'string' },
      windowStartedAt: TimestampSchema,
      count: { type: 'integer', minimum: 0 },
      recipients: { type: ['array', 'null'], items: { type: 'string' } },
    },
  );

  /** `'to:'` + a lower-cased recipient address, or `'ip:'` + a client IP. */
  declare key: string;
  declare windowStartedAt: string;
  declare count: number;
  /** `'ip:'` rows: the window's first recipients (16 hex of SHA-256 of each address); null on `'to:'` rows. */
  declare recipients: string[] | null;
}
