import { SESSION_COOKIE } from '@svc/contracts';
import type { OperationSpec } from './api-router.js';
import type { JsonSchema } from './validation.js';

const PROBLEM_SCHEMA: JsonSchema = {
  type: 'object',
  description: 'RFC 9457 problem details. Branch on `code`.',
  properties: {
    type: { type: ['string', 'null'] },
    title: { type: ['string', 'null'] },
    status: { type: ['integer', 'null'], format: 'int32' },
    detail: { type: ['string', 'null'], description: 'English, written for a log' },
    instance: { type: ['string', 'null'] },
    code: { type: ['string', 'null'], description: 'The value to branch on' },
    traceId: { type: 'string', description: 'Same as the X-Trace-Id response header' },
    errors: {
      type: 'array',
      description: 'On validation failures: the failing fields',
      items: {
        type: 'object',
        properties: { field: { type: 'string' }, message: { type: 'string' }, in: { type: 'string', enum: ['body', 'query', 'path'] } },
      },
    },
  },
};

const COMMON_HEADERS = {
  'X-Trace-Id': { description: 'W3C trace id of the request (32 lower-case hex)', schema: { type: 'string' } },
  'Server-Timing': { description: 'total, db (duration and query count) and every named step', schema: { type: 'string' } },
  'X-Diagnostics': { description: 'Only when asked for (X-Diagnostics: 1 or ?diagnostics=1): the same breakdown as JSON', schema: { type: 'string' } },
};

const STATUS_TEXT: Record<number, string> = {
  400: 'The request is not in the documented shape',
  401: 'No valid session, or credentials refused',
  403: 'Not allowed',
  404: 'Not found',
  409: 'Conflict',
  413: 'Body too large',
  423: 'Locked',
  426: 'App build below its platform floor (type app-version-unsupported)',
  429: 'Rate limited or throttled; see Retry-After',
};

function parameters(schema: JsonSchema | undefined, where: 'path' | 'query'): unknown[] {
  if (!schema) return [];
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(props).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    schema: s,
    ...(s.description ? { description: s.description } : {}),
  }));
}

function problem(status: number, codes: string[] | undefined) {
  const codeText = codes?.length ? ` Codes: ${codes.map((c) => `\`${c}\``).join(', ')}.` : '';
  return {
    description: `${STATUS_TEXT[status] ?? 'Error'}.${codeText}`,
    headers: COMMON_HEADERS,
    content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
  };
}

/** The OpenAPI 3.1 document of every operation declared through ApiRouter. */
export function buildOpenApiDocument(info: { title: string; version: string; description?: string }, operations: OperationSpec[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) {
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries(op.responses)) {
      const code = Number(status);
      if (code >= 400) {
        responses[status] = problem(code, op.errorCodes?.[code]);
        continue;
      }
      responses[status] = {
        description: r.description,
        headers: { ...COMMON_HEADERS, ...r.headers },
        ...(r.schema ? { content: { [r.contentType ?? 'application/json']: { schema: r.schema } } } : {}),
      };
    }
    for (const [status, codes] of Object.entries(op.errorCodes ?? {})) responses[status] ??= problem(Number(status), codes);
    if (op.body || op.query || op.params) responses['400'] ??= problem(400, ['validation_failed', 'value_too_long']);
    if (op.auth) responses['401'] ??= problem(401, ['unauthenticated']);
    responses['426'] ??= problem(426, ['app_version_unsupported']);
    responses['429'] ??= problem(429, ['rate_limited']);
    paths[op.path] ??= {};
    paths[op.path]![op.method] = {
      operationId: op.operationId,
      summary: op.summary,
      ...(op.description ? { description: op.description } : {}),
      ...(op.tags ? { tags: op.tags } : {}),
      ...(op.auth ? { security: [{ sessionCookie: [] }] } : { security: [] }),
      parameters: [
        ...parameters(op.params, 'path'),
        ...parameters(op.query, 'query'),
        {
          name: 'X-App-Version',
          in: 'header',
          required: false,
          schema: { type: 'string', examples: ['ios/2.4.1'] },
          description: '<platform>/<version>; below the platform floor answers 426',
        },
      ],
      ...(op.body ? { requestBody: { required: true, content: { [op.bodyContentType ?? 'application/json']: { schema: op.body } } } } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info,
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: { Problem: PROBLEM_SCHEMA },
      securitySchemes: { sessionCookie: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE } },
    },
  };
}
