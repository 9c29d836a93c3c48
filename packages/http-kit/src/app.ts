import { SESSION_COOKIE } from '@svc/contracts';
import { pathShape } from '@svc/db';
import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import helmet from 'helmet';
import { match } from 'path-to-regexp';
import type { ApiRouter, OperationSpec } from './api-router.js';
import { corsPolicy } from './cors.js';
import type { ConditionalWriteLocks } from './etag.js';
import { notFound } from './fallback.js';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';
import {
  type AppVersionFloors,
  appVersionGate,
  errorHandler,
  FORM_CONTENT_TYPE,
  hookTimingHeaders,
  jsonBody,
  originGuard,
  rejectDuplicateAuthorization,
  rejectNulInUrl,
  requestContext,
  requestLogger,
} from './middleware.js';

export interface HttpAppOptions {
  logger: Logger;
  /** Origins a cookie-carrying state change may come from (the PUBLIC_BASE_URL origin). */
  allowedOrigins: string[];
  /**
   * Web clients on other origins (CORS_ORIGINS): exact origins allowed to call with credentials
   * (CORS, see corsPolicy). They are also allowed by the CSRF origin check. Empty or undefined:
   * no CORS at all, same-origin only.
   */
  corsOrigins?: readonly string[];
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
  /** Serialise If-Match writes of one resource across instances (see `ConditionalWriteLocks`); none: checked without a lock. */
  conditionalWriteLocks?: ConditionalWriteLocks;
  /** Idempotency-Key on a person's writes (`idempotency`), run by each write route after its own gates. */
  idempotency?: RequestHandler;
  /** Runs before /api/v1/auth/* routes (the per-IP rate limit). */
  authLimiter?: RequestHandler;
  routers: ApiRouter[];
}

/**
 * The one request pipeline, shared by the host and by every package's router tests:
 * trace id and timing → log → security headers → CORS (when origins are given) → NUL check → one Authorization → open routes → app-version gate →
 * JSON body → CSRF origin check → session → auth rate limit → routers → 404/405 → problem+json.
 */
export function createHttpApp(options: HttpAppOptions): Express {
  const app = express();
  hookTimingHeaders(app);
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  if (options.trustProxy !== undefined) app.set('trust proxy', options.trustProxy);

  // The whole pipeline is one Express layer that runs its steps in turn (as Express would: a throw
  // or a rejected promise goes to the error middleware), so a request does not walk a dozen layers
  // of Express's router, each with its own matching and closures, before reaching its route.
  const steps: RequestHandler[] = [requestContext()];
  const draining = options.draining;
  if (draining) {
    steps.push((_req, res, next) => {
      if (draining()) res.setHeader('Connection', 'close');
      next();
    });
  }
  steps.push(requestLogger(options.logger, options.metrics));
  steps.push(
    precomputed(
      helmet({
        contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
        crossOriginResourcePolicy: { policy: 'same-origin' },
      }),
    ),
  );
  // Before anything that could refuse: a preflight is answered here, and an error answer carries
  // the CORS headers too, so the client on the other origin can read its problem+json.
  const cors = corsPolicy(options.corsOrigins ?? []);
  if (cors) steps.push(cors);
  steps.push(rejectNulInUrl());
  steps.push(rejectDuplicateAuthorization());
  for (const r of options.open ?? []) steps.push(onlyFor(r));
  steps.push(underApi([appVersionGate(options.appVersionFloors ?? {})]));
  // Only routes that declare a form body (a provider's form_post callback) may send one.
  const formRoutes = options.routers
    .flatMap((r) => r.operations)
    .filter((o) => o.bodyContentType === FORM_CONTENT_TYPE)
    .map((o) => ({ method: o.method, path: o.path }));
  steps.push(bodyless(jsonBody({ formRoutes })));
  // Every state-changing /api/v1/auth/* operation (login, register, exchange …) acts before there is a session.
  const signInPaths =
    options.signInPaths ??
    options.routers
      .flatMap((r) => r.operations)
      .filter((o) => o.method !== 'get' && o.path.startsWith('/api/v1/auth/') && !o.path.includes('{'))
      .map((o) => o.path);
  steps.push(
    originGuard({ allowedOrigins: options.allowedOrigins, corsOrigins: options.corsOrigins, cookieName: SESSION_COOKIE, signInPaths, exempt: formRoutes }),
  );
  if (options.authenticate) steps.push(underApi(options.authenticate));
  if (options.authLimiter) steps.push(under(AUTH_PATH, [options.authLimiter]));
  // Not a pipeline step: each write route runs it in its own chain, after its gates (ApiRouter).
  if (options.idempotency) app.locals.idempotency = options.idempotency;
  const locks = options.conditionalWriteLocks;
  if (locks) {
    steps.push((req, res, next) => {
      if (req.headers['if-match'] !== undefined) res.locals.conditionalWriteLocks = locks;
      next();
    });
  }
  for (const r of options.routers) steps.push(onlyFor(r));

  const operations = (): OperationSpec[] => [...(options.open ?? []), ...options.routers].flatMap((r) => r.operations);
  steps.push(notFound(operations));
  app.use(pipeline(steps));
  app.use(errorHandler({ logger: options.logger }));
  return app;
}

