import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { databaseAnswers } from '@svc/db';
import {
  ApiRouter,
  type AppVersionFloors,
  buildOpenApiDocument,
  CORS_EXPOSED_HEADERS,
  CORS_MAX_AGE_SECONDS,
  type ConditionalWriteLocks,
  createHttpApp,
  type Logger,
  type Metrics,
  ServiceUnavailableError,
} from '@svc/http-kit';
import type { Express, RequestHandler, Router } from 'express';
import type { Knex } from 'knex';
import { DOCS_PATHS, docsRouter } from './docs.js';
import { FAVICON_PATH, faviconRouter, HOME_PATH, homeRouter } from './home.js';

const TITLE = 'Household meal-planning service';

/** The version of @svc/api: its package.json, the nearest one up from this module (src/ or dist/src/). */
function packageVersion(): string {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
    if (path.dirname(dir) === dir) return '0.0.0';
  }
}

export interface AppDeps {
  knex: Knex;
  logger: Logger;
  publicBaseUrl: string;
  /** CORS_ORIGINS: web clients on other origins allowed to call with credentials; empty: same-origin only. */
  corsOrigins?: readonly string[];
  appVersionFloors: AppVersionFloors;
  trustProxy?: boolean | number | string;
  authenticate?: RequestHandler[];
  authLimiter?: RequestHandler;
  routers: ApiRouter[];
  version?: string;
  metrics?: Metrics;
  /** True once SIGTERM came: readiness answers 503 at once and every answer closes its connection. */
  draining?: () => boolean;
  /** HTML pages outside /api (the mailed links' pages) and the exact paths they serve; undefined: none (WEB_PAGES=off). */
  pages?: { paths: readonly string[]; router: Router };
  /** WEB_CLIENT_URL: linked from GET /. */
  webClientUrl?: string;
  /** Idempotency-Key on a person's writes (http-kit `idempotency`). */
  idempotency?: RequestHandler;
  /** Locks serialising If-Match writes of one resource across instances. */
  conditionalWriteLocks?: ConditionalWriteLocks;
}

/** Health, readiness and the OpenAPI document, then every package's routes through the shared pipeline. */
export function createApp(deps: AppDeps): Express {
  const version = deps.version ?? packageVersion();
  const service = new ApiRouter({ tags: ['Service'] });
  service.route(
    {
      method: 'get',
      path: '/healthz',
      operationId: 'healthz',
      summary: 'Liveness: 200 while the process serves',
      responses: { 200: { description: 'Alive', schema: { type: 'object', properties: { status: { const: 'ok' } } } } },
    },
    (_req, res) => {
      res.json({ status: 'ok' });
    },
  );
  service.route(
    {
      method: 'get',
      path: '/readyz',
      operationId: 'readyz',
      summary: 'Readiness: 200 only while the database answers (within 2 s) and the instance is not shutting down',
      responses: {
        200: { description: 'Ready', schema: { type: 'object', properties: { status: { const: 'ready' } } } },
        503: { description: 'The database does not answer, or the instance is draining before it stops' },
      },
    },
    async (_req, res) => {
      if (deps.draining?.()) throw new ServiceUnavailableError('The instance is shutting down', { planned: true });
      if (!(await databaseAnswers(deps.knex))) throw new ServiceUnavailableError('The database does not answer');
      res.json({ status: 'ready' });
    },
  );
  let document: Record<string, unknown> | undefined;
  service.route(
    {
      method: 'get',
      path: '/api/v1/openapi.json',
      operationId: 'openapi',
      summary: 'This OpenAPI 3.1 document',
      responses: { 200: { description: 'The document', schema: { type: 'object' } } },
    },
    (_req, res) => {
      document ??= buildOpenApiDocument(
        {
          title: TITLE,
          version,
          description: [
            'Accounts, households, meal rules, meal events and push devices. Errors are application/problem+json; branch on `code`.',
            '',
            `A web client on another origin may call the API only from an origin listed in the service's \`CORS_ORIGINS\` (exact origins; empty by default: same-origin only): CORS with credentials (the session cookie), preflights cached ${CORS_MAX_AGE_SECONDS} s, and it may read ${CORS_EXPOSED_HEADERS.map((h) => `\`${h}\``).join(', ')}. Such an origin also passes the CSRF origin check; any other origin gets no CORS header and its cookie-carrying state changes answer 403 \`forbidden\`. The session cookie is SameSite=Lax: a web client on another port or subdomain of the same site works, one on another site needs the API served on its own site.`,
            '',
            'Apps that sync and retry: `GET /api/v1/households/{householdId}/changes` lists what changed (households, members, rules, events) in the order the changes committed, each resource once with its value now; keep `nextCursor` and ask again with `since`. Every write of a signed-in person under `/api/v1` (not `/api/v1/auth/*`) takes an `Idempotency-Key`: a retry with the same key and body answers the first answer again (marked `Idempotent-Replayed: true`), once it has passed the operation’s own checks (sign-in, token scope, membership). Answers holding one household, member, rule or event carry an `ETag`; send it as `If-Match` on its PUT, PATCH or DELETE to change it only while it is unchanged (else 412 `precondition_failed`).',
          ].join('\n'),
        },
        [service, ...deps.routers].flatMap((r) => r.operations),
      );
      res.setHeader('Cache-Control', 'public, max-age=300');
      res.json(document);
    },
  );
  // Outside the OpenAPI document: HTML for people (the service's home page, the API reference; the
  // mailed links' pages). A router of their own with no operations; it declares the paths it
  // serves (`serve`), so the pipeline enters it for those paths only, and every other request
  // passes it in one test.
  const html = new ApiRouter();
  html.serve([HOME_PATH], homeRouter({ title: TITLE, version, webClientUrl: deps.webClientUrl }));
  html.serve([FAVICON_PATH], faviconRouter());
  html.serve(DOCS_PATHS, docsRouter());
  if (deps.pages) html.serve(deps.pages.paths, deps.pages.router);
  return createHttpApp({
    logger: deps.logger,
    allowedOrigins: [deps.publicBaseUrl],
    corsOrigins: deps.corsOrigins,
    appVersionFloors: deps.appVersionFloors,
    trustProxy: deps.trustProxy,
    open: [service, html],
    authenticate: deps.authenticate,
    authLimiter: deps.authLimiter,
    idempotency: deps.idempotency,
    conditionalWriteLocks: deps.conditionalWriteLocks,
    routers: deps.routers,
    metrics: deps.metrics,
    draining: deps.draining,
  });
}
