import { isDeepStrictEqual } from 'node:util';
import express, { type NextFunction, type Request, type RequestHandler, type Response, type Router } from 'express';
import fastJsonModule from 'fast-json-stringify';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import { type TokenAccess, tokenScopeGate } from './access-scopes.js';
import { InputError } from './errors.js';
import { type ConditionalWriteLocks, checkIfMatch, tagAnswer } from './etag.js';
import { takesIdempotencyKey } from './idempotency.js';
import { requireAuth, throwDeferredInputError } from './middleware.js';
import { type JsonSchema, mergeInputErrors, PartValidator, withStringLimits } from './validation.js';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface ResponseSpec {
  description: string;
  schema?: JsonSchema;
  /** Content type of the success body; `application/json` unless given. */
  contentType?: string;
  headers?: Record<string, { description: string; schema: JsonSchema }>;
}

/** One operation: the route and its whole contract. The same schemas validate and document it. */
export interface OperationSpec {
  method: Method;
  /** OpenAPI-style path, e.g. `/api/v1/households/{householdId}`, relative to where the router is mounted (the host mounts at /). */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags?: string[];
  /** True: a signed-in session is required (401 otherwise). */
  auth?: boolean;
  /**
   * The scope a personal access token needs to reach this operation (decisions.md §8). Without
   * one, a request carrying a token answers 403 `insufficient_scope` (the default for everything
   * not listed there: /api/v1/me/*, /api/v1/auth/*, settings, members' changes, invitations …).
   * `any`: every valid token, whatever its scopes.
   */
  tokenScope?: TokenAccess;
  /**
   * Checks that run before the input is validated, such as a credential other than the session
   * that must answer 401 before a malformed body could answer 400 (the internal route's bearer).
   */
  guard?: RequestHandler;
  params?: JsonSchema;
  query?: JsonSchema;
  body?: JsonSchema;
  /**
   * Media type of the body: JSON unless given. `application/x-www-form-urlencoded` is for the one
   * kind of route that cannot be JSON, a provider's cross-site form_post callback: the pipeline
   * then parses a form body for exactly this method and (literal) path and still refuses forms
   * everywhere else. Such a route must prove itself by something other than the session cookie
   * (an OAuth `state`), since a cross-site form can reach it.
   */
  bodyContentType?: 'application/json' | 'application/x-www-form-urlencoded';
  /** Success and documented error answers, by status. Errors reference the Problem schema. */
  responses: Record<number, ResponseSpec>;
  /** Error codes this operation may answer, by status, for the document (e.g. `{ 400: ['invalid_token'] }`). */
  errorCodes?: Record<number, string[]>;
  /**
   * Members a problem answer of this operation carries beyond the Problem schema's, by status, for
   * the document (e.g. `{ 401: { mfaToken: { type: 'string', description: 'With `mfa_required`: …' } } }`);
   * each is optional there, since other codes of the same status do not carry it.
   */
  problemMembers?: Record<number, Record<string, JsonSchema>>;
  /** Field → code overrides for validation failures. */
  fieldCodes?: Record<string, string>;
  /**
   * True for a hot read: `res.json` writes the success body with a serializer compiled once from its
   * response schema (fast-json-stringify) instead of JSON.stringify. The same JSON comes out (a
   * field the schema does not name is still written); a value of the wrong type is coerced to the
   * schema's, so use it only where the schema is the answer's contract.
   */
  compiledResponse?: boolean;
  /**
   * The declared read (an `@svc/db` ReadDeclaration) this GET serves: the host's read kernel loads
   * it with "who is asking" in one round trip and the handler takes its value with
   * `loadedRead(req, read)` (undefined when it was not loaded: the store then reads itself).
   */
  read?: DeclaredRead;
  /**
   * For a declared read with a list version: the version whose answer this instance holds for the
   * household (the path's first parameter), so the kernel loads the version alone while it holds.
   */
  heldVersion?: (householdId: string) => string | undefined;
  /**
   * True when the success answer holds one household, member, rule or event: it carries an `ETag`
   * made from its JSON (see `etagOf`), the same tag its GET answers and an If-Match is checked against.
   */
  etag?: boolean;
  /**
   * For a PUT, PATCH or DELETE of one resource: reads it now, as its GET answers it (throwing its
   * 404 when it is gone or the caller may not see it). With it the route honours `If-Match`: a
   * stale tag answers 412 `precondition_failed` before the handler runs; `*` matches any existing one.
   */
  current?: (req: TypedRequest<unknown, unknown, Record<string, string>>) => Promise<unknown>;
}

