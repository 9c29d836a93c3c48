import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiRouter, AuthenticationError, loadedRead, NotFoundError, principalOf } from '@svc/http-kit';
import type { NotificationService } from './notifications.js';
import { deviceRead, devicesRead } from './reads.js';
import {
  HouseholdParams,
  InboxQuery,
  InboxSchema,
  InternalNotificationBody,
  InternalNotificationResponse,
  MarkReadBody,
  PushDeviceListSchema,
  PushDeviceSchema,
  RegisterBody,
  TokenParams,
  UpdateBody,
} from './schemas.js';
import { DEVICES_PER_PERSON, type PushService } from './service.js';

/** What the push routes need: the package's service (which holds its store and clock). */
export interface RouterOptions {
  service: PushService;
  /** Notifications: the inbox routes and the internal route (left out: neither is served). */
  notifications?: NotificationService;
  /** INTERNAL_API_TOKENS: bearer tokens of the platform's other services; none: the internal route answers 404. */
  internalTokens?: readonly string[];
}

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/**
 * True when `header` is `Bearer <one of tokens>`. Compared as SHA-256 digests with
 * timingSafeEqual, every token every time: the time taken tells nothing of a token's length or
 * how much of it matched.
 */
function bearerMatches(header: string | undefined, tokens: readonly Buffer[]): boolean {
  const given = /^Bearer ([^\s]+)$/i.exec(header ?? '')?.[1];
  const candidate = digest(given ?? '');
  let ok = false;
  for (const token of tokens) ok = timingSafeEqual(candidate, token) || ok;
  return ok && given !== undefined;
}

/** The push-device operations (the contract's "Push devices"): register, list, read, switch, forget. */
export function createRouter(options: RouterOptions): ApiRouter {
  const { service } = options;
  const api = new ApiRouter({ tags: ['Push devices'] });
  if (options.notifications) notificationRoutes(api, options.notifications, (options.internalTokens ?? []).map(digest));

  api.route(
    {
      method: 'put',
      path: '/api/v1/me/devices',
      operationId: 'registerPushDevice',
      summary: 'Registers this phone for push (idempotent per token)',
      description:
        "A new token gets all four switches on. A known token is marked seen (lastSeenAt) and handed to the caller, never duplicated: kept as it is when it already was the caller's, reset to all switches on when it comes from another account. platform and provider are taken from the request; provider null or left out is the service default. " +
        `A person keeps at most ${DEVICES_PER_PERSON} devices: a new one past that is 409 \`limit_reached\` and nothing is registered (a known token of the caller's is always accepted).`,
      auth: true,
      body: RegisterBody,
      responses: { 200: { description: 'The device as registered', schema: PushDeviceSchema } },
      errorCodes: { 400: ['validation_failed', 'value_too_long'], 409: ['limit_reached'] },
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
      compiledResponse: true,
      responses: { 200: { description: "The caller's devices", schema: PushDeviceListSchema } },
      read: devicesRead,
    },
    async (req, res) => {
      res.json({ items: await service.list(principalOf(req).userId, loadedRead(req, devicesRead)) });
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
      compiledResponse: true,
      responses: { 200: { description: 'The device', schema: PushDeviceSchema } },
      errorCodes: { 404: ['not_found'] },
      read: deviceRead,
    },
    async (req, res) => {
      res.json(await service.get(principalOf(req).userId, req.input.params.token, loadedRead(req, deviceRead)));
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

/** The inbox (a person's notifications) and the internal route the platform's other services send through. */
function notificationRoutes(api: ApiRouter, notifications: NotificationService, tokens: Buffer[]): void {
  api.route(
    {
      method: 'get',
      path: '/api/v1/me/notifications',
      operationId: 'listNotifications',
      tags: ['Notifications'],
      summary: "The caller's notifications, newest first (kept 30 days)",
      description:
        "Every notification that was for the caller, whatever their phones' switches and quiet hours (those decide only what reaches phones). `limit` 1 to 100 (default 50); follow `nextCursor` for older ones (null on the last page).",
      auth: true,
      query: InboxQuery,
      fieldCodes: { cursor: 'invalid_cursor' },
      responses: { 200: { description: 'A page of the inbox', schema: InboxSchema } },
      errorCodes: { 400: ['validation_failed', 'invalid_cursor'] },
    },
    async (req, res) => {
      const { cursor, limit } = req.input.query;
      res.json(await notifications.inbox(principalOf(req).userId, { cursor, limit }));
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/v1/me/notifications/read',
      operationId: 'markNotificationsRead',
      tags: ['Notifications'],
      summary: 'Marks a notification and every older one read',
      auth: true,
      body: MarkReadBody,
      responses: { 204: { description: 'Marked' } },
      errorCodes: { 400: ['validation_failed'], 404: ['not_found'] },
    },
    async (req, res) => {
      await notifications.markRead(principalOf(req).userId, req.input.body.upTo);
      res.status(204).end();
    },
  );

  api.route(
    {
      method: 'post',
      path: '/internal/v1/households/{householdId}/notifications',
      operationId: 'sendHouseholdNotification',
      tags: ['Internal'],
      summary: "Sends a notification to a household's people (the platform's other services)",
      description:
        'Only with `Authorization: Bearer <one of INTERNAL_API_TOKENS>` (a session cookie beside it changes nothing, and never suffices); 404 when the service has no such tokens. It goes to every member with an account but `excludeUserId`: each gets it in the inbox, and each of their phones whose switch for `kind` is on gets a push (after quiet hours for every kind but reminders). `recipients` is the number of those people.',
      // The bearer is judged first: without a valid one 401, whatever the body; without tokens 404.
      guard: (req, _res, next) => {
        if (tokens.length === 0) throw new NotFoundError('not_found', 'Not found');
        if (!bearerMatches(req.get('authorization'), tokens)) throw new AuthenticationError('unauthenticated', 'A valid internal bearer token is required');
        next();
      },
      params: HouseholdParams,
      body: InternalNotificationBody,
      // The contract answers validation_failed for every limit, the lengths included.
      fieldCodes: { title: 'validation_failed', body: 'validation_failed', excludeUserId: 'validation_failed' },
      responses: { 202: { description: 'Stored and on its way', schema: InternalNotificationResponse } },
      errorCodes: { 400: ['validation_failed'], 401: ['unauthenticated'], 404: ['not_found'] },
    },
    async (req, res) => {
      const { kind, title, body, data, excludeUserId } = req.input.body;
      const sent = await notifications.send(req.input.params.householdId, {
        kind,
        title,
        body,
        data: data as Record<string, unknown> | undefined,
        excludeUserId,
      });
      res.status(202).json(sent);
    },
  );
}
