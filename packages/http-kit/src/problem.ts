import zlib from 'node:zlib';
import { HttpError, InputError, PayloadTooLargeError, ServiceUnavailableError } from './errors.js';

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  410: 'Gone',
  412: 'Precondition Failed',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  423: 'Locked',
  426: 'Upgrade Required',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** The problem `title` of each status (its reason phrase). */
export const PROBLEM_TITLES: Readonly<Record<number, string>> = TITLES;

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string | null;
  code: string;
  traceId: string;
  [extension: string]: unknown;
}

export interface ProblemAnswer {
  status: number;
  headers: Record<string, string>;
  body: Problem;
  /** True when the error was not one of ours: worth a log line with the stack. */
  unexpected: boolean;
}

/**
 * Node and PostgreSQL error codes that mean "the database is not reachable or not answering right
 * now": sockets refused, reset or timed out; server shutting down or starting (57P01–57P03), too
 * many connections (53300), a statement cancelled by statement_timeout (57014, a hung or
 * overloaded server), connection exceptions (class 08).
 */
const DB_DOWN_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  '57P01',
  '57P02',
  '57P03',
  '57014',
  '53300',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
]);

/** Messages pg, pg-pool, knex and tarn use for the same conditions (they carry no code). */
const DB_DOWN_MESSAGES =
  /Connection terminated|connect ECONNREFUSED|timeout expired|Query read timeout|Connection ended unexpectedly|not queryable|terminating connection|the database system is (?:starting up|shutting down)|Timeout acquiring a connection/;

/** True for any error that means the database does not answer (directly, or as the `cause` or Objection's `nativeError` of one). */
export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (!(err instanceof Error) || depth > 3) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && DB_DOWN_CODES.has(code)) return true;
  if (err.name === 'KnexTimeoutError' || err.name === 'TimeoutError') return true;
  if (DB_DOWN_MESSAGES.test(err.message)) return true;
  const { cause, nativeError } = err as { cause?: unknown; nativeError?: unknown };
  return isDatabaseUnavailable(cause, depth + 1) || isDatabaseUnavailable(nativeError, depth + 1);
}

/**
 * The request content codings the body parsers (body-parser's `inflate`) decode: gzip, deflate and
 * br, and zstd where the runtime's zlib has it. Named in `Accept-Encoding` of a 415, as RFC 9110
 * asks of a server that refuses a request's content coding.
 */
const ACCEPTED_CONTENT_ENCODINGS: readonly string[] = ['gzip', 'deflate', 'br', ...('createZstdDecompress' in zlib ? ['zstd'] : [])];

/** 415 `unsupported_media_type`: a Content-Encoding the service does not decode. */
function unsupportedEncoding(err: object): HttpError {
  const named = (err as { encoding?: unknown }).encoding;
  const what = typeof named === 'string' && /^[\w ,.-]{1,40}$/.test(named) ? `"${named}" ` : '';
  return new HttpError(
    415,
    'unsupported_media_type',
    `The body's Content-Encoding ${what}is not supported; send it uncompressed or as ${ACCEPTED_CONTENT_ENCODINGS.join(', ')}`,
    { headers: { 'Accept-Encoding': ACCEPTED_CONTENT_ENCODINGS.join(', ') } },
  );
}

/**
 * Errors of a body parser (Express's json/urlencoded: body-parser, raw-body, zlib), all of them,
 * as the answer the request deserves: never a 500, since every one is about what the client sent.
 * body-parser marks its errors with a `type`; a decompression stream's own error (corrupt gzip,
 * deflate or br data, a truncated stream) has none and reaches us as a zlib error that body-parser
 * made a 400 (`status` 400, `expose` true, a `Z_…`/`ERR_…` code).
 */
function fromBodyParser(err: unknown): HttpError | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const type = (err as { type?: unknown }).type;
  switch (type) {
    case 'entity.too.large':
      return new PayloadTooLargeError();
    case 'entity.parse.failed':
      return new InputError('validation_failed', 'The body is not valid JSON');
    case 'encoding.unsupported':
      return unsupportedEncoding(err);
    case 'charset.unsupported':
      return new InputError('validation_failed', 'The body encoding is not supported; send UTF-8 JSON');
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
    case 'stream.not.readable':
    case 'parameters.too.many':
      return new InputError('validation_failed', 'The body could not be read');
  }
  const { status, expose, code } = err as { status?: unknown; expose?: unknown; code?: unknown };
  if (expose !== true || typeof status !== 'number' || status < 400 || status > 499) return undefined;
  if (typeof code === 'string' && /^(Z_|ERR_)/.test(code)) {
    return new InputError('validation_failed', 'The body is not valid data of its Content-Encoding (corrupt or truncated compressed data)', [
      { field: 'body', message: 'is not valid compressed data', in: 'body' },
    ]);
  }
  if (status === 413) return new PayloadTooLargeError();
  if (status === 415) return unsupportedEncoding(err);
  if (status === 400) return new InputError('validation_failed', 'The body could not be read');
  return undefined;
}

/** Maps anything thrown to the one problem+json answer. Never leaks a stack or an internal message. */
export function toProblem(err: unknown, ctx: { traceId: string; instance?: string | null }): ProblemAnswer {
  let known: HttpError | undefined = err instanceof HttpError ? err : fromBodyParser(err);
  // Express's router throws a URIError (status 400) for a path parameter with a malformed %-escape.
  if (!known && err instanceof URIError && (err as { status?: unknown }).status === 400)
    known = new InputError('validation_failed', 'The path is not valid: a parameter has a malformed percent-encoding');
  let unexpected = false;
  if (!known && isDatabaseUnavailable(err)) known = new ServiceUnavailableError();
  if (!known) {
    unexpected = true;
    known = new HttpError(500, 'internal_error', 'An unexpected error occurred; quote the trace id when reporting it');
  }
  const body: Problem = {
    ...known.extensions,
    type: known.type,
    title: TITLES[known.status] ?? 'Error',
    status: known.status,
    detail: known.message,
    instance: ctx.instance ?? null,
    code: known.code,
    traceId: ctx.traceId,
  };
  return { status: known.status, headers: known.headers, body, unexpected };
}