export interface ValidInput<B, Q, P> {
  body: B;
  query: Q;
  params: P;
}

/**
 * A schema written once, as a literal: `const Body = { type: 'object', … } as const satisfies TypedSchema`.
 * The same object validates (ajv), documents (OpenAPI) and types (`Infer<typeof Body>`) a request part.
 */
export type TypedSchema = JSONSchema;
/** The TypeScript type of what a TypedSchema accepts. */
export type Infer<S> = S extends JSONSchema ? (S extends boolean ? unknown : FromSchema<S>) : unknown;

export type TypedRequest<B = unknown, Q = unknown, P = unknown> = Request & { input: ValidInput<B, Q, P> };
export type TypedHandler<B, Q, P> = (req: TypedRequest<B, Q, P>, res: Response, next: NextFunction) => unknown;

/** A declared read as a route names it (an `@svc/db` ReadDeclaration is one): its name and, type only, the value it loads. */
export interface DeclaredRead<T = unknown> {
  readonly name: string;
  readonly loads?: T;
}

declare const kernelChecked: unique symbol;
/**
 * A declared read's value as the read kernel loaded it with the principal: the kernel checked the
 * caller's membership of the household (a household read) or ownership (an account read) in the
 * same statement. Only `loadedRead` makes one, so a service that skips its own check for it says so
 * in its types.
 */
export type KernelChecked<T> = T & { readonly [kernelChecked]: true };

/**
 * The value of `read` the kernel loaded for this request, typed by the declaration; undefined when
 * the route does not name `read`, or the kernel did not load it (the service then checks and reads).
 */
export function loadedRead<T>(req: Request, read: DeclaredRead<T> | undefined): KernelChecked<T> | undefined {
  const lent = req.loadedRead;
  return read && lent && lent.name === read.name ? (lent.value as KernelChecked<T>) : undefined;
}

function toExpressPath(path: string): string {
  return path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}

/**
 * An Express router whose routes are declared with their schemas. Each route validates its path,
 * query and body (400 with the failing fields) before the handler runs, and is recorded for the
 * OpenAPI document. Handlers read validated values from `req.input`.
 */
export class ApiRouter {
  readonly router: Router = express.Router();
  readonly operations: OperationSpec[] = [];
  /**
   * Each declared operation with the handler chain it runs (mark, auth, validation, handlers), as
   * registered on `router`; `onlyFor` dispatches to these by method and path without walking
   * Express's layers.
   */
  readonly routes: { operation: OperationSpec; chain: RequestHandler[] }[] = [];
  /**
   * Paths served outside the OpenAPI document (HTML pages) by handlers mounted with `serve`;
   * `onlyFor` enters the router for these as for its operations' paths, and for nothing else.
   */
  readonly undocumentedPaths: string[] = [];

  constructor(private readonly defaults: { tags?: string[] } = {}) {}

