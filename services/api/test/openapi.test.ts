import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import request from 'supertest';
import { type Harness, startHarness } from './harness.js';
import { ARTIFACTS } from './live.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const REDOCLY = path.resolve(here, '../../../node_modules/.bin/redocly');

type Schema = Record<string, unknown> & { $ref?: string };
type Response = { headers?: Record<string, Schema>; content?: Record<string, { schema: Schema & { allOf?: Schema[] } }> };
type Operation = {
  operationId: string;
  description?: string;
  security: unknown[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, Response>;
};
type Doc = {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; headers: Record<string, Schema>; securitySchemes: Record<string, Schema> };
};

const codesOf = (r: Response | undefined): string[] => {
  const schema = r?.content?.['application/problem+json']?.schema;
  const extra = schema?.allOf?.[1] as { properties: { code: { enum: string[] } } } | undefined;
  return extra?.properties.code.enum ?? [];
};

describe('the served OpenAPI document', () => {
  let h: Harness;
  let doc: Doc;
  const ops: [string, Operation][] = [];
  before(async () => {
    h = await startHarness();
    const res = await request(h.app).get('/api/v1/openapi.json');
    expect(res.status).to.equal(200);
    doc = res.body;
    for (const [p, methods] of Object.entries(doc.paths)) for (const [m, op] of Object.entries(methods)) ops.push([`${m.toUpperCase()} ${p}`, op]);
    fs.mkdirSync(path.join(ARTIFACTS, 'openapi'), { recursive: true });
    fs.writeFileSync(path.join(ARTIFACTS, 'openapi', 'openapi.json'), JSON.stringify(doc, null, 2));
  });
  after(async () => h.close());

  it('passes Redocly lint (recommended rules) with no error and no warning', function () {
    this.timeout(60_000);
    const run = spawnSync(REDOCLY, ['lint', '../../test-artifacts/openapi/openapi.json', '--config', 'redocly.yaml', '--format=json'], {
      cwd: path.join(here, 'openapi-lint'),
      encoding: 'utf8',
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
    });
    const out = JSON.parse(run.stdout) as {
      totals: { errors: number; warnings: number; ignored: number };
      problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
    };
    const problems = out.problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);
    expect(problems).to.deep.equal([]);
    // As an integrator runs it: no ignore file, nothing ignored.
    expect(out.totals).to.deep.equal({ errors: 0, warnings: 0, ignored: 0 });
    expect(fs.readdirSync(path.join(here, 'openapi-lint')).filter((f) => f.includes('ignore'))).to.deep.equal([]);
    // The redirect-only operations (the browser steps of social sign-in) answer 302 on success and
    // document the pipeline's shared refusals as `default`, their own ones status by status.
    const redirectOnly = ops.filter(([, op]) => !Object.keys(op.responses).some((s) => s.startsWith('2')));
    expect(redirectOnly.map(([name]) => name).sort()).to.deep.equal([
      'GET /api/v1/auth/callback/google',
      'GET /api/v1/auth/challenge/{provider}',
      'GET /api/v1/auth/external-callback',
      'POST /api/v1/auth/callback/apple',
    ]);
    for (const [name, op] of redirectOnly) {
      expect(Object.keys(op.responses), name).to.include.members(['302', 'default']);
      expect(codesOf(op.responses.default), name).to.include.members(['internal_error', 'service_unavailable']);
    }
    expect(codesOf(doc.paths['/api/v1/auth/challenge/{provider}']!.get!.responses['404'])).to.deep.equal(['unknown_login_provider']);
    expect(run.status).to.equal(0);
  });

  it('documents every member a problem answer carries beyond the Problem schema: mfaToken on each 401 that may be mfa_required', () => {
    const problemMembers = Object.keys((doc.components.schemas.Problem as { properties: Record<string, unknown> }).properties);
    expect(problemMembers).to.have.members(['type', 'title', 'status', 'detail', 'instance', 'code', 'traceId', 'errors']);
    const mfa = ops.filter(([, op]) => codesOf(op.responses['401']).includes('mfa_required'));
    expect(mfa.map(([name]) => name).sort()).to.deep.equal(['POST /api/v1/auth/exchange', 'POST /api/v1/auth/idp/native', 'POST /api/v1/auth/login']);
    for (const [name, op] of mfa) {
      const extra = op.responses['401']!.content!['application/problem+json']!.schema.allOf![1] as { properties: Record<string, { type: string }> };
      expect(extra.properties.mfaToken, name).to.include({ type: 'string' });
    }
  });

  it('names every request and JSON response body: a $ref to a component schema', () => {
    const anonymous: string[] = [];
    for (const [name, op] of ops) {
      for (const media of Object.values(op.requestBody?.content ?? {})) if (!media.schema.$ref) anonymous.push(`${name} request`);
      for (const [status, r] of Object.entries(op.responses))
        for (const media of Object.values(r.content ?? {})) if (!media.schema.$ref && !media.schema.allOf) anonymous.push(`${name} ${status}`);
    }
    expect(anonymous).to.deep.equal([]);
    const names = Object.keys(doc.components.schemas);
    expect(names).to.include.members([
      'MeResponse',
      'UserResponse',
      'MembershipResponse',
      'HouseholdResponse',
      'MealRuleResponse',
      'MealEventResponse',
      'PagedMealEventResponse',
      'PushDeviceResponse',
      'Problem',
      'RegisterRequest',
    ]);
    // No two different schemas were given one name (the second would have a numeric suffix).
    expect(names.filter((n) => /\d$/.test(n) && names.includes(n.replace(/\d+$/, '')))).to.deep.equal([]);
    // One shape, one type: login and GET /me answer the same MeResponse.
    expect(doc.paths['/api/v1/auth/login']!.post!.responses['200']!.content!['application/json']!.schema.$ref).to.equal('#/components/schemas/MeResponse');
    expect(doc.paths['/api/v1/me']!.get!.responses['200']!.content!['application/json']!.schema.$ref).to.equal('#/components/schemas/MeResponse');
  });

  it('maps a discriminator value to its named branch (the kind selects the schema, not the component name)', () => {
    const request = doc.components.schemas.MealRuleRequestInput as {
      properties: { payload: { discriminator: { propertyName: string; mapping: Record<string, string> } } };
    };
    expect(request.properties.payload.discriminator.propertyName).to.equal('kind');
    expect(request.properties.payload.discriminator.mapping.CategoryFrequency).to.equal('#/components/schemas/CategoryFrequencyInput');
    const response = doc.components.schemas.MealRuleResponse as { properties: { payload: { discriminator: { mapping: Record<string, string> } } } };
    expect(response.properties.payload.discriminator.mapping.CategoryFrequency).to.equal('#/components/schemas/CategoryFrequency');
  });

  it('types total as an integer or null, and documents the codes the spec names as enums', () => {
    const paged = doc.components.schemas.PagedMealEventResponse as { properties: { total: { type: string[] } } };
    expect(paged.properties.total.type).to.deep.equal(['integer', 'null']);
    const parse = doc.paths['/api/v1/households/{householdId}/rules/parse']!.post!;
    expect(codesOf(parse.responses['429'])).to.include.members(['quota_exceeded', 'ai_paused']);
    expect(parse.responses['429']!.headers!['Retry-After']).to.deep.equal({ $ref: '#/components/headers/Retry-After' });
    const login = doc.paths['/api/v1/auth/login']!.post!;
    // 401 unauthenticated: a bearer token that is not valid, judged before the route; mfa_required: TOTP on.
    expect(codesOf(login.responses['401'])).to.have.members(['invalid_credentials', 'unauthenticated', 'mfa_required']);
    expect(codesOf(login.responses['423'])).to.deep.equal(['account_locked']);
    expect(login.responses['423']!.headers).to.have.property('Retry-After');
    expect(codesOf(doc.paths['/api/v1/auth/confirm-email']!.post!.responses['400'])).to.include('invalid_token');
    expect(codesOf(doc.paths['/api/v1/auth/resend-confirmation']!.post!.responses['429'])).to.include('resend_cooldown');
    // Every error answer is a problem with a code enum (or the bare Problem), never a free string alone.
    for (const [name, op] of ops)
      for (const [status, r] of Object.entries(op.responses)) if (Number(status) >= 400) expect(codesOf(r).length, `${name} ${status}`).to.be.greaterThan(0);
  });

  it('documents the headers and the statuses every operation may meet', () => {
    for (const h of ['X-Trace-Id', 'Server-Timing', 'X-Diagnostics', 'Set-Cookie', 'Retry-After', 'RateLimit', 'RateLimit-Policy'])
      expect(doc.components.headers, h).to.have.property(h);
    expect(doc.components.securitySchemes.sessionCookie).to.include({ type: 'apiKey', in: 'cookie', name: 'service_session' });
    const login = doc.paths['/api/v1/auth/login']!.post!;
    expect(Object.keys(login.responses['200']!.headers!)).to.include.members(['Set-Cookie', 'RateLimit', 'RateLimit-Policy', 'X-Trace-Id', 'Server-Timing']);
    expect(Object.keys(login.responses)).to.include.members(['400', '401', '403', '413', '423', '426', '429', '500', '503']);
    // Personal access tokens: a bearer scheme; each operation names the scope that opens it (GET /me: any token).
    expect(doc.components.securitySchemes.accessToken).to.include({ type: 'http', scheme: 'bearer' });
    const getMe = doc.paths['/api/v1/me']!.get!;
    expect(getMe.security).to.deep.equal([{ sessionCookie: [] }, { accessToken: [] }]);
    expect(Object.keys(getMe.responses)).to.include.members(['401', '403', '500', '503']);
    expect(Object.keys(getMe.responses)).to.not.include('413'); // no body, no 413
    expect(codesOf(getMe.responses['429'])).to.deep.equal(['rate_limited']); // a token's rate limit
    expect(doc.paths['/api/v1/households/{householdId}/events']!.post!.security).to.deep.equal([{ sessionCookie: [] }, { accessToken: ['events:write'] }]);
    expect(doc.paths['/api/v1/me/tokens']!.post!.security).to.deep.equal([{ sessionCookie: [] }]);
    // The scope in words too: the docs page's renderer shows no scopes of an http scheme.
    expect(doc.paths['/api/v1/households/{householdId}/events']!.post!.description).to.contain('Personal access token: needs the scope `events:write`');
    expect(doc.paths['/api/v1/me']!.get!.description).to.contain('Personal access token: any token');
    expect(doc.paths['/api/v1/me/tokens']!.post!.description).to.contain('Personal access token: not open to tokens (403 `insufficient_scope`)');
    expect(codesOf(doc.paths['/api/v1/me/tokens']!.post!.responses['403'])).to.include('insufficient_scope');
    expect(doc.paths['/api/v1/households/{householdId}']!.patch!.security).to.deep.equal([{ sessionCookie: [] }]);
    for (const [name, op] of ops) {
      // 500 one by one, or (a redirect-only operation) among the statuses of its `default` answer
      const shared = op.responses.default?.content?.['application/problem+json']?.schema.allOf?.[1] as
        | { properties: { status: { enum: number[] } } }
        | undefined;
      if (shared) expect(shared.properties.status.enum, name).to.include(500);
      else expect(Object.keys(op.responses), name).to.include('500');
      for (const r of Object.values(op.responses)) expect(Object.keys(r.headers ?? {}), name).to.include.members(['X-Trace-Id', 'Server-Timing']);
    }
  });

  it('answers what it documents: a 423 and a 413 in the documented shape', async () => {
    await request(h.app).post('/api/v1/auth/register').send({ email: 'ada@example.test', password: 'correct horse battery', displayName: 'Ada' }).expect(200);
    for (let i = 0; i < 5; i++) await request(h.app).post('/api/v1/auth/login').send({ email: 'ada@example.test', password: 'wrong' }).expect(401);
    const locked = await request(h.app).post('/api/v1/auth/login').send({ email: 'ada@example.test', password: 'correct horse battery' });
    expect(locked.status).to.equal(423);
    expect(Number(locked.headers['retry-after'])).to.be.within(1, 300);
    expect(locked.headers.ratelimit).to.match(/r=\d+/);
    const big = await request(h.app)
      .post('/api/v1/auth/login')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ email: 'a@b.c', password: 'x'.repeat(70_000) }));
    expect(big.status).to.equal(413);
    expect(big.body.code).to.equal('payload_too_large');
  });
});
