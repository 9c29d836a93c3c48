import { AsyncResource } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';
import { isSpanContextValid, trace } from '@opentelemetry/api';
import type { Membership } from '@svc/contracts';
import express, { type ErrorRequestHandler, type Express as ExpressApp, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import onHeaders from 'on-headers';
import type { Logger } from 'pino';
import { diagnosticsHeader, newRequestContext, type RequestContext, runWithContext, serverTimingHeader } from './context.js';
import { parseOrigin } from './cors.js';
import { AuthenticationError, InputError, NotAllowedError, ServiceUnavailableError, UpgradeRequiredError } from './errors.js';
import { toProblem } from './problem.js';
import { newTraceId, traceIdFromTraceparent } from './trace.js';

/**
 * Wraps a callback-style middleware (a body parser, say) so that the `next` it calls
 * later, from a stream or socket callback, runs in the request's AsyncLocalStorage context again.
 */
export function keepContext(mw: RequestHandler): RequestHandler {
  return (req, res, next) => mw(req, res, AsyncResource.bind(next));
}

/**
 * First in the chain: the trace id (X-Trace-Id), the per-request timing context, and the
 * Server-Timing / X-Diagnostics headers, which are written just before the head goes out so that
 * every answer carries them, errors and 404s included.
 */
export function requestContext(options: { random?: (size: number) => Buffer } = {}): RequestHandler {
  return (req, res, next) => {
    // With OpenTelemetry on, its server span (which already continued any incoming traceparent)
    // names the trace, so X-Trace-Id, the logs and the exported spans agree. Off, there is no span.
    const span = trace.getActiveSpan()?.spanContext();
    const traced = span !== undefined && isSpanContextValid(span);
    // Traced requests take Express's own route walk, which the express instrumentation records (see onlyFor).
    if (traced) res.locals.traced = true;
    const traceId = (traced ? span.traceId : undefined) ?? traceIdFromTraceparent(req.get('traceparent')) ?? newTraceId(options.random);
    const ctx = newRequestContext(traceId);
    req.traceId = traceId;
    res.setHeader('X-Trace-Id', traceId);
    const wantsDiagnostics = req.get('x-diagnostics') === '1' || /[?&]diagnostics=1(&|$)/.test(req.url);
    const timing: PendingTiming = { ctx, wantsDiagnostics };
    // An app made by createHttpApp writes the headers from its responses' writeHead (hookTimingHeaders):
    // nothing to wrap per request. Elsewhere, on-headers wraps this response's writeHead.
    if ((res.writeHead as { [TIMING_HOOK]?: true })[TIMING_HOOK]) (res as TimedResponse)[PENDING_TIMING] = timing;
    else onHeaders(res, () => writeTimingHeaders(res, timing));
    runWithContext(ctx, () => next());
  };
}

interface PendingTiming {
  ctx: RequestContext;
  wantsDiagnostics: boolean;
}
const PENDING_TIMING = Symbol('pending timing headers');
const TIMING_HOOK = Symbol('writes timing headers');
type TimedResponse = Response & { [PENDING_TIMING]?: PendingTiming };

function writeTimingHeaders(res: Response, timing: PendingTiming): void {
  const now = performance.now(); // one reading, so both headers tell the same breakdown
  res.setHeader('Server-Timing', serverTimingHeader(timing.ctx, now));
  if (timing.wantsDiagnostics) res.setHeader('X-Diagnostics', diagnosticsHeader(timing.ctx, now));
}

/**
 * Makes the responses of `app` write the Server-Timing / X-Diagnostics headers that
 * `requestContext` set aside, just before their head goes out (once, however writeHead is called:
 * by the handler or implicitly by `end`), from one writeHead on the app's response prototype,
 * instead of on-headers wrapping each response's writeHead in closures of its own.
 */
export function hookTimingHeaders(app: ExpressApp): void {
  const proto = app.response as TimedResponse;
  const original = proto.writeHead;
  const writeHead = function (this: TimedResponse, ...args: unknown[]) {
    const timing = this[PENDING_TIMING];
    if (timing !== undefined && !this.headersSent) {
      this[PENDING_TIMING] = undefined;
      writeTimingHeaders(this, timing);
    }
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as Response['writeHead'] & { [TIMING_HOOK]?: true };
  writeHead[TIMING_HOOK] = true;
  proto.writeHead = writeHead;
}

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function hasBody(req: Request): boolean {
  const length = req.get('content-length');
  return req.get('transfer-encoding') !== undefined || (length !== undefined && length !== '0');
}

/**
 * Any NUL character in the path or query (raw or percent-encoded) is refused (400), once the route
 * has checked the session: see `deferInputError`.
 */
export function rejectNulInUrl(): RequestHandler {
  return (req, _res, next) => {
    if (req.originalUrl.includes('\0') || /%00/i.test(req.originalUrl)) {
      deferInputError(
        req,
        new InputError('validation_failed', 'The request contains a NUL character', [{ field: 'url', message: 'contains a NUL character' }]),
      );
    }
    next();
  };
}

/**
 * More than one `Authorization` header is refused at once (400 `validation_failed`): Node keeps
 * only the first, so a proxy that adds its own (or a client that sends a cookie-era and a bearer
 * one) would be judged on a credential nobody chose. Only requests that carry one are looked at
 * (their raw header list is scanned; `headersDistinct` would build every header's list).
 */
export function rejectDuplicateAuthorization(): RequestHandler {
  return (req, _res, next) => {
    if (req.headers.authorization !== undefined) {
      const raw = req.rawHeaders;
      let seen = 0;
      for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 13 && raw[i]!.toLowerCase() === 'authorization') seen++;
      if (seen > 1) throw new InputError('validation_failed', 'Send one Authorization header', [{ field: 'Authorization', message: 'sent more than once' }]);
    }
    next();
  };
}

/**
 * Input the pipeline could not accept (a body that is not JSON or does not parse, is too large, or
 * holds a NUL; a NUL in the URL) is not answered at once: the route first checks the session, so a
 * session-required operation answers 401 to a caller without one whatever it sent
 * (service-spec.md, Authentication 5), and only then the 400/413. A request that matches no route
 * gets the input error instead of 404. The first error found wins.
 */
export function deferInputError(req: Request, err: unknown): void {
  req.inputError ??= err;
}

/** Throws the input error the pipeline set aside, if any. */
export function throwDeferredInputError(req: Request): void {
  if (req.inputError !== undefined) throw req.inputError;
}

function findNul(value: unknown, path: string, depth = 0): string | undefined {
  if (depth > 64) return undefined;
  if (typeof value === 'string') return value.includes('\0') ? path : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const hit = findNul(value[i], `${path}[${i}]`, depth + 1);
      if (hit) return hit;
    }
    return undefined;
  }
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const here = path ? `${path}.${k}` : k;
      if (k.includes('\0')) return here;
      const hit = findNul(v, here, depth + 1);
      if (hit) return hit;
    }
  }
  return undefined;
}

