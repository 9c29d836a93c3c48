import { ApiRouter, principalOf } from '@svc/http-kit';
import { PushDeviceListSchema, PushDeviceSchema, RegisterBody, TokenParams, UpdateBody } from './schemas.js';
import type { PushService } from './service.js';

/** What the push routes need: the package's service (which holds its store and clock). */
export interface RouterOptions {
  service: PushService;
}

/** The push-device operations (the contract's "Push devices"): register, list, read, switch, forget. */
export function createRouter(options: RouterOptions): ApiRouter {
  const { service } = options;
  const api = new ApiRouter({ tags: ['Push devices'] });

  api.route(
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
      res.json(await service.register(principalOf(req).userId, req.input.body));
    },
  );

  api.route(
    {
      method: 'get',
      path: '/api/v1/me/devices',
      operationId: 'listPushDevices',
      summary: "The caller's phones, newest first",
      description:
        'Every device registered to the caller, the latest registration to this account first (`lastSeenAt` tells when each was last seen). Empty `items` when there are none.',
      auth: true,
      responses: { 200: { description: "The caller's devices", schema: PushDeviceListSchema } },
    },
    async (req, res) => {
      res.json({ items: await service.list(principalOf(req).userId) });
    },
  );

  api.route(
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
      res.json(await service.get(principalOf(req).userId, req.input.params.token));
    },
  );

  api.route(
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
      res.json(await service.setSwitches(principalOf(req).userId, req.input.params.token, req.input.body));
    },
  );

  api.route(
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
      await service.remove(principalOf(req).userId, req.input.params.token);
      res.status(204).end();
    },
  );

  return api;
}
