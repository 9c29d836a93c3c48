import { BaseModel } from '@svc/db';

/** A person's TOTP secret (one row of `mfa_totp`): pending until `confirmedAt`, sealed at rest. */
export class TotpModel extends BaseModel {
  static override tableName = 'mfa_totp';
  static override idColumn = 'accountId';
  static override timestamps = ['confirmedAt', 'createdAt'];
  declare accountId: string;
  declare secretSealed: Buffer;
  declare confirmedAt: string | null;
  declare lastUsedStep: string | null;
  declare failedCodes: number;
  declare createdAt: string;
}

/** A passkey (one row of `passkeys`): a WebAuthn credential of an account. */
export class PasskeyModel extends BaseModel {
  static override tableName = 'passkeys';
  static override idColumn = 'id';
  static override timestamps = ['createdAt', 'lastUsedAt'];
  declare id: string;
  declare accountId: string;
  declare credentialId: string;
  declare publicKey: Buffer;
  /** bigint column: pg answers it as a string. */
  declare counter: string;
  declare transports: string[] | null;
  declare name: string;
  declare createdAt: string;
  declare lastUsedAt: string | null;

  /** The API's passkey: no key material. */
  toApi(): PasskeyResponse {
    return { id: this.id, name: this.name, createdAt: this.createdAt, lastUsedAt: this.lastUsedAt };
  }
}

/** PasskeyResponse of the API. */
export interface PasskeyResponse {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
}
