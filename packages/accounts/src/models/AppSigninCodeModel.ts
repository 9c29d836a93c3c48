import { BaseModel } from '@svc/db';

/** One row of `app_signin_codes` (the app flow's single-use codes), as account deletion touches it. */
export class AppSigninCodeModel extends BaseModel {
  static override tableName = 'app_signin_codes';
  declare id: string;
  declare accountId: string;
}