/**
 * helmet's headers, worked out once: with these options they depend on nothing in the request, so
 * each answer gets the same list set in one loop instead of a dozen middleware calls.
 */
export function precomputed(headersMiddleware: (req: never, res: never, next: (err?: unknown) => void) => void): RequestHandler {
  const headers: [string, string][] = [];
  const recorder = {
    setHeader(name: string, value: unknown) {
      const i = headers.findIndex(([n]) => n.toLowerCase() === name.toLowerCase());
      if (i >= 0) headers.splice(i, 1);
      headers.push([name, String(value)]);
    },
    removeHeader(name: string) {
      const i = headers.findIndex(([n]) => n.toLowerCase() === name.toLowerCase());
      if (i >= 0) headers.splice(i, 1);
    },
  };
  let failure: unknown;
  (headersMiddleware as (req: object, res: object, next: (err?: unknown) => void) => void)({ headers: {}, method: 'GET', url: '/' }, recorder, (err) => {
    failure = err;
  });
  if (failure) throw failure;
  return (_req, res, next) => {
    for (let i = 0; i < headers.length; i++) res.setHeader(headers[i]![0], headers[i]![1]);
    next();
  };
}

/**
 * The router of one package, entered only when the path could be one of its routes: one
 * case-insensitive test against all its paths at once (a `{param}` is any segment), instead of
 * Express trying each of its routes in turn. A false "could be" costs nothing but the router's own
 * matching, which still decides; the pattern never refuses a path one of its routes would match.
 * Inside, a request goes straight to its operation's handler chain (a table by method, matched
 * with path-to-regexp as Express matches: letter case ignored, a trailing slash allowed, params
 * decoded), so Express's router walk, with its per-layer matching and closures, is skipped; what
 * the table does not answer (another method: 405 or OPTIONS; a param that does not decode) goes
 * to the package's Express router, which answers as before. Paths a router serves outside the
 * document (`ApiRouter.serve`) count as its paths; a router with neither operations nor such paths
 * is entered for every request.
 */
export function onlyFor(api: ApiRouter): RequestHandler {
  const paths = [...new Set([...api.operations.map((o) => o.path), ...api.undocumentedPaths])];
  if (!paths.length) return api.router;
  const candidate = pathsPattern(paths);
  let table: RouteTable | undefined;
  return (req, res, next) => {
    const path = req.path;
    if (!candidate.test(path)) return next();
    // Routes added to the Express router by other means than `route()` (a test's `router.use`), and
    // requests traced by OpenTelemetry (its express instrumentation records Express's route layers):
    // Express's own walk decides, as it would.
    if (api.router.stack.length !== api.routes.length || res.locals.traced === true) return api.router(req, res, next);
    if (table?.size !== api.routes.length) table = routeTable(api);
    const hit = table.find(req.method, path);
    if (hit) {
      req.params = hit.params;
      inTurn(hit.chain, req, res, next);
    } else api.router(req, res, next); // another method (405 and OPTIONS as Express answers them), or a param that does not decode
  };
}

/** A node of the tree `pathsPattern` writes: the paths that go on after one segment. */
interface SegmentNode {
  next: Map<string, SegmentNode>;
  /** A path ends here. */
  end: boolean;
}

/**
 * One case-insensitive pattern for OpenAPI-style paths (`/a/{id}/b`; a `{param}` is any text
 * without a slash, empty included), one trailing slash allowed: what an alternation of the paths
 * matches, written as a tree of their segments (`/api/v1/(?:households(?:/(?:[^/]*…)))`), so a
 * path that is none of them fails at the first segment that differs instead of being tried against
 * each path from its start.
 */
export function pathsPattern(paths: readonly string[]): RegExp {
  const root: SegmentNode = { next: new Map(), end: false };
  for (const path of paths) {
    let node = root;
    for (const segment of path.toLowerCase().split('/')) {
      const key = segment.replace(/\{[a-z0-9_]+\}/g, '{}');
      const next = node.next.get(key) ?? { next: new Map(), end: false };
      node.next.set(key, next);
      node = next;
    }
    node.end = true;
  }
  const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const segment = (key: string) => key.split('{}').map(literal).join('[^/]*');
  const after = (node: SegmentNode): string => {
    if (!node.next.size) return '';
    const rest = `/(?:${alternatives(node)})`;
    return node.end ? `(?:${rest})?` : rest;
  };
  const alternatives = (node: SegmentNode): string => [...node.next].map(([key, child]) => segment(key) + after(child)).join('|');
  return new RegExp(`^(?:${alternatives(root)})/?$`, 'i');
}

interface RouteTable {
  size: number;
  /** The first route declared for this method (HEAD: GET's) whose path matches, with its decoded params. */
  find(method: string, path: string): { chain: RequestHandler[]; params: Record<string, string> } | undefined;
}

