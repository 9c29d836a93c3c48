import type { AccountDeletionStep, Clock, Transaction } from '@svc/contracts';
import type { Pojo } from '@svc/db';
import { ConflictError, InputError, type KernelChecked, NotFoundError } from '@svc/http-kit';
import type { Knex } from 'knex';
import type { DeviceSwitches, PushDevice, PushKind, RegisterRequest } from './schemas.js';
import type { PushStore } from './store.js';

export interface PushServiceOptions {
  store: PushStore;
  clock: Clock;
  /** `defaultProvider`: stored when a phone registers without naming one (PUSH_DEFAULT_PROVIDER, default `fcm`). */
  config: { defaultProvider: string };
  /** Most devices one person may have registered (DEVICES_PER_PERSON unless given). */
  maxDevices?: number;
}

/**
 * Most push devices one person keeps: phones, tablets and the tokens a reinstall leaves behind
 * until their provider calls them gone. Each is a message per notification, so the bound also
 * bounds what one notification costs. Over it: 409 `limit_reached`.
 */
export const DEVICES_PER_PERSON = 100;

const notMine = () => new NotFoundError('not_found', 'No such device registered to this account');

/**
 * The push rules: a token belongs to one account at a time, a phone registering without a
 * provider gets the service default, and a token of another account is "not found" (never
 * "forbidden": a caller learns nothing of other people's phones). `devicesFor` is the question a
 * sender asks before it sends.
 */
export class PushService {
  private readonly store: PushStore;
  private readonly clock: Clock;
  private readonly defaultProvider: string;
  private readonly maxDevices: number;

  constructor(options: PushServiceOptions) {
    if (!options.config.defaultProvider) throw new Error('push: config.defaultProvider must not be empty');
    this.store = options.store;
    this.clock = options.clock;
    this.defaultProvider = options.config.defaultProvider;
    this.maxDevices = options.maxDevices ?? DEVICES_PER_PERSON;
  }

  async register(userId: string, request: RegisterRequest): Promise<PushDevice> {
    const { token, platform, provider } = request;
    const device = await this.store.register(userId, { token, platform, provider: provider ?? this.defaultProvider }, this.clock.now(), this.maxDevices);
    if (!device)
      throw new ConflictError(
        'limit_reached',
        `A person may register at most ${this.maxDevices} devices; remove one (DELETE /api/v1/me/devices/{token}) first`,
      );
    return device;
  }

  /** One of the caller's phones; `loaded`: the row of `deviceRead` loaded with the caller (`loadedRead(req, deviceRead)`; `false`: none), if any. */
  async get(userId: string, token: string, loaded?: KernelChecked<Pojo | false>): Promise<PushDevice> {
    return (await this.store.get(userId, token, loaded)) ?? Promise.reject(notMine());
  }

  async setSwitches(userId: string, token: string, switches: DeviceSwitches): Promise<PushDevice> {
    const q = switches.quietHours;
    if (q && q.start.slice(0, 5) === q.end.slice(0, 5))
      throw new InputError('validation_failed', 'Quiet hours must not start when they end', [{ field: 'quietHours', in: 'body', message: 'start equals end' }]);
    return (await this.store.setSwitches(userId, token, switches, this.clock.now())) ?? Promise.reject(notMine());
  }

  async remove(userId: string, token: string): Promise<void> {
    if (!(await this.store.remove(userId, token))) throw notMine();
  }

  /** The account's phones that want `kind`, most recently seen first. */
  devicesFor(userId: string, kind: PushKind): Promise<PushDevice[]> {
    return this.store.devicesFor(userId, kind);
  }

  /**
   * The caller's phones, newest registration first (GET /me/devices). It is also the `devices`
   * part of the data export (PersonalDataSources in @svc/contracts): the same records, no more.
   */
  list(userId: string, loaded?: KernelChecked<Pojo[]>): Promise<PushDevice[]> {
    return this.store.list(userId, loaded);
  }

  /**
   * This package's part in deleting an account: every phone of the person, inside the deletion's
   * transaction, so a refusal by a later step leaves them registered. (The foreign key to accounts
   * would cascade too; deleting them here keeps the step explicit and the order the host's.)
   */
  readonly deletionStep: AccountDeletionStep = {
    deleteAccountData: async (userId: string, trx: Transaction): Promise<void> => {
      await this.store.removeAll(userId, trx as Knex.Transaction);
    },
  };
}