/** Deepest nesting of arrays and objects a JSON body may have; no operation needs more than a handful. */
export const MAX_JSON_DEPTH = 32;

/**
 * True when the JSON text nests arrays/objects deeper than `max`. One pass over the bytes before
 * JSON.parse, skipping strings, so a body nested thousands deep (well inside the size limit) is
 * refused before parsing or validation could recurse on it.
 */
export function jsonNestsDeeperThan(buf: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i];
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped byte
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** The one non-JSON body the pipeline accepts, and only on routes that declare it. */
export const FORM_CONTENT_TYPE = 'application/x-www-form-urlencoded';

/** A route that accepts a urlencoded form body: method and literal path (no `{param}`). */
export interface FormRoute {
  method: string;
  path: string;
}

/**
 * JSON bodies only, up to `limit`. A state-changing request that sends a body or a Content-Type
 * other than JSON is refused with 400 before anything runs (this also closes the HTML-form route to
 * cross-site requests). A NUL anywhere in the parsed body is refused.
 *
 * `formRoutes` are the narrow exception: exactly these methods + paths may send
 * `application/x-www-form-urlencoded` (parsed flat, same size limit, NUL check too). They exist for
 * providers that answer with a cross-site form post (Sign in with Apple's form_post); such a route
 * is proved by its OAuth `state`, never by the session cookie.
 */