  /**
   * Declares one operation. The handler's `req.input` is typed from the spec's own schemas
   * (`params`, `query`, `body` written `as const satisfies TypedSchema`), so a field is declared
   * once for ajv, the OpenAPI document and the compiler.
   */
  route<const S extends OperationSpec>(spec: S, ...handlers: TypedHandler<Infer<S['body']>, Infer<S['query']>, Infer<S['params']>>[]): this;
  /** @deprecated Transitional: explicit request types. Write the schemas `as const` and let `route` infer them. */
  route<B = unknown, Q = unknown, P = unknown>(spec: OperationSpec, ...handlers: TypedHandler<B, Q, P>[]): this;
  route(spec: OperationSpec, ...handlers: TypedHandler<unknown, unknown, unknown>[]): this {
    const full: OperationSpec = {
      ...spec,
      tags: spec.tags ?? this.defaults.tags,
      params: spec.params && withStringLimits(spec.params),
      query: spec.query && withStringLimits(spec.query),
      body: spec.body && withStringLimits(spec.body),
    };
    this.operations.push(full);
    const validators = {
      params: full.params && new PartValidator(full.params, 'path', full.fieldCodes),
      query: full.query && new PartValidator(full.query, 'query', full.fieldCodes),
      body: full.body && new PartValidator(full.body, 'body', full.fieldCodes),
    };
    const routeName = `${full.method.toUpperCase()} ${full.path}`;
    const serializers = full.compiledResponse ? compileSerializers(full.responses) : undefined;
    const readName = full.read?.name;
    const etag = full.etag === true;
    const mark: RequestHandler = (req, res, next) => {
      res.locals.route = routeName;
      if (etag) tagAnswer(res);
      // Only the route that names the read takes its value, and only once.
      if (req.lent) {
        if (req.lent.name === readName) req.loadedRead = req.lent;
        req.lent = undefined;
      }
      if (serializers) {
        res.locals.serializers = serializers;
        res.json = compiledJson;
      }
      next();
    };
    const validate: RequestHandler = (req, res, next) => {
      throwDeferredInputError(req);
      if (typeof req.params.householdId === 'string') res.locals.householdId = req.params.householdId; // for the request log
      // Every part is checked before answering, so one 400 names every failing field.
      const errors: InputError[] = [];
      const check = (validator: PartValidator | undefined, value: unknown, fallback: unknown) => {
        if (!validator) return fallback;
        try {
          return validator.check(value);
        } catch (err) {
          if (!(err instanceof InputError)) throw err;
          errors.push(err);
          return undefined;
        }
      };
      // `req.query` parses the query string again on every read (Express 5): read it once.
      const query = req.query;
      const input = {
        params: check(validators.params, req.params, req.params),
        query: check(validators.query, query, query),
        body: check(validators.body, req.body ?? {}, req.body),
      };
      if (errors.length) throw mergeInputErrors(errors);
      req.input = input;
      next();
    };
    const chain: RequestHandler[] = [
      mark,
      // Before anything else of the route: a token outside its scopes learns nothing more (not even 401 or 400).
      tokenScopeGate(full.tokenScope),
      ...(full.auth ? [requireAuth] : []),
      ...(full.guard ? [full.guard] : []),
      validate,
      // After every gate of the route and its input check: a kept answer is sent again only to a
      // request that passed them itself (and before If-Match, which the first request's write changed).
      ...(takesIdempotencyKey(full) ? [idempotencyStep] : []),
      ...(full.current ? [ifMatch(full.current)] : []),
      ...(handlers as unknown as RequestHandler[]),
    ];
    this.router[full.method](toExpressPath(full.path), ...chain);
    this.routes.push({ operation: full, chain });
    return this;
  }

  /**
   * Mounts `handler` (an Express router of pages, say) for `paths`, which it serves outside the
   * OpenAPI document: exact paths, matched as Express matches them (any letter case, an optional
   * trailing slash). Requests for other paths never enter it, so a router of pages costs the rest
   * of the API nothing (a router walked to its end hands the request on only in a later turn).
   */
  serve(paths: readonly string[], handler: RequestHandler): this {
    if (!paths.length || paths.some((p) => !p.startsWith('/') || p.includes('{'))) throw new Error('serve: one or more literal paths starting with /');
    this.undocumentedPaths.push(...paths);
    this.router.use(handler);
    return this;
  }
}

/** The app's Idempotency-Key step (`HttpAppOptions.idempotency`, kept in `app.locals`), when it has one. */
const idempotencyStep: RequestHandler = (req, res, next) => {
  const step = req.app?.locals.idempotency as RequestHandler | undefined;
  if (!step) return next();
  return step(req, res, next);
};

/** The If-Match step of a route with `current`: nothing to do without the header. */
function ifMatch(current: NonNullable<OperationSpec['current']>): RequestHandler {
  return async (req, res, next) => {
    const header = req.headers['if-match'];
    if (header === undefined) return next();
    // Held from the check until the answer has gone (the write committed before it was sent).
    const locks = res.locals.conditionalWriteLocks as ConditionalWriteLocks | undefined;
    if (locks) {
      const release = await locks.acquire(req.path.toLowerCase().replace(/\/+$/, ''));
      let released = false;
      const done = () => {
        if (released) return;
        released = true;
        release().catch(() => {}); // the lease frees it within 30 s
      };
      res.once('finish', done);
      res.once('close', done);
    }
    checkIfMatch(header, await current(req as TypedRequest<unknown, unknown, Record<string, string>>));
    next();
  };
}

