import { type ApiRouter, AuthenticationError, createHttpApp, createLogger } from '@svc/http-kit';
import type { Express, RequestHandler } from 'express';

/** Header a router test uses to say who is calling, when the test is not about sessions. */
export const TEST_USER_HEADER = 'x-test-user';

/**
 * Stands in for the host's session middleware in package router tests: the caller named in
 * `X-Test-User` (a uuid) is the principal. Everything else is the real pipeline.
 */
export const testAuthenticate: RequestHandler = (req, _res, next) => {
  const id = req.get(TEST_USER_HEADER);
  if (id !== undefined) {
    if (!/^[0-9a-f-]{36}$/i.test(id)) throw new AuthenticationError('unauthenticated', 'bad test user');
    req.principal = { userId: id.toLowerCase() };
  }
  next();
};

/** The shared pipeline (http-kit's createHttpApp) around `routers`, with test authentication unless `authenticate` is given. */
export function buildTestApp(options: {
  routers: ApiRouter[];
  authenticate?: RequestHandler[];
  authLimiter?: RequestHandler;
  publicBaseUrl?: string;
}): Express {
  return createHttpApp({
    logger: createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    allowedOrigins: [options.publicBaseUrl ?? 'http://localhost:8080'],
    routers: options.routers,
    authenticate: options.authenticate ?? [testAuthenticate],
    authLimiter: options.authLimiter,
  });
}