export function jsonBody(options: { limit?: string | number; formRoutes?: FormRoute[] } = {}): RequestHandler[] {
  const limit = options.limit ?? '64kb';
  const parser = keepContext(
    express.json({
      limit,
      strict: true,
      type: ['application/json', 'application/*+json'],
      verify: (_req, _res, buf) => {
        if (jsonNestsDeeperThan(buf, MAX_JSON_DEPTH)) {
          throw new InputError('validation_failed', `The body nests deeper than ${MAX_JSON_DEPTH} levels`, [
            { field: 'body', message: `nests deeper than ${MAX_JSON_DEPTH} levels`, in: 'body' },
          ]);
        }
      },
    }),
  );
  const formKeys = new Set(
    (options.formRoutes ?? []).map((r) => {
      if (!r.path.startsWith('/') || /[{}:*]/.test(r.path)) throw new Error(`a form route needs a literal path, got "${r.path}"`);
      return `${r.method.toUpperCase()} ${r.path}`;
    }),
  );
  const formParser = keepContext(express.urlencoded({ extended: false, limit, parameterLimit: 100, type: FORM_CONTENT_TYPE }));
  // A request without a Content-Type (every GET) is no form post: its path is not even looked at.
  const isFormRoute = (req: Request): boolean =>
    formKeys.size > 0 && req.headers['content-type'] !== undefined && formKeys.has(`${req.method} ${req.path}`) && Boolean(req.is(FORM_CONTENT_TYPE));
  const requireJson: RequestHandler = (req, _res, next) => {
    if (
      STATE_CHANGING.has(req.method) &&
      (hasBody(req) || req.get('content-type') !== undefined) &&
      !req.is(['application/json', 'application/*+json']) &&
      !isFormRoute(req)
    ) {
      throw new InputError('validation_failed', 'The body must be application/json');
    }
    next();
  };
  const form: RequestHandler = (req, res, next) => {
    if (isFormRoute(req)) formParser(req, res, next);
    else next();
  };
  const nul: RequestHandler = (req, _res, next) => {
    const at = findNul(req.body, '');
    if (at !== undefined) {
      throw new InputError('validation_failed', 'The body contains a NUL character', [{ field: at || 'body', message: 'contains a NUL character' }]);
    }
    next();
  };
  // Each step's failure is set aside (deferInputError) and the remaining steps are skipped.
  const deferred =
    (step: RequestHandler): RequestHandler =>
    (req, res, next) => {
      if (req.inputError !== undefined) {
        next();
        return;
      }
      const done = (err?: unknown) => {
        if (err !== undefined && err !== null) deferInputError(req, err);
        next();
      };
      try {
        step(req, res, done);
      } catch (err) {
        done(err);
      }
    };
  // No body at all (a GET, mostly): nothing to parse, and no context to carry across a stream callback.
  const parse: RequestHandler = (req, res, next) => {
    if (req.headers['transfer-encoding'] === undefined && req.headers['content-length'] === undefined) next();
    else parser(req, res, next);
  };
  return [requireJson, parse, form, nul].map(deferred);
}

export type AppVersionFloors = Partial<Record<'ios' | 'android', string>>;

const APP_VERSION = /^(ios|android)\/(\d{1,9}(?:\.\d{1,9}){0,3})$/;

function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Parses `ios=2.4.0,android=2.3.1`; throws on anything else so configuration can name the variable. */
export function parseAppVersionFloors(value: string): AppVersionFloors {
  const floors: AppVersionFloors = {};
  for (const part of value
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const m = /^(ios|android)=(\d{1,9}(?:\.\d{1,9}){0,3})$/i.exec(part);
    if (!m) throw new Error(`expected platform=version pairs such as ios=2.4.0,android=2.3.1, got "${part}"`);
    floors[m[1]!.toLowerCase() as 'ios' | 'android'] = m[2]!;
  }
  return floors;
}

/**
 * 426 `app-version-unsupported` when `X-App-Version: <platform>/<version>` is below that
 * platform's floor. No header, or one not of that form, passes: callers are never turned away
 * for what they did not say.
 */
export function appVersionGate(floors: AppVersionFloors): RequestHandler {
  return (req, _res, next) => {
    const header = req.get('x-app-version');
    const m = header ? APP_VERSION.exec(header.trim()) : null;
    if (m) {
      const platform = m[1] as 'ios' | 'android';
      const floor = floors[platform];
      if (floor && compareVersions(m[2]!, floor) < 0) {
        throw new UpgradeRequiredError(
          `This ${platform} build (${m[2]}) is below the supported floor ${floor}; update the app from the store`,
          `${platform}-app/${floor}`,
        );
      }
    }
    next();
  };
}

