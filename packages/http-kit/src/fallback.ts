import type { RequestHandler } from 'express';
import { match } from 'path-to-regexp';
import type { OperationSpec } from './api-router.js';
import { MethodNotAllowedError, NotFoundError } from './errors.js';
import { throwDeferredInputError } from './middleware.js';

/**
 * Last in the chain: 405 with `Allow` when the path exists under another method, else 404
 * `not_found`. Both as problem+json through the error middleware.
 */
export function notFound(operations: () => OperationSpec[], extraPaths: { method: string; path: string }[] = []): RequestHandler {
  let matchers: { method: string; test: (p: string) => boolean }[] | undefined;
  return (req, res, _next) => {
    matchers ??= [...operations().map((o) => ({ method: o.method, path: o.path })), ...extraPaths].map((o) => {
      const fn = match(o.path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1'), { decode: false });
      return { method: o.method.toUpperCase(), test: (p: string) => fn(p) !== false };
    });
    const allowed = [...new Set(matchers.filter((m) => m.test(req.path)).map((m) => m.method))];
    res.locals.route ??= null;
    throwDeferredInputError(req);
    if (allowed.length > 0) {
      if (allowed.includes('GET')) allowed.push('HEAD');
      throw new MethodNotAllowedError(allowed);
    }
    throw new NotFoundError('not_found', `No such resource: ${req.method} ${req.path}`);
  };
}
