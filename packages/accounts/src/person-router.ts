import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type ApiRouter, fromAllowedOrigin, type Logger, loadedRead, NotAllowedError, principalOf } from '@svc/http-kit';
import type { Request } from 'express';
import type { Caller, PersonService } from './person-service.js';
import { sessionsRead } from './reads.js';
import { DeleteMeBody, LoginsResponseSchema, PersonalDataExportSchema, ProviderParams, SessionIdParams, SessionListResponseSchema } from './schemas.js';
import type { Sessions } from './sessions.js';

export interface PersonRoutesOptions {
  person: PersonService;
  sessions: Sessions;
  logger: Logger;
}

const ok204 = { 204: { description: 'done' } };

function callerOf(req: Request, sessions: Sessions): Caller {
  const { userId, sessionId } = principalOf(req);
  // The sign-in time comes with the session read.
  return { userId, sessionId: sessionId ?? sessions.current(req)?.id, signedInAt: sessions.signedInAtOf(req) };
}

/** A person's own account: sessions, sign-in methods, the data export, deleting the account. Thin handlers over PersonService. */
export function addPersonRoutes(api: ApiRouter, options: PersonRoutesOptions): ApiRouter {
  const { person, sessions, logger } = options;

  api.route(
    {
      method: 'get',
      path: '/api/v1/me/sessions',
      operationId: 'listMySessions',
      summary: 'The signed-in sessions of the caller, newest sign-in first',
      description:
        'Each `id` is a handle for ending that session; it is neither the session id nor the cookie value. Sessions that already ended (logout elsewhere, expiry) are not listed.',
      auth: true,
      read: sessionsRead,
      compiledResponse: true,
      responses: { 200: { description: 'the sessions', schema: SessionListResponseSchema } },
    },
    async (req, res) => {
      res.json({ items: await person.sessions(callerOf(req, sessions), loadedRead(req, sessionsRead)) });
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/api/v1/me/sessions/{sessionId}',
      operationId: 'endMySession',
      summary: 'Ends one of the caller’s sessions (a lost phone)',
      description: 'It stops working at its next request, on every instance. Ending the current session signs the caller out (the cookie is cleared).',
      auth: true,
      params: SessionIdParams,
      responses: ok204,
      errorCodes: { 400: ['validation_failed'], 404: ['not_found'] },
    },
    async (req, res) => {
      const { wasCurrent } = await person.endSession(callerOf(req, sessions), req.input.params.sessionId);
      if (wasCurrent) await sessions.signOut(req, res);
      res.status(204).end();
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/api/v1/me/sessions',
      operationId: 'endMyOtherSessions',
      summary: 'Ends every session of the caller except the current one',
      auth: true,
      responses: ok204,
    },
    async (req, res) => {
      await person.endOtherSessions(callerOf(req, sessions));
      res.status(204).end();
    },
  );

  api.route(
    {
      method: 'get',
      path: '/api/v1/me/logins',
      operationId: 'listMyLogins',
      summary: 'How the caller can sign in: a password, and the linked Google and Apple identities',
      auth: true,
      read: person.identitiesRead,
      compiledResponse: true,
      responses: { 200: { description: 'the sign-in methods', schema: LoginsResponseSchema } },
    },
    async (req, res) => {
      res.json(await person.logins(principalOf(req).userId, sessions.accountOf(req), loadedRead(req, person.identitiesRead)));
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/api/v1/me/logins/{provider}',
      operationId: 'unlinkMyLogin',
      summary: 'Unlinks the Google or Apple identity (the provider in any case)',
      description:
        'Refused with 409 last_sign_in_method when it is the only way left to sign in (a password counts when the account has an address). Every session signed in through that provider ends, the current one too (its cookie is then cleared). The identity is not linked again by its address: a later sign-in with it is refused unless the person, signed in to this account in the same browser, signs in with it. Mails a notice to the account holder.',
      auth: true,
      params: ProviderParams,
      responses: ok204,
      errorCodes: { 400: ['value_too_long'], 404: ['not_found'], 409: ['last_sign_in_method'] },
    },
    async (req, res) => {
      const { endedCurrent } = await person.unlink(callerOf(req, sessions), req.input.params.provider);
      if (endedCurrent) await sessions.signOut(req, res);
      res.status(204).end();
    },
  );

  api.route(
    {
      method: 'get',
      path: '/api/v1/me/export',
      operationId: 'exportMyData',
      summary: 'Everything stored about the caller, as one JSON file',
      description:
        'The account (no password hash), identities, sessions, memberships, devices, and for every household the caller belongs to its settings, members, rules and events. Streamed as it is read. One export a minute per account (429 rate_limited with Retry-After). Mails a notice to the account holder. It changes state (the notice, the slot), so a browser may only ask for it from this origin or directly: with `Sec-Fetch-Site` other than `same-origin` or `none` (a link or form on another site, even a top-level navigation that carries the cookie) it answers 403 forbidden and spends nothing, unless the request carries the `Origin` of a web client listed in `CORS_ORIGINS` (a fetch of that client; a navigation carries no `Origin`). Clients that are not browsers send no such header and are not affected.',
      auth: true,
      responses: {
        200: {
          description: 'the document (Content-Disposition: attachment)',
          schema: PersonalDataExportSchema,
          headers: { 'Content-Disposition': { description: 'attachment; filename="meal-planner-data-<date>.json"', schema: { type: 'string' } } },
        },
      },
      errorCodes: { 403: ['forbidden'], 429: ['rate_limited'] },
    },
    async (req, res) => {
      // A state-changing GET: a cross-site navigation carrying the cookie must not spend the slot or mail the notice.
      const site = req.get('sec-fetch-site');
      if (site !== undefined && site !== 'same-origin' && site !== 'none' && !fromAllowedOrigin(req)) {
        throw new NotAllowedError('forbidden', 'The export is only answered to a request from this site or a direct one (Sec-Fetch-Site same-origin or none)');
      }
      const doc = await person.startExport(callerOf(req, sessions));
      res.status(200);
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.setHeader('Content-Disposition', `attachment; filename="${doc.filename}"`);
      try {
        // One piece read ahead at most: a household's page of events is large text, and pieces
        // waiting in the stream's buffer would live on into the older generation of the heap.
        await pipeline(Readable.from(doc.chunks(), { highWaterMark: 1 }), res);
      } catch (err) {
        // The status line is gone: a cut connection is the only honest answer (a client must not
        // take a half document for the whole).
        logger.error({ err: { message: (err as Error).message }, userId: principalOf(req).userId }, 'data export failed while streaming');
        res.destroy();
      }
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/api/v1/me',
      operationId: 'deleteMe',
      summary: 'Deletes the caller’s account and everything of it',
      description:
        'Body `{ "password" }`; an account without a password instead needs a sign-in within the last 10 minutes (else 401 reauthentication_required). With TOTP or a passkey on, a fresh second factor stands in for either: `{ "code" }`, `{ "recoveryCode" }` or `{ "passkey": <assertion> }` (a wrong one → 401 reauthentication_required; codes count toward the lockout). With TOTP on the second factor is required: the password alone (or a recent sign-in) answers 401 reauthentication_required. The password counts toward the login lockout (423 account_locked while locked). Deletes the account, its identities, sessions, devices and tokens, its memberships, and every household where it was the only member, in one transaction; in households it shared or had left, its name leaves their meal events and calendar (the participant stays as "Former member"), the invitation codes it minted are revoked, and a calendar feed it could read is retired. 409 owner_must_transfer while it owns a household with other members. Mails a notice; the address can register again at once.',
      auth: true,
      body: DeleteMeBody,
      responses: ok204,
      errorCodes: { 400: ['validation_failed', 'value_too_long'], 401: ['reauthentication_required'], 409: ['owner_must_transfer'], 423: ['account_locked'] },
    },
    async (req, res) => {
      const { password, code, recoveryCode, passkey } = req.input.body;
      await person.deleteAccount(callerOf(req, sessions), password, { code, recoveryCode, passkey });
      await sessions.signOut(req, res);
      res.status(204).end();
    },
  );

  return api;
}