/** Requests whose browser-set `Origin` is one originGuard allows (this service's, or a CORS_ORIGINS entry). */
const FROM_ALLOWED_ORIGIN = new WeakSet<object>();

/**
 * True when the request carries an `Origin` header that originGuard allows (this service's own
 * origin or one of `corsOrigins`). A page cannot set `Origin`; a top-level navigation GET carries
 * none. Lets a state-changing GET (the data export) answer an allowed web client's fetch while
 * still refusing a cross-site navigation.
 */
export function fromAllowedOrigin(req: object): boolean {
  return FROM_ALLOWED_ORIGIN.has(req);
}

/**
 * Cross-site request forgery guard. For a state-changing request (POST, PUT, PATCH, DELETE):
 * - carrying the session cookie: refused (403 `forbidden`) when its `Origin` is not one of
 *   `allowedOrigins` or `corsOrigins`, or when the browser says it was sent from another site
 *   (`Sec-Fetch-Site: cross-site`) whether or not it names an origin, unless that origin is one
 *   of `corsOrigins` (a web client the operator allowed, which may be on another site);
 * - to a sign-in path (`signInPaths`, e.g. login and register, which carry no session yet):
 *   refused the same way, so another site cannot sign a visitor in to the attacker's account
 *   (login CSRF).
 * Requests without cookies and without an `Origin` (the apps) are unaffected. `exempt` routes (a
 * provider's cross-site form_post callback, proved by its OAuth state) are not sign-in paths, but
 * the session-cookie rule still holds for them. JSON-only bodies
 * (see jsonBody) close the HTML-form route; this closes the fetch route.
 */
export function originGuard(options: {
  allowedOrigins: string[];
  cookieName: string;
  signInPaths?: string[];
  exempt?: FormRoute[];
  /** Origins of web clients allowed by CORS (CORS_ORIGINS): allowed here too, whatever site they are on. */
  corsOrigins?: readonly string[];
}): RequestHandler {
  const cors = new Set((options.corsOrigins ?? []).map(parseOrigin));
  const allowed = new Set(options.allowedOrigins.map((o) => new URL(o).origin));
  const cookiePattern = new RegExp(`(?:^|;\\s*)${options.cookieName}=`);
  const signIn = new Set(options.signInPaths ?? []);
  const exempt = new Set((options.exempt ?? []).map((r) => `${r.method.toUpperCase()} ${r.path}`));
  return (req, _res, next) => {
    const from = req.headers.origin;
    if (from !== undefined && (cors.has(from) || allowed.has(from))) FROM_ALLOWED_ORIGIN.add(req);
    // A request with `Authorization: Bearer` is judged by the bearer alone (a cookie beside it is not
    // read), and a page on another site cannot make a browser send one: nothing to forge.
    if (STATE_CHANGING.has(req.method) && !hasBearer(req)) {
      const signingIn = signIn.has(req.path) && !exempt.has(`${req.method} ${req.path}`);
      const guarded = signingIn || cookiePattern.test(req.get('cookie') ?? '');
      if (guarded) {
        const origin = req.get('origin');
        // A CORS_ORIGINS entry is allowed as it is, even when it is on another site than this service.
        if (origin === undefined || !cors.has(origin)) {
          if (origin !== undefined && !allowed.has(origin)) throw new NotAllowedError('forbidden', 'Cross-origin request refused');
          if (req.get('sec-fetch-site') === 'cross-site') throw new NotAllowedError('forbidden', 'Cross-site request refused');
        }
      }
    }
    next();
  };
}

const BEARER = /^bearer(?:[ \t]|$)/i;

/** True when the request carries `Authorization: Bearer …` (any token: whoever reads it judges it). */
export function hasBearer(req: Request): boolean {
  const h = req.headers.authorization;
  return h !== undefined && BEARER.test(h);
}

/**
 * The one place a signed-in caller is required: 401 `unauthenticated` without a principal, and
 * `Cache-Control: no-store` on what follows (a handler may set its own caching after this).
 */
