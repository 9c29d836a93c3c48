import type { Clock } from '@svc/contracts';
import { ApiRouter, NotFoundError, principalOf } from '@svc/http-kit';
import type { Knex } from 'knex';
import { KnexPushDeviceStore } from './KnexPushDeviceStore.js';
import type { DeviceSwitches, PushDevice, PushKind, PushPlatform } from './PushDeviceStore.js';
import { PushDeviceSchema, RegisterBody, TokenParams, UpdateBody } from './schemas.js';

/** What the push package needs from its host. */
export interface PushDeps {
  knex: Knex;
  clock: Clock;
  /** `defaultProvider`: stored when a phone registers without naming one (PUSH_DEFAULT_PROVIDER, default `fcm`). */
  config: { defaultProvider: string };
}

interface RegisterRequest {
  token: string;
  platform: PushPlatform;
  provider?: string | null;
}

type TokenPath = { token: string };

const notMine = () => new NotFoundError('not_found', 'No such device registered to this account');

/**
 * The push-device operations (service-spec.md, Push devices), and `devicesFor`, what a sender
 * asks: the account's phones that want a given kind of push.
 */
export function createPush(deps: PushDeps): { router: ApiRouter; devicesFor(userId: string, kind: PushKind): Promise<PushDevice[]> } {
  const defaultProvider = deps.config.defaultProvider;
  if (!defaultProvider) throw new Error('push: config.defaultProvider must not be empty');
  const store = new KnexPushDeviceStore(deps.knex, deps.clock);
  const api = new ApiRouter({ tags: ['Push devices'] });

  api.route<RegisterRequest>(
    {
      method: 'put',
      path: '/api/v1/me/devices',
      operationId: 'registerPushDevice',
      summary: 'Registers this phone for push (idempotent per token)',
      description:
        "A new token gets all four switches on. A known token is marked seen (lastSeenAt) and handed to the caller, never duplicated: kept as it is when it already was the caller's, reset to all switches on when it comes from another account. platform and provider are taken from the request; provider null or left out is the service default.",
      auth: true,
      body: RegisterBody,
      responses: { 200: { description: 'The device as registered', schema: PushDeviceSchema } },
      errorCodes: { 400: ['validation_failed', 'value_too_long'] },
    },
    async (req, res) => {
      const { userId } = principalOf(req);
      const { token, platform, provider } = req.input.body;
      res.json(await store.register(userId, { token, platform, provider: provider ?? defaultProvider }));
    },
  );

  api.route<unknown, unknown, TokenPath>(
    {
      method: 'get',
      path: '/api/v1/me/devices/{token}',
      operationId: 'getPushDevice',
      summary: "One of the caller's phones",
      auth: true,
      params: TokenParams,
      responses: { 200: { description: 'The device', schema: PushDeviceSchema } },
      errorCodes: { 404: ['not_found'] },
    },
    async (req, res) => {
      const device = await store.get(principalOf(req).userId, req.input.params.token);
      if (!device) throw notMine();
      res.json(device);
    },
  );

  api.route<DeviceSwitches, unknown, TokenPath>(
    {
      method: 'patch',
      path: '/api/v1/me/devices/{token}',
      operationId: 'updatePushDevice',
      summary: 'Chooses which notifications reach the phone',
      description: '`reminders` left out or null keeps its current value.',
      auth: true,
      params: TokenParams,
      body: UpdateBody,
      responses: { 200: { description: 'The device as updated', schema: PushDeviceSchema } },
      errorCodes: { 400: ['validation_failed', 'value_too_long'], 404: ['not_found'] },
    },
    async (req, res) => {
      const device = await store.setSwitches(principalOf(req).userId, req.input.params.token, req.input.body);
      if (!device) throw notMine();
      res.json(device);
    },
  );

  api.route<unknown, unknown, TokenPath>(
    {
      method: 'delete',
      path: '/api/v1/me/devices/{token}',
      operationId: 'deletePushDevice',
      summary: 'Forgets the phone: nothing more is sent to it',
      auth: true,
      params: TokenParams,
      responses: { 204: { description: 'Removed' } },
      errorCodes: { 404: ['not_found'] },
    },
    async (req, res) => {
      if (!(await store.remove(principalOf(req).userId, req.input.params.token))) throw notMine();
      res.status(204).end();
    },
  );

  return { router: api, devicesFor: (userId, kind) => store.devicesFor(userId, kind) };
}
