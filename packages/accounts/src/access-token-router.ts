import { type ApiRouter, principalOf } from '@svc/http-kit';
import { noticeLanguage } from './access-token-mails.js';
import { ACCESS_TOKENS_PER_PERSON, type AccessTokenService } from './access-token-service.js';
import { AccessTokenIdParams, AccessTokenListResponseSchema, CreateAccessTokenRequest, CreatedAccessTokenResponseSchema } from './access-tokens.js';
import type { Sessions } from './sessions.js';

const SCOPES_TEXT =
  'Scopes: `households:read`, `events:read`, `events:write`, `rules:read`, `rules:write`, `plans:read`, `plans:write` (what each opens: the `accessToken` security scheme). With `Authorization: Bearer <token>` a request acts as the caller within those scopes and the caller’s roles; it never reaches `/api/v1/me/*`, `/api/v1/auth/*` or account deletion (403 `insufficient_scope`).';

/** POST, GET, DELETE /api/v1/me/tokens: a person's personal access tokens (a cookie session only: a token cannot reach them). */
export function addAccessTokenRoutes(api: ApiRouter, options: { tokens: AccessTokenService; sessions: Sessions }): ApiRouter {
  const { tokens, sessions } = options;

  api.route(
    {
      method: 'post',
      path: '/api/v1/me/tokens',
      operationId: 'createMyToken',
      summary: 'Makes a personal access token (shown this once)',
      description: `${SCOPES_TEXT} Only a keyed hash of the token is kept. \`expiresAt\` left out: it never expires; at most a year ahead. The account’s address gets a notice (in Norwegian when the request prefers \`nb\` in \`Accept-Language\`). Changing or resetting the password, or deleting the account, ends every token. A person keeps at most ${ACCESS_TOKENS_PER_PERSON} unexpired tokens: one more is 409 \`limit_reached\` and nothing is made.`,
      auth: true,
      body: CreateAccessTokenRequest,
      responses: { 201: { description: 'the token, with `token` this once', schema: CreatedAccessTokenResponseSchema } },
      errorCodes: { 400: ['validation_failed'], 409: ['limit_reached'] },
    },
    async (req, res) => {
      const { userId } = principalOf(req);
      const made = await tokens.create({ userId, stamp: sessions.current(req)?.stamp }, req.input.body, noticeLanguage(req.get('accept-language')));
      res.status(201).json(made);
    },
  );

  api.route(
    {
      method: 'get',
      path: '/api/v1/me/tokens',
      operationId: 'listMyTokens',
      summary: 'The caller’s personal access tokens, newest first (never the token itself)',
      description: '`lastUsedAt` is the minute of the latest use (null before the first). Expired tokens are listed until deleted.',
      auth: true,
      responses: { 200: { description: 'the tokens', schema: AccessTokenListResponseSchema } },
    },
    async (req, res) => {
      res.json({ items: await tokens.list(principalOf(req).userId) });
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/api/v1/me/tokens/{tokenId}',
      operationId: 'deleteMyToken',
      summary: 'Deletes one of the caller’s tokens: it stops working at its next request, on every instance',
      auth: true,
      params: AccessTokenIdParams,
      responses: { 204: { description: 'deleted' } },
      errorCodes: { 404: ['not_found'] },
    },
    async (req, res) => {
      await tokens.revoke(principalOf(req).userId, req.input.params.tokenId);
      res.status(204).end();
    },
  );
  return api;
}
