import { isDeepStrictEqual } from 'node:util';
import { SESSION_COOKIE } from '@svc/contracts';
import { TOKEN_SCOPE_DESCRIPTIONS, TOKEN_SCOPES } from './access-scopes.js';
import type { OperationSpec } from './api-router.js';
import { escapeDescriptions } from './markdown.js';
import { PROBLEM_TITLES } from './problem.js';
import type { JsonSchema } from './validation.js';

/**
 * How the document names schemas, so that a generated client gets named types:
 *
 * - A schema object with a `title` (at any depth: a response, an array's items, a oneOf branch)
 *   becomes `components.schemas[title]` and is referenced by `$ref` wherever it appears. Put a
 *   title on a schema that several operations share (`MeResponse`), so they share one type.
 * - Every request body and response body without a title is named after its operation:
 *   `<OperationId>Request`, `<OperationId>Response` (the first success status) and
 *   `<OperationId>Response<status>` for any other status. A new route therefore gets named
 *   components without any work; a title only chooses a better, shared name.
 * - Two different schemas under one name keep the first name; the next gets a numeric suffix and
 *   is listed in `nameConflicts` (a test keeps that list empty).
 */
export interface OpenApiBuild {
  document: Record<string, unknown>;
  /** Names given to two different schemas (the second got a suffix). */
  nameConflicts: string[];
}

const PROBLEM_SCHEMA: JsonSchema = {
  type: 'object',
  title: 'Problem',
  description: 'RFC 9457 problem details (application/problem+json). Branch on `code`; each operation lists the codes it may answer.',
  required: ['type', 'title', 'status', 'detail', 'instance', 'code', 'traceId'],
  properties: {
    type: { type: 'string', description: '`about:blank`, except 426: `app-version-unsupported`' },
    title: { type: 'string', description: 'The status text' },
    status: { type: 'integer', format: 'int32', description: 'The HTTP status' },
    detail: { type: 'string', description: 'English, written for a log; not for branching' },
    instance: { type: ['string', 'null'], description: 'The request path' },
    code: { type: 'string', description: 'The value to branch on' },
    traceId: { type: 'string', pattern: '^[0-9a-f]{32}$', description: 'Same as the X-Trace-Id response header' },
    errors: {
      type: 'array',
      description: 'On validation failures: every failing field, in one answer',
      items: {
        type: 'object',
        title: 'FieldError',
        required: ['field', 'message', 'in'],
        properties: {
          field: { type: 'string', description: 'Dotted path of the field, e.g. `payload.kind`' },
          message: { type: 'string', description: 'What is wrong, in words' },
          in: { type: 'string', enum: ['body', 'query', 'path'] },
        },
      },
    },
  },
};

const TRACE_ID_EXAMPLE = '4bf92f3577b34da6a3ce929d0e0e4736';

