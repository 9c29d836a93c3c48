export { TOKEN_SCOPES, type TokenAccess, type TokenScope } from './access-scopes.js';
export {
  ApiRouter,
  type DeclaredRead,
  type Infer,
  type KernelChecked,
  loadedRead,
  type Method,
  type OperationSpec,
  type ResponseSpec,
  sendJsonText,
  type TypedHandler,
  type TypedRequest,
  type TypedSchema,
  type ValidInput,
} from './api-router.js';
export { createHttpApp, type HttpAppOptions, pathMatcher } from './app.js';
export * from './clock.js';
export { currentContext, newRequestContext, type RequestContext, runWithContext, step, timing } from './context.js';
export { CORS_EXPOSED_HEADERS, CORS_MAX_AGE_SECONDS, parseOrigin } from './cors.js';
export * from './errors.js';
export { type ConditionalWriteLocks, PgConditionalWriteLocks } from './etag.js';
export * from './fallback.js';
export {
  AnswerSealer,
  type HeldKey,
  type IdempotencyClaim,
  type IdempotencyOptions,
  type IdempotencyStore,
  idempotency,
  idempotencyMigrations,
  type KeptAnswer,
  type KeyOwner,
  PgIdempotencyStore,
} from './idempotency.js';
export {
  instrumentKnex,
  loadStandalone,
  type PreparedStatement,
  preparedQuery,
  type StandaloneKeys,
  type StandaloneStatement,
} from './knex-timing.js';
export { createLogger, type LogFormat, type Logger } from './logger.js';
export * from './metrics.js';
export {
  type AppVersionFloors,
  type FormRoute,
  fromAllowedOrigin,
  keepContext,
  type Principal,
  parseAppVersionFloors,
  principalOf,
  requireAuth,
} from './middleware.js';
export { buildOpenApiDocument, idempotent, type OpenApiBuild } from './openapi.js';
export { isDatabaseUnavailable, type Problem, type ProblemAnswer, toProblem } from './problem.js';
export * from './rate-limit.js';
export { type PrincipalLookup, PrincipalReader, type PrincipalRow, type ReadingRequest, RequestReads } from './request-reads.js';
export * from './roles.js';
export { createHttpServer, type HttpServerOptions } from './server.js';
export { newTraceId } from './trace.js';
export { isUuid, type JsonSchema, type Location, multiLine, PartValidator, singleLine, toSingleLine, withStringLimits } from './validation.js';