// fast-json-stringify is CommonJS with a default export; under NodeNext it may arrive wrapped.
const fastJson = ((fastJsonModule as unknown as { default?: unknown }).default ?? fastJsonModule) as typeof fastJsonModule;

/**
 * The schema as the serializer should see it: every object keeps the properties it does not name
 * (`additionalProperties` true unless the schema says otherwise), so nothing is dropped, and string
 * formats are left out (they only check input; the serializer would reformat a date). A union
 * (`oneOf`, `anyOf`) is written as JSON.stringify writes it: fast-json-stringify would otherwise
 * validate the value against each branch with ajv, on every answer, to pick the one to write with.
 */
export function serializerSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(serializerSchema);
  if (!schema || typeof schema !== 'object') return schema;
  if ('oneOf' in schema || 'anyOf' in schema) return {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'format' || k === 'description' || k === 'examples') continue;
    out[k] = k === 'enum' || k === 'const' || k === 'default' ? v : serializerSchema(v);
  }
  const type = out.type;
  if ((type === 'object' || (Array.isArray(type) && type.includes('object'))) && out.additionalProperties === undefined) out.additionalProperties = true;
  return out;
}

/** A compiled serializer per success status (2xx with a JSON schema). */
function compileSerializers(responses: Record<number, ResponseSpec>): Map<number, (doc: unknown) => string> {
  const out = new Map<number, (doc: unknown) => string>();
  for (const [status, spec] of Object.entries(responses)) {
    const code = Number(status);
    if (code < 200 || code > 299 || !spec.schema || (spec.contentType && spec.contentType !== 'application/json')) continue;
    out.set(code, fastJson(serializerSchema(spec.schema) as Parameters<typeof fastJson>[0]) as (doc: unknown) => string);
  }
  return out;
}

const expressJson = express.response.json;

/**
 * Outside production (every test), each compiled answer is checked against JSON.stringify's: a
 * value the schema types otherwise (a null where it says string, a number as text) would be
 * coerced by the serializer without a word, so it fails the request (500) instead, naming the route.
 */
const CHECK_COMPILED = process.env.NODE_ENV !== 'production';

/** `res.json` for routes with compiled serializers: the compiled one for the status (sent with `sendJsonText`), else Express's own. */
function compiledJson(this: Response, body: unknown): Response {
  const serialize = (this.locals.serializers as Map<number, (doc: unknown) => string>).get(this.statusCode);
  if (!serialize) return expressJson.call(this, body);
  const text = serialize(body);
  if (CHECK_COMPILED && !isDeepStrictEqual(JSON.parse(text), JSON.parse(JSON.stringify(body) ?? 'null'))) {
    throw new Error(
      `${String(this.locals.route)}: the compiled serializer's answer differs from JSON.stringify's (the value does not fit its response schema)`,
    );
  }
  return sendJsonText(this, text);
}

/**
 * Ends the answer with `text`, JSON already written (by a compiled serializer, or by PostgreSQL),
 * as `res.json` would send it: Content-Type `application/json; charset=utf-8` unless one is set,
 * Content-Length (`bytes`, its length in UTF-8, when the caller knows it already: an answer kept
 * to be sent again), no body for HEAD. `res.send` would only parse and re-format the Content-Type
 * and look for an ETag (off) and freshness (never, without one) before doing the same.
 *
 * `text` may be the UTF-8 bytes themselves (a Buffer): what an answer kept to be sent again should
 * be once it is more than a few kB. Node writes a string answer by joining it to the head and
 * encoding the whole (two passes over a large page on every send); a Buffer goes to the socket
 * beside the head as it is (docs/benchmarks.md, "What the bench settled").
 */
export function sendJsonText(res: Response, text: string | Buffer, bytes: number = typeof text === 'string' ? Buffer.byteLength(text) : text.length): Response {
  if (!res.hasHeader('Content-Type')) res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', bytes);
  if (res.req.method === 'HEAD') res.end();
  else if (typeof text === 'string') res.end(text, 'utf8');
  // A small answer (a poll with nothing new) goes out with the head as one string: a Buffer would
  // be handed to the socket as a second piece of a vectored write.
  else if (text.length <= SMALL_ANSWER_BYTES)
    res.end(text.toString('latin1'), 'latin1'); // byte for byte
  else res.end(text);
  return res;
}

/** Answers up to this many bytes are sent as text with their head (`sendJsonText`). */
const SMALL_ANSWER_BYTES = 512;
