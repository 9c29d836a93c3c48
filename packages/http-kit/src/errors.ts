/**
 * Errors that know nothing of HTTP status lines but carry a stable `code`.
 * Code throws them; the single error middleware turns them into problem+json.
 */

/** One failing member of a request, named the way a client sees it (`payload.minimumPerWeek`). */
export interface FieldIssue {
  field: string;
  message: string;
  /** Where the field was: `body`, `query` or `path`. */
  in?: 'body' | 'query' | 'path';
}

export interface HttpErrorOptions {
  /** Extra response headers (Retry-After, Allow, ...). */
  headers?: Record<string, string>;
  /** Problem `type`; `about:blank` unless given. */
  type?: string;
  /** Extra members of the problem body. */
  extensions?: Record<string, unknown>;
  cause?: unknown;
}

export class HttpError extends Error {
  readonly headers: Record<string, string>;
  readonly type: string;
  readonly extensions: Record<string, unknown>;

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    options: HttpErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.headers = options.headers ?? {};
    this.type = options.type ?? 'about:blank';
    this.extensions = options.extensions ?? {};
  }
}

/** 400: the request is not in the documented shape, or a domain rule refused it. */
export class InputError extends HttpError {
  constructor(
    code: string,
    message: string,
    readonly fields: FieldIssue[] = [],
    options: HttpErrorOptions = {},
  ) {
    super(400, code, message, {
      ...options,
      extensions: fields.length > 0 ? { ...options.extensions, errors: fields } : options.extensions,
    });
  }
}

/** 401: no valid session, or the credentials / code / token were not accepted. */
export class AuthenticationError extends HttpError {
  constructor(code = 'unauthenticated', message = 'Sign-in required', options: HttpErrorOptions = {}) {
    super(401, code, message, options);
  }
}

/** 403: signed in, but this role (or this origin, or the intake policy) may not do it. */
export class NotAllowedError extends HttpError {
  constructor(code = 'forbidden', message = 'Not allowed', options: HttpErrorOptions = {}) {
    super(403, code, message, options);
  }
}

/** 404: nothing there, or nothing the caller may know exists. */
export class NotFoundError extends HttpError {
  constructor(code = 'not_found', message = 'Not found', options: HttpErrorOptions = {}) {
    super(404, code, message, options);
  }
}

/** 405: the path exists, the method does not. */
export class MethodNotAllowedError extends HttpError {
  constructor(allowed: string[]) {
    super(405, 'method_not_allowed', `Method not allowed; allowed: ${allowed.join(', ')}`, {
      headers: { Allow: allowed.join(', ') },
    });
  }
}

/** 409: the state of the resource does not allow it. */
export class ConflictError extends HttpError {
  constructor(code = 'conflict', message = 'Conflict', options: HttpErrorOptions = {}) {
    super(409, code, message, options);
  }
}

/** 410: what the request points at is gone for good (an expired changes cursor). */
export class GoneError extends HttpError {
  constructor(code = 'gone', message = 'Gone', options: HttpErrorOptions = {}) {
    super(410, code, message, options);
  }
}

/** 412: an `If-Match` precondition did not hold (the resource changed meanwhile). */
export class PreconditionFailedError extends HttpError {
  constructor(code = 'precondition_failed', message = 'The resource changed since the ETag given in If-Match', options: HttpErrorOptions = {}) {
    super(412, code, message, options);
  }
}

/** 422: understood and well-formed, but refused as it stands (an Idempotency-Key reused for another request). */
export class UnprocessableError extends HttpError {
  constructor(code = 'unprocessable', message = 'Unprocessable', options: HttpErrorOptions = {}) {
    super(422, code, message, options);
  }
}

/** 413: the body is larger than the service accepts. */
export class PayloadTooLargeError extends HttpError {
  constructor(message = 'Request body too large') {
    super(413, 'payload_too_large', message);
  }
}

/** 423: the account is locked. */
export class LockedError extends HttpError {
  constructor(code = 'account_locked', message = 'Locked', options: HttpErrorOptions = {}) {
    super(423, code, message, options);
  }
}

/**
 * 426: the app build is below its platform's floor. RFC 9110 §15.5.22 wants an `Upgrade` naming
 * what to move to (here the platform's app at its floor, `ios-app/2.4.0`), with the `upgrade`
 * connection option so intermediaries do not forward it.
 */
export class UpgradeRequiredError extends HttpError {
  constructor(message: string, upgrade = 'app/latest') {
    super(426, 'app_version_unsupported', message, { type: 'app-version-unsupported', headers: { Upgrade: upgrade, Connection: 'Upgrade' } });
  }
}

/**
 * 429. `retryAfter` is seconds (a rate limit) or a Date (an HTTP date, e.g. AI paused until);
 * leave it out when the limit resets by itself and no wait can be named.
 */
export class TooManyRequestsError extends HttpError {
  constructor(code = 'rate_limited', message = 'Too many requests', retryAfter?: number | Date, options: HttpErrorOptions = {}) {
    const headers: Record<string, string> = { ...options.headers };
    if (typeof retryAfter === 'number') headers['Retry-After'] = String(Math.max(1, Math.ceil(retryAfter)));
    else if (retryAfter instanceof Date) headers['Retry-After'] = retryAfter.toUTCString();
    super(429, code, message, { ...options, headers });
  }
}

/** 503: a dependency (the database) does not answer. */
export class ServiceUnavailableError extends HttpError {
  /**
   * True when the instance answers 503 by plan (readiness while it drains before stopping), not
   * because a dependency failed: the error middleware then writes no warning for it.
   */
  readonly planned: boolean;
  constructor(message = 'The service is temporarily unavailable', options: HttpErrorOptions & { planned?: boolean } = {}) {
    const { planned, ...rest } = options;
    super(503, 'service_unavailable', message, { ...rest, headers: { 'Retry-After': '5', ...rest.headers } });
    this.planned = planned === true;
  }
}