/** Response headers, each defined once under components.headers. */
const HEADERS: Record<string, Record<string, unknown>> = {
  'X-Trace-Id': {
    description:
      'W3C trace id of the request (32 lower-case hex); the one of an incoming valid `traceparent` when there is one. Quote it when reporting a problem.',
    required: true,
    schema: { type: 'string', pattern: '^[0-9a-f]{32}$', examples: [TRACE_ID_EXAMPLE] },
  },
  'Server-Timing': {
    description: '`total;dur=<ms>`, `db;dur=<ms>;desc="<n> queries"`, then one `<step>;dur=<ms>` per step the handler named',
    required: true,
    schema: { type: 'string', examples: ['total;dur=12.4, db;dur=3.1;desc="2 queries", hash-password;dur=8.2'] },
  },
  'X-Diagnostics': {
    description: 'Only when asked for (request header `X-Diagnostics: 1` or `?diagnostics=1`): the same breakdown as one-line JSON',
    schema: { type: 'string', examples: [`{"traceId":"${TRACE_ID_EXAMPLE}","totalMs":12.4,"db":{"ms":3.1,"queries":2},"steps":[]}`] },
  },
  'Set-Cookie': {
    description: `The session cookie \`${SESSION_COOKIE}\` (HttpOnly, SameSite=Lax, Path=/, Secure on https, 30 days): set with a new id at sign-in, renewed while used, cleared at sign-out`,
    schema: { type: 'string', examples: [`${SESSION_COOKIE}=s%3A…; Path=/; Expires=Fri, 25 Dec 2026 09:00:00 GMT; HttpOnly; SameSite=Lax`] },
  },
  'Retry-After': {
    description: 'Seconds to wait (a rate limit, a resend cooldown, a lock, a dependency outage), or an HTTP date (the household AI is paused until then)',
    schema: { type: 'string', examples: ['30', 'Sat, 28 Nov 2026 09:00:00 GMT'] },
  },
  ETag: {
    description: 'The resource’s entity tag (strong): send it in `If-Match` to change or delete it only while it is unchanged',
    schema: { type: 'string', examples: ['"q2b3Vn1o9yQ0cA1oFz7oJkq3bXw"'] },
  },
  'Accept-Encoding': {
    description: 'On a 415: the content codings a request body may be sent in',
    schema: { type: 'string', examples: ['gzip, deflate, br'] },
  },
  'Idempotent-Replayed': {
    description:
      '`true` when this answer is the kept first answer to the request’s `Idempotency-Key`, sent again without running the operation (absent on a first answer)',
    schema: { type: 'string', enum: ['true'] },
  },
  Upgrade: {
    description: 'On a 426: what to upgrade to, the platform’s app at its lowest supported build (`<platform>-app/<floor>`), with `Connection: Upgrade`',
    schema: { type: 'string', examples: ['ios-app/2.4.0'] },
  },
  RateLimit: {
    description: 'IETF httpapi RateLimit header: the quota left in the current window and when it resets (seconds)',
    schema: { type: 'string', examples: ['"auth";r=97;t=42'] },
  },
  'RateLimit-Policy': {
    description: 'IETF httpapi RateLimit-Policy header: the quota and the window (seconds) of this limit',
    schema: { type: 'string', examples: ['"auth";q=100;w=60'] },
  },
};

const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });

const STATUS_TEXT: Record<number, string> = {
  400: 'The request is not in the documented shape, or a rule refused it',
  401: 'No valid session, or credentials refused',
  403: 'Not allowed (a role refusal, or a cookie-carrying state change from a foreign origin)',
  404: 'Not found (a household you are not a member of is not found either)',
  409: 'Conflict',
  410: 'Gone for good',
  412: 'If-Match named a tag that is no longer the resource’s ETag: it changed meanwhile (read it again)',
  413: 'Body larger than the limit (64 kB), also once a compressed body is inflated',
  415: "The body's Content-Encoding is not one the service decodes (gzip, deflate, br); see Accept-Encoding",
  422: 'Understood, but refused as it stands',
  423: 'Locked; see Retry-After',
  426: 'App build below its platform floor (type `app-version-unsupported`)',
  429: 'Rate limited, throttled or out of quota; see Retry-After where a wait can be named',
  500: 'An unexpected error; quote the trace id',
  503: 'A dependency (the database) does not answer; retry after Retry-After',
};

function pascal(id: string): string {
  return id.charAt(0).toUpperCase() + id.slice(1);
}

/** The keywords under which a schema holds other schemas. */
const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'] as const;
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'] as const;
const SCHEMA_SINGLES = [
  'items',
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedProperties',
  'unevaluatedItems',
] as const;

class SchemaNamer {
  readonly components: Record<string, JsonSchema> = {};
  readonly conflicts: string[] = [];