export const requireAuth: RequestHandler = (req, res, next) => {
  if (!req.principal) throw new AuthenticationError('unauthenticated', 'Sign-in required, or the session is no longer valid');
  res.setHeader('Cache-Control', 'no-store');
  next();
};

/** The signed-in principal, or 401. For handlers behind `auth: true`. */
export function principalOf(req: Request): Principal {
  if (!req.principal) throw new AuthenticationError();
  return req.principal;
}

/**
 * One JSON log line per request: method, route pattern (never the raw URL: it may hold tokens),
 * status, ms, traceId, and when known the caller's userId, the householdId of the path and the
 * problem code of an error answer. The same figures go to `metrics` when given.
 */
export function requestLogger(
  logger: Logger,
  metrics?: { observe(method: string, route: string | null, status: number, seconds: number, code?: string): void },
): RequestHandler {
  return (req, res, next) => {
    // Nothing to write and nothing to count (logs off, no metrics): no listener, no line built.
    // The level is read per request, as pino lets it change at run time.
    const logs = logger.isLevelEnabled('info');
    if (!logs && !metrics) return next();
    const started = performance.now();
    res.on('finish', () => {
      const ms = performance.now() - started;
      const route = res.locals.route ?? null;
      const code: string | undefined = res.locals.problemCode;
      if (logs) {
        logger.info(
          {
            method: req.method,
            route,
            status: res.statusCode,
            ms: Math.round(ms * 10) / 10,
            traceId: req.traceId,
            ...(req.principal ? { userId: req.principal.userId } : {}),
            ...(res.locals.householdId ? { householdId: res.locals.householdId } : {}),
            ...(code ? { code } : {}),
          },
          'request',
        );
      }
      metrics?.observe(req.method, route, res.statusCode, ms / 1000, code);
    });
    next();
  };
}

/** The single error middleware: everything becomes application/problem+json. */
export function errorHandler(options: { logger?: Logger } = {}): ErrorRequestHandler {
  return (err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    const answer = toProblem(err, { traceId: req.traceId ?? newTraceId(), instance: req.path });
    if (answer.unexpected) options.logger?.error({ err, traceId: req.traceId, route: res.locals.route ?? null }, 'unhandled error');
    // A planned 503 (readiness while draining) is in the request's own line (info), not a warning.
    else if (answer.status === 503 && !(err instanceof ServiceUnavailableError && err.planned))
      options.logger?.warn({ traceId: req.traceId, err: { message: (err as Error)?.message } }, 'dependency unavailable');
    res.locals.problemCode = answer.body.code;
    sendProblem(res, answer.status, answer.headers, answer.body);
  };
}

export function sendProblem(res: Response, status: number, headers: Record<string, string>, body: object): void {
  res.status(status);
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.setHeader('Content-Type', 'application/problem+json; charset=utf-8');
  res.removeHeader('ETag');
  res.end(JSON.stringify(body));
}

/** Principal: who the session says the caller is. Set by the host's session middleware. */
export interface Principal {
  userId: string;
  /** The id of the session row, when the caller signed in with a cookie session. */
  sessionId?: string;
  /**
   * The caller's memberships, when the session read loaded them with the session (same statement,
   * this request): GET /me answers them and household routes take the caller's role from them.
   */
  memberships?: readonly Membership[];
  /** The personal access token the caller presented (`Authorization: Bearer mp_pat_…`), by id. */
  tokenId?: string;
  /**
   * The token's scopes: present exactly when the caller came with a token. Operations check them
   * (ApiRouter's scope gate); a cookie session has none and is not limited by them.
   */
  scopes?: readonly string[];
}

declare global {
  namespace Express {
    interface Request {
      traceId?: string;
      principal?: Principal;
      /** An input error set aside until the route has checked the session (deferInputError). */
      inputError?: unknown;
      /** A declared read loaded with the principal, for the route that names it (set by the kernel's RequestReads). */
      lent?: { name: string; value: unknown };
      /** The declared read the route names (OperationSpec.read), when it was loaded with the principal: take it with `loadedRead(req, read)`. */
      loadedRead?: { name: string; value: unknown };
      /** Validated request parts, set by ApiRouter. */
      input?: { body: unknown; query: unknown; params: unknown };
    }
  }
}