/** An OpenAPI-style path (`/a/{id}`) matched with path-to-regexp as Express's router matches it: letter case ignored, an optional trailing slash, params decoded (a param that does not decode throws). */
function expressMatcher(path: string) {
  const pattern = path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1').replace(/\/+$/, '');
  return match<Record<string, string>>(pattern || '/', { sensitive: false, end: true, trailing: true, decode: decodeURIComponent });
}

/**
 * The parameters of `requestPath` when it is a path of the OpenAPI-style `path` as the API's routes
 * match it (letter case ignored, an optional trailing slash, params decoded); undefined when it is
 * not, or a parameter does not decode. For a step that must know, before the routes, which
 * operation a request is for (the session read's read-ahead).
 */
export function pathMatcher(path: string): (requestPath: string) => Record<string, string> | undefined {
  const m = expressMatcher(path);
  return (requestPath) => {
    try {
      const found = m(requestPath);
      return found ? found.params : undefined;
    } catch {
      return undefined;
    }
  };
}

/**
 * The routes of one ApiRouter by method, in declaration order, each matched with path-to-regexp
 * as Express's router matches it (case-insensitive, an optional trailing slash, params decoded).
 * A param that does not decode is left to Express's router, which answers it.
 */
function routeTable(api: ApiRouter): RouteTable {
  // By method, then by the path's number of segments: a path matches only a pattern of as many (a
  // param is one non-empty segment), and one whose last segment is literal only when it is that
  // literal, letter case aside; path-to-regexp decides on these alone.
  const byMethod = new Map<string, Map<number, { chain: RequestHandler[]; match: ReturnType<typeof expressMatcher>; last?: string }[]>>();
  for (const { operation, chain } of api.routes) {
    const method = operation.method.toUpperCase();
    const bySegments = byMethod.get(method) ?? new Map();
    const shape = pathShape(operation.path);
    const list = bySegments.get(shape.segments) ?? [];
    list.push({ chain, match: expressMatcher(operation.path), last: shape.last.includes('{') ? undefined : shape.last });
    bySegments.set(shape.segments, list);
    byMethod.set(method, bySegments);
  }
  return {
    size: api.routes.length,
    find(method, path) {
      const bySegments = byMethod.get(method === 'HEAD' ? 'GET' : method);
      if (!bySegments) return undefined;
      const shape = pathShape(path);
      for (const route of bySegments.get(shape.segments) ?? []) {
        if (route.last !== undefined && route.last !== shape.last) continue;
        let found: ReturnType<typeof route.match>;
        try {
          found = route.match(path);
        } catch {
          return undefined;
        }
        if (found) return { chain: route.chain, params: found.params as Record<string, string> };
      }
      return undefined;
    },
  };
}

/**
 * The body steps as one middleware that a request without any body headers (no Content-Length,
 * Transfer-Encoding or Content-Type: every GET of the apps) passes in one test; they could find
 * nothing to parse, refuse or defer in it. Any other request runs them in order.
 */
export function bodyless(steps: RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    const h = req.headers;
    if (h['content-length'] === undefined && h['transfer-encoding'] === undefined && h['content-type'] === undefined) next();
    else inTurn(steps, req, res, next);
  };
}

const API_PATH = /^\/api(?:\/|$)/i;
const AUTH_PATH = /^\/api\/v1\/auth(?:\/|$)/i;

/** The steps of the whole pipeline as one middleware (see `inTurn`). */
function pipeline(steps: RequestHandler[]): RequestHandler {
  return (req, res, next) => inTurn(steps, req, res, next);
}

/** Handlers for the paths `prefix` matches (as `app.use(path, …)` would pick them), as one layer that leaves the URL alone. */
function under(prefix: RegExp, handlers: RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    if (prefix.test(req.path)) inTurn(handlers, req, res, next);
    else next();
  };
}

/**
 * Handlers for /api only, as `app.use('/api', …handlers)` would run them (the same paths: any
 * letter case, `/api` itself or below it), but as one layer that tests the path once instead of
 * Express's mount, which rewrites `req.url` and `req.baseUrl` on the way in and out. The handlers
 * see the full URL (they read `originalUrl` or nothing of the path).
 */
export function underApi(handlers: RequestHandler[]): RequestHandler {
  return under(API_PATH, handlers);
}

/** Runs handlers one after the other as Express would: a throw or a rejected promise goes to `next(err)`. */
function inTurn(handlers: RequestHandler[], req: Request, res: Response, next: NextFunction): void {
  let i = 0;
  const step = (err?: unknown) => {
    if (err !== undefined && err !== null) return next(err);
    const handler = handlers[i++];
    if (!handler) return next();
    try {
      const ret = handler(req, res, step) as unknown;
      if (ret && typeof (ret as Promise<unknown>).then === 'function') (ret as Promise<unknown>).then(undefined, next);
    } catch (caught) {
      next(caught);
    }
  };
  step();
}