  /** Replaces every titled subschema by a $ref; answers the schema (or a $ref when `name` or its title names it). */
  name(schema: JsonSchema, fallback?: string, input = false): JsonSchema {
    if (typeof schema !== 'object' || schema === null || '$ref' in schema) return schema;
    const out: JsonSchema = { ...schema };
    for (const key of SCHEMA_MAPS) {
      const map = schema[key] as Record<string, JsonSchema> | undefined;
      if (map && typeof map === 'object') out[key] = Object.fromEntries(Object.entries(map).map(([k, v]) => [k, this.name(v, undefined, input)]));
    }
    for (const key of SCHEMA_LISTS) {
      const list = schema[key] as JsonSchema[] | undefined;
      if (Array.isArray(list)) out[key] = list.map((s) => this.name(s, undefined, input));
    }
    for (const key of SCHEMA_SINGLES) {
      const one = schema[key] as JsonSchema | undefined;
      if (one && typeof one === 'object') out[key] = this.name(one, undefined, input);
    }
    // A discriminator over named branches: map each branch's constant to its component, so the
    // value (`CategoryFrequency`) and not the component name (`CategoryFrequencyInput`) selects it.
    const discriminator = schema.discriminator as { propertyName?: string; mapping?: Record<string, string> } | undefined;
    const branches = (schema.oneOf ?? schema.anyOf) as JsonSchema[] | undefined;
    if (discriminator?.propertyName && !discriminator.mapping && Array.isArray(branches)) {
      const named = (out.oneOf ?? out.anyOf) as JsonSchema[];
      const mapping: Record<string, string> = {};
      branches.forEach((branch, i) => {
        const value = (branch.properties as Record<string, JsonSchema> | undefined)?.[discriminator.propertyName!]?.const;
        const target = named[i]?.$ref;
        if (typeof value === 'string' && typeof target === 'string') mapping[value] = target;
      });
      if (Object.keys(mapping).length === branches.length) out.discriminator = { ...discriminator, mapping };
    }
    const wanted = typeof schema.title === 'string' && schema.title ? schema.title : fallback;
    if (!wanted) return out;
    return { $ref: `#/components/schemas/${this.register(wanted, out, input)}` };
  }

  private register(wanted: string, schema: JsonSchema, input: boolean): string {
    const body = { ...schema, title: schema.title ?? wanted };
    // A request part carries the default string limits the response does not: its own name.
    const candidates = input ? [wanted, `${wanted}Input`] : [wanted];
    for (let n = 0; ; n++) {
      const name = candidates[n] ?? `${wanted}${n - candidates.length + 2}`;
      const existing = this.components[name];
      if (!existing) {
        this.components[name] = body;
        if (n >= candidates.length) this.conflicts.push(wanted);
        return name;
      }
      if (isDeepStrictEqual(withoutAnnotations(existing), withoutAnnotations(body))) return name;
    }
  }
}

/** A schema without the keywords that only explain it: two schemas that differ only there are one. */
function withoutAnnotations(schema: JsonSchema): JsonSchema {
  const { description: _d, examples: _e, title: _t, ...rest } = schema;
  return rest;
}

function parameters(schema: JsonSchema | undefined, where: 'path' | 'query', namer: SchemaNamer): unknown[] {
  if (!schema) return [];
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(props).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    schema: namer.name(s, undefined, true),
    ...(s.description ? { description: s.description } : {}),
  }));
}

interface OperationTraits {
  rateLimited: boolean;
  setsCookie: boolean;
  /** Takes Idempotency-Key: a kept answer (success or 4xx) may come back as a replay. */
  idempotent: boolean;
}

