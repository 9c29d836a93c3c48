import { HttpError, InputError, PayloadTooLargeError, ServiceUnavailableError } from './errors.js';

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  423: 'Locked',
  426: 'Upgrade Required',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

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

/** Node/pg error codes that mean "the database is not reachable right now". */
const DB_DOWN_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', '57P01', '57P02', '57P03', '53300']);

function isDatabaseDown(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && DB_DOWN_CODES.has(code)) return true;
  // knex: "Knex: Timeout acquiring a connection. The pool is probably full."
  if (err.name === 'KnexTimeoutError') return true;
  return /Connection terminated|connect ECONNREFUSED/.test(err.message);
}

/** Errors thrown by Express's body parser (raw-body / body-parser) carry a `type`. */
function fromBodyParser(err: unknown): HttpError | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const type = (err as { type?: unknown }).type;
  switch (type) {
    case 'entity.too.large':
      return new PayloadTooLargeError();
    case 'entity.parse.failed':
      return new InputError('validation_failed', 'The body is not valid JSON');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new InputError('validation_failed', 'The body encoding is not supported; send UTF-8 JSON');
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
      return new InputError('validation_failed', 'The body could not be read');
    default:
      return undefined;
  }
}

/** Maps anything thrown to the one problem+json answer. Never leaks a stack or an internal message. */
export function toProblem(err: unknown, ctx: { traceId: string; instance?: string | null }): ProblemAnswer {
  let known: HttpError | undefined = err instanceof HttpError ? err : fromBodyParser(err);
  // Express's router throws a URIError (status 400) for a path parameter with a malformed %-escape.
  if (!known && err instanceof URIError && (err as { status?: unknown }).status === 400)
    known = new InputError('validation_failed', 'The path is not valid: a parameter has a malformed percent-encoding');
  let unexpected = false;
  if (!known && isDatabaseDown(err)) known = new ServiceUnavailableError();
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
