import { SESSION_COOKIE } from '@svc/contracts';
import express, { type Express, type RequestHandler } from 'express';
import helmet from 'helmet';
import type { ApiRouter, OperationSpec } from './api-router.js';
import { notFound } from './fallback.js';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';
import {
  type AppVersionFloors,
  appVersionGate,
  errorHandler,
  FORM_CONTENT_TYPE,
  jsonBody,
  originGuard,
  rejectNulInUrl,
  requestContext,
  requestLogger,
} from './middleware.js';

export interface HttpAppOptions {
  logger: Logger;
  /** Origins a cookie-carrying state change may come from (the PUBLIC_BASE_URL origin). */
  allowedOrigins: string[];
  appVersionFloors?: AppVersionFloors;
  trustProxy?: boolean | number | string;
  /** Routes outside /api (health, the OpenAPI document), mounted before the gate and the body parser. */
  open?: ApiRouter[];
  /** Loads the session (if any) into `req.principal`. */
  authenticate?: RequestHandler[];
  /** Paths of state-changing operations that start a session, guarded against login CSRF like cookie-carrying ones; default: every state-changing literal /api/v1/auth/* path. */
  signInPaths?: string[];
  /** Request durations and refusals are recorded here when given. */
  metrics?: Metrics;
  /**
   * True while the instance drains before shutting down: every answer then carries
   * `Connection: close`, so a balancer's keep-alive connection is not reused for a request that
   * would meet a closing socket.
   */
  draining?: () => boolean;
  /** Runs before /api/v1/auth/* routes (the per-IP rate limit). */
  authLimiter?: RequestHandler;
  routers: ApiRouter[];
}

/**
 * The one request pipeline, shared by the host and by every package's router tests:
 * trace id and timing → log → security headers → NUL check → open routes → app-version gate →
 * JSON body → CSRF origin check → session → auth rate limit → routers → 404/405 → problem+json.
 */
export function createHttpApp(options: HttpAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  if (options.trustProxy !== undefined) app.set('trust proxy', options.trustProxy);

  app.use(requestContext());
  const draining = options.draining;
  if (draining) {
    app.use((_req, res, next) => {
      if (draining()) res.setHeader('Connection', 'close');
      next();
    });
  }
  app.use(requestLogger(options.logger, options.metrics));
  app.use(
    helmet({
      contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
      crossOriginResourcePolicy: { policy: 'same-origin' },
    }),
  );
  app.use(rejectNulInUrl());
  for (const r of options.open ?? []) app.use(r.router);
  app.use('/api', appVersionGate(options.appVersionFloors ?? {}));
  // Only routes that declare a form body (a provider's form_post callback) may send one.
  const formRoutes = options.routers
    .flatMap((r) => r.operations)
    .filter((o) => o.bodyContentType === FORM_CONTENT_TYPE)
    .map((o) => ({ method: o.method, path: o.path }));
  app.use(jsonBody({ formRoutes }));
  // Every state-changing /api/v1/auth/* operation (login, register, exchange …) acts before there is a session.
  const signInPaths =
    options.signInPaths ??
    options.routers
      .flatMap((r) => r.operations)
      .filter((o) => o.method !== 'get' && o.path.startsWith('/api/v1/auth/') && !o.path.includes('{'))
      .map((o) => o.path);
  app.use(originGuard({ allowedOrigins: options.allowedOrigins, cookieName: SESSION_COOKIE, signInPaths, exempt: formRoutes }));
  if (options.authenticate) app.use('/api', ...options.authenticate);
  if (options.authLimiter) app.use('/api/v1/auth', options.authLimiter);
  for (const r of options.routers) app.use(r.router);

  const operations = (): OperationSpec[] => [...(options.open ?? []), ...options.routers].flatMap((r) => r.operations);
  app.use(notFound(operations));
  app.use(errorHandler({ logger: options.logger }));
  return app;
}