function problem(op: OperationSpec, status: number, codes: string[], traits: OperationTraits) {
  const headers: Record<string, unknown> = { 'X-Trace-Id': ref('X-Trace-Id'), 'Server-Timing': ref('Server-Timing'), 'X-Diagnostics': ref('X-Diagnostics') };
  if (status === 429 || status === 423 || status === 503) headers['Retry-After'] = ref('Retry-After');
  if (status === 415) headers['Accept-Encoding'] = ref('Accept-Encoding');
  if (status === 426) headers.Upgrade = ref('Upgrade');
  // A kept 4xx answer may be a replay; a refusal of the caller (401, 403, 423, 429) and 5xx are never kept.
  if (traits.idempotent && status >= 400 && status < 500 && ![401, 403, 423, 429].includes(status)) headers['Idempotent-Replayed'] = ref('Idempotent-Replayed');
  if (traits.rateLimited) Object.assign(headers, { RateLimit: ref('RateLimit'), 'RateLimit-Policy': ref('RateLimit-Policy') });
  const unique = [...new Set(codes)];
  const text = op.responses[status]?.description ?? STATUS_TEXT[status] ?? 'Error';
  const codeText = unique.length ? ` Codes: ${unique.map((c) => `\`${c}\``).join(', ')}.` : '';
  const members = op.problemMembers?.[status] ?? {};
  const schema =
    unique.length || Object.keys(members).length
      ? {
          allOf: [
            { $ref: '#/components/schemas/Problem' },
            { type: 'object', properties: { ...(unique.length ? { code: { type: 'string', enum: unique } } : {}), ...members } },
          ],
        }
      : { $ref: '#/components/schemas/Problem' };
  const example = {
    type: status === 426 ? 'app-version-unsupported' : 'about:blank',
    title: PROBLEM_TITLES[status] ?? 'Error',
    status,
    detail: text,
    instance: op.path,
    code: unique[0] ?? 'error',
    traceId: TRACE_ID_EXAMPLE,
  };
  return {
    description: `${text}.${codeText}`,
    headers,
    content: { 'application/problem+json': { schema, example } },
  };
}

/** The `default` answer of a redirect-only operation: the refusals it shares with every operation, by status. */
function sharedProblems(op: OperationSpec, statuses: number[], codes: Record<number, string[]>, traits: OperationTraits) {
  const first = problem(op, statuses[0]!, codes[statuses[0]!]!, traits);
  const headers: Record<string, unknown> = { ...first.headers };
  if (statuses.some((s) => s === 429 || s === 423 || s === 503)) headers['Retry-After'] = ref('Retry-After');
  if (statuses.includes(415)) headers['Accept-Encoding'] = ref('Accept-Encoding');
  const all = [...new Set(statuses.flatMap((s) => codes[s] ?? []))];
  const byStatus = statuses.map((s) => `${s} ${(codes[s] ?? []).map((c) => `\`${c}\``).join(', ')}`.trim()).join('; ');
  return {
    description: `A refusal every operation shares (the request pipeline's, not this operation's own), by status: ${byStatus}.`,
    headers,
    content: {
      'application/problem+json': {
        schema: {
          allOf: [
            { $ref: '#/components/schemas/Problem' },
            { type: 'object', properties: { status: { type: 'integer', enum: statuses }, ...(all.length ? { code: { type: 'string', enum: all } } : {}) } },
          ],
        },
        example: first.content['application/problem+json'].example,
      },
    },
  };
}

const STATE_CHANGING = new Set(['post', 'put', 'patch', 'delete']);

/** A person's write under /api/v1 (not /api/v1/auth/*): it takes `Idempotency-Key` (see `idempotency`). */
export function idempotent(op: Pick<OperationSpec, 'method' | 'path' | 'auth'>): boolean {
  return STATE_CHANGING.has(op.method) && Boolean(op.auth) && op.path.startsWith('/api/v1/') && !op.path.startsWith('/api/v1/auth/');
}

const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  schema: { type: 'string', minLength: 1, maxLength: 255 },
  description:
    'Makes a retry safe (1–255 characters, e.g. a UUID per intended change): the same key with the same JSON body on the same method and path from the same person within 24 h answers what the first answered (status, body, Location, ETag) without doing it again, marked `Idempotent-Replayed: true`; answers of 500 and above, and refusals of the caller (401, 403, 423, 429), are not kept. ' +
    'A replay comes only after this request passed the operation’s own checks (sign-in, token scope, membership): keys are per credential (a cookie session, or each access token), and on a household’s operation bound to the caller’s role there (no longer a member: the operation’s 404; another role: 422). ' +
    'The same key with another body or path answers 422 `idempotency_key_reused` (also when the kept answer can no longer be opened after a key rotation); while the first request runs, 409 `idempotency_key_in_flight`. An empty or longer key answers 400 `validation_failed`.',
};

const IF_MATCH_PARAMETER = {
  name: 'If-Match',
  in: 'header',
  required: false,
  schema: { type: 'string' },
  description:
    'The `ETag` of the resource as you last saw it (its GET, or the answer of your last write): the change is made only while it is still that, else 412 `precondition_failed`. `*` matches any existing resource; on a deleted one the answer is 404.',
};

/** The OpenAPI 3.1 document of every operation declared through ApiRouter, with its named schemas. */
export function buildOpenApi(info: { title: string; version: string; description?: string }, operations: OperationSpec[]): OpenApiBuild {
  const namer = new SchemaNamer();
  namer.name(PROBLEM_SCHEMA);
  const paths: Record<string, Record<string, unknown>> = {};
  // Responses first, so that a titled schema's plain name is the response shape and a request
  // part with the default string limits becomes `<Title>Input`.
  const answers = new Map<OperationSpec, Record<string, unknown>>();
  for (const op of operations) {
    const id = pascal(op.operationId);
    const underAuth = op.path.startsWith('/api/v1/auth/');
    const declared429 = op.errorCodes?.[429] ?? [];
    const traits: OperationTraits = {
      // Every /api/v1/auth/* operation shares the per-IP limit; other limited routes declare 429 rate_limited.
      rateLimited: underAuth || declared429.includes('rate_limited') || op.tokenScope !== undefined,
      setsCookie: underAuth || Boolean(op.auth),
      idempotent: idempotent(op),
    };
    // What the pipeline may answer for this operation, besides what it declares itself.
    const codes: Record<number, string[]> = {};
    const add = (status: number, ...c: string[]) => {
      codes[status] = [...(codes[status] ?? []), ...c];
    };
    // Any request can be refused before routing (a NUL or a malformed escape in the URL).
    add(400, 'validation_failed');
    if (op.body || op.query || op.params) add(400, 'value_too_long');
    // Under /api a request carrying `Authorization: Bearer` is judged by the token alone: an
    // unknown, revoked, expired or malformed one answers 401, one without this operation's scope 403.
    if (op.auth || op.path.startsWith('/api/')) add(401, 'unauthenticated');
    if (op.path.startsWith('/api/')) add(403, 'insufficient_scope');
    if (STATE_CHANGING.has(op.method) && (op.auth || underAuth)) add(403, 'forbidden');
    if (op.body) add(413, 'payload_too_large');
    // A Content-Encoding other than gzip, deflate or br (identity: none); corrupt compressed data is a 400.
    if (op.body) add(415, 'unsupported_media_type');
    if (op.path.startsWith('/api/')) add(426, 'app_version_unsupported');
    if (traits.rateLimited) add(429, 'rate_limited');
    add(500, 'internal_error');
    // Under /api the session is read from the database for every cookie-carrying request.
    if (op.path.startsWith('/api/') || op.responses[503]) add(503, 'service_unavailable');
    if (idempotent(op)) {
      add(409, 'idempotency_key_in_flight');
      add(422, 'idempotency_key_reused');
    }
    if (op.current) add(412, 'precondition_failed');
    for (const [status, c] of Object.entries(op.errorCodes ?? {})) add(Number(status), ...c);

    const responses: Record<string, unknown> = {};
    const successes = Object.keys(op.responses)
      .map(Number)
      .filter((s) => s < 400)
      .sort();
    for (const status of successes) {
      const r = op.responses[status]!;
      const headers: Record<string, unknown> = {
        'X-Trace-Id': ref('X-Trace-Id'),
        'Server-Timing': ref('Server-Timing'),
        'X-Diagnostics': ref('X-Diagnostics'),
        ...(traits.setsCookie ? { 'Set-Cookie': ref('Set-Cookie') } : {}),
        ...(traits.rateLimited ? { RateLimit: ref('RateLimit'), 'RateLimit-Policy': ref('RateLimit-Policy') } : {}),
        ...(op.etag ? { ETag: ref('ETag') } : {}),
        ...(traits.idempotent ? { 'Idempotent-Replayed': ref('Idempotent-Replayed') } : {}),
        ...r.headers,
      };
      const name = status === successes[0] ? `${id}Response` : `${id}Response${status}`;
      responses[status] = {
        description: r.description,
        headers,
        ...(r.schema ? { content: { [r.contentType ?? 'application/json']: { schema: namer.name(r.schema, name) } } } : {}),
      };
    }
    for (const status of Object.keys(op.responses).map(Number)) if (status >= 400) codes[status] ??= [];
    // A redirect-only operation (a browser step of social sign-in: its success is the 302) lists
    // its own refusals one by one and the ones every operation shares (the pipeline's) as its
    // `default` answer, OpenAPI's answer for the statuses not declared one by one. Without a 2XX or
    // a default, a reader (and Redocly's operation-2xx-response) cannot tell where its success is.
    const redirectOnly = successes.length > 0 && successes.every((s) => s >= 300 && s < 400);
    const own = new Set([...Object.keys(op.errorCodes ?? {}), ...Object.keys(op.responses)].map(Number));
    const shared = redirectOnly
      ? Object.keys(codes)
          .map(Number)
          .filter((s) => !own.has(s))
      : [];
    for (const status of Object.keys(codes).map(Number).sort()) {
      if (!shared.includes(status)) responses[status] = problem(op, status, codes[status]!, traits);
    }
    if (shared.length) responses.default = sharedProblems(op, shared.sort(), codes, traits);
    answers.set(op, responses);
  }
  for (const op of operations) {
    const id = pascal(op.operationId);
    paths[op.path] ??= {};
    paths[op.path]![op.method] = {
      operationId: op.operationId,
      summary: op.summary,
      ...(op.description || op.auth ? { description: [op.description, tokenNote(op)].filter(Boolean).join('\n\n') } : {}),
      ...(op.tags ? { tags: op.tags } : {}),
      security: [...(op.auth ? [{ sessionCookie: [] }] : []), ...(op.tokenScope ? [{ accessToken: op.tokenScope === 'any' ? [] : [op.tokenScope] }] : [])],
      parameters: [
        ...parameters(op.params, 'path', namer),
        ...parameters(op.query, 'query', namer),
        ...(op.path.startsWith('/api/')
          ? [
              {
                name: 'X-App-Version',
                in: 'header',
                required: false,
                schema: { type: 'string', examples: ['ios/2.4.1'] },
                description: '<platform>/<version>; below the platform floor answers 426',
              },
            ]
          : []),
        ...(idempotent(op) ? [IDEMPOTENCY_KEY_PARAMETER] : []),
        ...(op.current ? [IF_MATCH_PARAMETER] : []),
      ],
      ...(op.body
        ? { requestBody: { required: true, content: { [op.bodyContentType ?? 'application/json']: { schema: namer.name(op.body, `${id}Request`, true) } } } }
        : {}),
      responses: answers.get(op),
    };
  }
  const tags = [...new Set(operations.flatMap((o) => o.tags ?? []))].map((name) => ({ name, description: `Operations of ${name}` }));
  const document = {
    openapi: '3.1.0',
    info: {
      ...info,
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      description: [
        info.description ?? '',
        '',
        'Every answer carries `X-Trace-Id` and `Server-Timing`. Errors are `application/problem+json` (the `Problem` schema); branch on `code`.',
        'A path asked with a method it does not have answers 405 `method_not_allowed` with `Allow`; an unknown path 404 `not_found`.',
        'A state-changing request whose body is not JSON answers 400 `validation_failed`.',
        'A body may be sent compressed (`Content-Encoding: gzip`, `deflate` or `br`): data that is not valid in its encoding answers 400 `validation_failed`, a body that inflates past the limit 413 `payload_too_large`, any other encoding 415 `unsupported_media_type` with `Accept-Encoding`.',
      ].join('\n'),
    },
    servers: [{ url: '/' }],
    tags,
    paths,
    components: {
      schemas: namer.components,
      headers: HEADERS,
      securitySchemes: {
        sessionCookie: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE, description: 'Set by register, login and the social sign-in operations' },
        accessToken: {
          type: 'http',
          scheme: 'bearer',
          description: [
            "A personal access token (`Authorization: Bearer mp_pat_…`, made with `POST /api/v1/me/tokens`): acts as its person, with the person's roles, within its scopes. Each operation lists the one scope that opens it (an empty list: any token); an operation without this scheme answers 403 `insufficient_scope` to a token. A request with a bearer is judged by it alone (a cookie beside it is not read); an unknown, revoked, expired or malformed token answers 401 `unauthenticated`. Rate-limited per token (429 `rate_limited`, `RateLimit` headers).",
            '',
            ...TOKEN_SCOPES.map((s) => `- \`${s}\`: ${TOKEN_SCOPE_DESCRIPTIONS[s]}`),
          ].join('\n'),
        },
      },
    },
  };
  // Descriptions are CommonMark to every renderer: each reads as written (`<platform>` is not a tag).
  return { document: escapeDescriptions(document), nameConflicts: namer.conflicts };
}

/** The OpenAPI 3.1 document of every operation declared through ApiRouter. */
export function buildOpenApiDocument(info: { title: string; version: string; description?: string }, operations: OperationSpec[]): Record<string, unknown> {
  return buildOpenApi(info, operations).document;
}

/**
 * What a personal access token may do with an operation, as a line of its description: the
 * document's `security` says it too, but renderers (the docs page's Redoc) show no scopes of an
 * `http` scheme, so a reader of the page would not see them.
 */
function tokenNote(op: { auth?: boolean; tokenScope?: string }): string | undefined {
  if (op.tokenScope === 'any') return 'Personal access token: any token (`accessToken`).';
  if (op.tokenScope) return `Personal access token: needs the scope \`${op.tokenScope}\` (\`accessToken\`).`;
  if (op.auth) return 'Personal access token: not open to tokens (403 `insufficient_scope`).';
  return undefined;
}
