import cors from 'cors';
import type { RequestHandler } from 'express';

/**
 * Response headers a web client on an allowed origin may read (beyond the CORS-safelisted ones:
 * Cache-Control, Content-Language, Content-Length, Content-Type, Expires, Last-Modified, Pragma):
 * the trace id to quote, how long to wait, the version of a read, where a new resource is, the
 * timing breakdown, the rate-limit state, a download's name, what a 405/415 allows.
 */
export const CORS_EXPOSED_HEADERS: readonly string[] = [
  'X-Trace-Id',
  'Retry-After',
  'ETag',
  'Location',
  'Idempotent-Replayed',
  'Server-Timing',
  'X-Diagnostics',
  'RateLimit',
  'RateLimit-Policy',
  'Content-Disposition',
  'Allow',
  'Accept-Encoding',
];

/** Request headers a web client on an allowed origin may send (preflight), beyond the safelisted ones. */
export const CORS_ALLOWED_HEADERS: readonly string[] = [
  'Content-Type',
  'Authorization',
  'Content-Encoding',
  'X-App-Version',
  'If-None-Match',
  'If-Match',
  'Idempotency-Key',
  'traceparent',
  'tracestate',
  'X-Diagnostics',
];

/** How long a browser may keep a preflight's answer (Chromium keeps at most 7200 s): a removed origin loses access within this. */
export const CORS_MAX_AGE_SECONDS = 600;

/**
 * The exact origin (`scheme://host[:port]`) that `value` names, or an error saying why it is not
 * one: a path, a query, a wildcard or a trailing slash is refused rather than silently dropped,
 * since a browser compares the `Origin` it sends character for character.
 */
export function parseOrigin(value: string): string {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new Error(`"${value}" is not an origin such as https://app.example.com`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`"${value}" is not an http(s) origin`);
  if (u.origin !== value) throw new Error(`"${value}" is not an exact origin (scheme://host[:port], no path or trailing slash); did you mean ${u.origin}?`);
  return u.origin;
}

/**
 * Cross-origin resource sharing for exactly the `origins` given, with credentials (the session
 * cookie), through the `cors` package: a request whose `Origin` is on the list gets
 * `Access-Control-Allow-Origin: <that origin>`, `Access-Control-Allow-Credentials: true` and the
 * exposed headers; its preflight (OPTIONS with `Access-Control-Request-Method`) is answered 204
 * with the methods, the allowed request headers and `Access-Control-Max-Age`. A request from any
 * other origin, or with none, gets no CORS header at all (its preflight falls through to the
 * routes: 404/405, which the browser takes as a refusal), only `Vary: Origin` so that a shared
 * cache keeps the answers apart. Undefined when the list is empty: same-origin only, nothing runs.
 */
export function corsPolicy(origins: readonly string[]): RequestHandler | undefined {
  const allowed = new Set(origins.map(parseOrigin));
  if (allowed.size === 0) return undefined;
  const handle = cors({
    origin: true, // reflects the request's Origin: reached only for an origin on the list
    credentials: true,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: [...CORS_ALLOWED_HEADERS],
    exposedHeaders: [...CORS_EXPOSED_HEADERS],
    maxAge: CORS_MAX_AGE_SECONDS,
    optionsSuccessStatus: 204,
  });
  return (req, res, next) => {
    const origin = req.headers.origin;
    if (origin !== undefined && allowed.has(origin)) {
      handle(req, res, next);
      return;
    }
    res.vary('Origin');
    next();
  };
}
