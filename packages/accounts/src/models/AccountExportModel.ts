import { BaseModel, TimestampSchema } from '@svc/db';

/** One row of `account_exports`: when an account's latest data export started (one a minute). */
export class AccountExportModel extends BaseModel {
  static override tableName = 'account_exports';
  static override idColumn = 'accountId';
  static override timestamps = ['lastStartedAt'];
  static override jsonSchema = {
    type: 'object',
    properties: { accountId: { type: 'string', format: 'uuid' }, lastStartedAt: TimestampSchema },
  } as const;

  declare accountId: string;
  declare lastStartedAt: string;
}
