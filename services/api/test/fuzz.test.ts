/**
 * A schema-driven fuzzer over every operation of the served OpenAPI document: inputs are drawn
 * from each operation's own schemas (mostly near-valid, so they reach the domain code, plus
 * wrong types, limits ±1, NULs, odd Unicode and stray members), sent over HTTP as a signed-in
 * member of a real household. Every answer must be below 500, every 4xx a problem+json with its
 * status and a code, and the service must still answer afterwards.
 *
 * Bodies are also sent compressed (seeded apart, so the inputs drawn stay those of the seed):
 * valid gzip, deflate and br, the same encodings with data that is not valid in them, and
 * encodings the service does not decode; the answer must still be below 500. A second case sends
 * every body-taking operation and every page's form post corrupt compressed data, signed in and
 * not, and wants exactly 400 (415 for an unknown encoding; 401 first where a session is needed).
 *
 * Seeded and bounded: FUZZ_SEED (default 20261125) and FUZZ_RUNS per operation (default 6 in
 * `npm test`; `FUZZ_RUNS=200 npx mocha test/fuzz.test.ts` for a long run). A failure prints the
 * seed, the operation and the request, so it can be replayed.
 */

import type { Server } from 'node:http';
import zlib from 'node:zlib';
import { PAGE_PATHS } from '@svc/accounts';
import { createHttpServer } from '@svc/http-kit';
import { expect } from 'chai';
import fc from 'fast-check';
import request from 'supertest';
import { type Harness, startHarness } from './harness.js';

type Schema = Record<string, unknown>;
interface Operation {
  method: string;
  path: string;
  parameters?: { name: string; in: string; required?: boolean; schema?: Schema }[];
  requestBody?: { content: Record<string, { schema?: Schema }> };
}

const SEED = Number(process.env.FUZZ_SEED ?? 20261125);
const RUNS = Number(process.env.FUZZ_RUNS ?? 6);

/** How a body goes on the wire: as it is, or with a Content-Encoding (valid, corrupt, or one the service does not decode). */
type Wire = { encoding?: string; bytes: (json: Buffer) => Buffer };
const WIRES: Wire[] = [
  { bytes: (b) => b },
  { encoding: 'gzip', bytes: (b) => zlib.gzipSync(b) },
  { encoding: 'deflate', bytes: (b) => zlib.deflateSync(b) },
  { encoding: 'br', bytes: (b) => zlib.brotliCompressSync(b) },
  { encoding: 'gzip', bytes: (b) => b },
  { encoding: 'deflate', bytes: (b) => zlib.gzipSync(b) },
  { encoding: 'br', bytes: (b) => zlib.gzipSync(b) },
  { encoding: 'gzip', bytes: (b) => zlib.gzipSync(b).subarray(0, -5) },
  { encoding: 'compress', bytes: (b) => b },
  { encoding: 'gzip, br', bytes: (b) => zlib.brotliCompressSync(zlib.gzipSync(b)) },
];
/** Sends the bytes as they are (superagent would write a Buffer under a JSON type as JSON). */
const raw = (b: unknown) => b as string;

/** Operations that end the caller's session or account: fuzzed last, by a caller of their own. */
const ENDS_SESSION =
  /^(POST \/api\/v1\/auth\/logout|POST \/api\/v1\/me\/password|POST \/api\/v1\/me\/email|DELETE \/api\/v1\/me(\/sessions|\/logins.*)?|DELETE \/api\/v1\/households\/\{householdId\})$/;

const odd = fc.constantFrom(
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '💥',
  '\u202e',
  'null',
  '0',
  '-1',
  '1e309',
  '../..',
  '%00',
  '<script>',
  'x'.repeat(5000),
  '2026-02-30',
  '0000-01-01',
  '24:00',
);

function resolve(doc: Schema, schema: Schema | undefined): Schema {
  let s = schema ?? {};
  for (let i = 0; i < 10 && typeof s.$ref === 'string'; i++) {
    s = s.$ref
      .slice(2)
      .split('/')
      .reduce<Schema>((o, k) => (o?.[k] as Schema) ?? {}, doc);
  }
  return s;
}

function stringFor(schema: Schema): fc.Arbitrary<string> {
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : 200;
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const byFormat: Record<string, fc.Arbitrary<string>> = {
    uuid: fc.uuid(),
    date: fc.date({ min: new Date('1890-01-01'), max: new Date('2200-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
    time: fc
      .tuple(fc.integer({ min: 0, max: 25 }), fc.integer({ min: 0, max: 61 }))
      .map(([h, m]) => `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`),
    'date-time': fc.date({ min: new Date('1890-01-01'), max: new Date('2200-01-01'), noInvalidDate: true }).map((d) => d.toISOString()),
    email: fc.emailAddress(),
    uri: fc.webUrl(),
  };
  const near = [
    ...(typeof schema.format === 'string' && byFormat[schema.format] ? [byFormat[schema.format]!] : []),
    fc.string({ minLength: min, maxLength: Math.min(max, 40) }),
    fc.string({ minLength: max, maxLength: max + 2, unit: 'grapheme' }),
  ];
  return fc.oneof({ arbitrary: fc.oneof(...near), weight: 6 }, { arbitrary: odd, weight: 2 }, { arbitrary: fc.string({ unit: 'binary' }), weight: 1 });
}

/** An arbitrary for values of `schema`: mostly valid-looking, sometimes anything at all. */
function arbitraryFor(doc: Schema, raw: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  const schema = resolve(doc, raw);
  const anything = fc.anything({ maxDepth: 2, maxKeys: 3 });
  if (depth > 4) return anything;
  const alternatives = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  let valid: fc.Arbitrary<unknown>;
  if (Array.isArray(schema.enum)) valid = fc.constantFrom(...(schema.enum as unknown[]));
  else if ('const' in schema) valid = fc.constant(schema.const);
  else if (alternatives?.length) valid = fc.oneof(...alternatives.map((s) => arbitraryFor(doc, s, depth + 1)));
  else {
    const types = (Array.isArray(schema.type) ? schema.type : [schema.type ?? (schema.properties ? 'object' : 'string')]) as string[];
    valid = fc.oneof(
      ...types.map((type): fc.Arbitrary<unknown> => {
        switch (type) {
          case 'string':
            return stringFor(schema);
          case 'integer':
          case 'number': {
            const lo = typeof schema.minimum === 'number' ? schema.minimum : -1000;
            const hi = typeof schema.maximum === 'number' ? schema.maximum : 1_000_000;
            return fc.oneof(fc.integer({ min: Math.trunc(lo) - 2, max: Math.trunc(hi) + 2 }), fc.constantFrom(1.5, -0, Number.MAX_SAFE_INTEGER, 1e300));
          }
          case 'boolean':
            return fc.boolean();
          case 'null':
            return fc.constant(null);
          case 'array':
            return fc.array(arbitraryFor(doc, schema.items as Schema, depth + 1), {
              maxLength: Math.min(typeof schema.maxItems === 'number' ? schema.maxItems + 1 : 5, 12),
            });
          default: {
            const props = (schema.properties ?? {}) as Record<string, Schema>;
            const required = new Set((schema.required ?? []) as string[]);
            const entries = Object.fromEntries(Object.entries(props).map(([k, s]) => [k, arbitraryFor(doc, s, depth + 1)]));
            const keep = [...required].filter((k) => k in props);
            return fc
              .tuple(fc.record(entries, { requiredKeys: keep }), fc.subarray(keep), fc.dictionary(fc.string({ maxLength: 8 }), anything, { maxKeys: 2 }))
              .map(([record, drop, extra]) => {
                const out: Record<string, unknown> = { ...extra, ...record };
                // Now and then a required member is missing.
                if (drop.length === 1) delete out[drop[0]!];
                return out;
              });
          }
        }
      }),
    );
  }
  return fc.oneof({ arbitrary: valid, weight: 8 }, { arbitrary: anything, weight: 1 });
}

describe('schema-driven fuzzing of every operation (seeded)', function () {
  this.timeout(300_000);
  let h: Harness;
  let doc: Schema;
  let agent: request.Agent;
  let householdId: string;
  let server: Server;
  let callersAfterFuzz = 1000;

  async function newCaller(n: number): Promise<void> {
    agent = request.agent(server);
    const signed = await agent.post('/api/v1/auth/register').send({ email: `fuzz${n}@example.com`, password: 'correct horse battery', displayName: 'Fuzz' });
    expect(signed.status).to.equal(200);
    const res = await agent.post('/api/v1/households').send({ name: 'Fuzz home', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    householdId = res.body.id;
  }

  before(async () => {
    h = await startHarness({ AUTH_RATE_LIMIT: '1000000' });
    // The production server: it also answers what Node refuses before Express (a 16 kB URL).
    server = createHttpServer(h.app);
    doc = (await request(server).get('/api/v1/openapi.json')).body;
    await newCaller(0);
  });
  after(async () => {
    server?.close();
    await h?.close();
  });

  it(`answers every operation below 500, with problem+json for each 4xx, ${RUNS} runs each (seed ${SEED})`, async () => {
    const operations: Operation[] = [];
    for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, Operation>>)) {
      for (const [method, op] of Object.entries(methods)) operations.push({ ...op, method: method.toUpperCase(), path });
    }
    operations.sort((a, b) => Number(ENDS_SESSION.test(`${a.method} ${a.path}`)) - Number(ENDS_SESSION.test(`${b.method} ${b.path}`)));
    expect(operations.length).to.be.greaterThan(30);
    let callers = 1;
    for (const op of operations) {
      const params = op.parameters ?? [];
      const pathParams = params.filter((p) => p.in === 'path');
      const queryParams = params.filter((p) => p.in === 'query');
      const bodySchema = op.requestBody && Object.values(op.requestBody.content)[0]?.schema;
      const input = fc.record({
        path: fc.record(
          Object.fromEntries(
            pathParams.map((p) => [
              p.name,
              p.name === 'householdId'
                ? fc.oneof({ arbitrary: fc.constant('__household__'), weight: 4 }, { arbitrary: fc.uuid(), weight: 1 }, { arbitrary: odd, weight: 1 })
                : fc.oneof(fc.uuid(), stringFor(resolve(doc, p.schema))),
            ]),
          ),
        ),
        query: fc.record(Object.fromEntries(queryParams.map((p) => [p.name, arbitraryFor(doc, p.schema)])), { requiredKeys: [] }),
        body: bodySchema ? arbitraryFor(doc, bodySchema) : fc.constant(undefined),
      });
      const samples = fc.sample(input, { numRuns: RUNS, seed: SEED + operations.indexOf(op) });
      // Drawn apart from the inputs: identity half the time, any of the others the other half.
      const wires = fc.sample(fc.oneof({ arbitrary: fc.constant(WIRES[0]!), weight: WIRES.length - 1 }, fc.constantFrom(...WIRES.slice(1))), {
        numRuns: RUNS,
        seed: SEED + 1_000_003 * (operations.indexOf(op) + 1),
      });
      for (const sample of samples) {
        const url = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
          const v = sample.path[name];
          return encodeURIComponent(v === '__household__' ? householdId : String(v));
        });
        const query = Object.fromEntries(Object.entries(sample.query).map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v) : String(v)]));
        const what = `${op.method} ${url.slice(0, 200)} ${JSON.stringify({ query, body: sample.body }).slice(0, 300)} (seed ${SEED}, wire #${WIRES.indexOf(wires[samples.indexOf(sample)]!)})`;
        let req = agent[op.method.toLowerCase() as 'get'](url).query(query);
        const wire = wires[samples.indexOf(sample)]!;
        if (sample.body !== undefined && op.method !== 'GET') {
          req = req.set('Content-Type', 'application/json');
          if (wire.encoding) req = req.set('Content-Encoding', wire.encoding);
          req = req.serialize(raw).send(wire.bytes(Buffer.from(JSON.stringify(sample.body))));
        }
        const res = await req;
        expect(res.status, what).to.be.below(500);
        if (res.status >= 400) {
          expect(res.headers['content-type'], `${res.status} ${what}`).to.match(/^application\/problem\+json/);
          expect(res.body.status, what).to.equal(res.status);
          expect(res.body.code, what).to.be.a('string').and.not.equal('');
        }
      }
      // A session-ending operation may have signed this caller out: carry on with a new one.
      if ((await agent.get('/api/v1/me')).status === 401) await newCaller(callers++);
    }
    expect((await request(server).get('/healthz')).status).to.equal(200);
    expect((await agent.get('/api/v1/me')).status).to.equal(200);
  });

  it('answers corrupt compressed bodies with 400 and unknown encodings with 415 on every body-taking operation and page form, signed in or not; never 5xx', async () => {
    const corrupt: Record<string, Buffer> = {
      gzip: Buffer.from('not gzip'),
      deflate: zlib.gzipSync(Buffer.from('{}')),
      br: Buffer.from([0xff, 0xff, 0xff, 0xff]),
    };
    const anonymous = request.agent(server);
    await newCaller(callersAfterFuzz++);
    // The internal route (the platform's services, bearer of INTERNAL_API_TOKENS) judges its bearer
    // before the body, and without INTERNAL_API_TOKENS (this server) it does not exist: 404 first.
    const targets: { method: string; url: string; type: string; auth: boolean; internal?: boolean }[] = [];
    for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, Operation & { security?: unknown[] }>>)) {
      for (const [method, op] of Object.entries(methods)) {
        if (!op.requestBody) continue;
        if (ENDS_SESSION.test(`${method.toUpperCase()} ${path}`)) continue;
        const type = Object.keys(op.requestBody.content)[0]!;
        targets.push({
          method,
          url: path.replace('{householdId}', householdId).replace(/\{\w+\}/g, '00000000-0000-4000-8000-000000000000'),
          type,
          auth: (op.security ?? []).length > 0,
          internal: path.startsWith('/internal/'),
        });
      }
    }
    // Every page with a form that posts to itself (`/login` is GET only: 405 before any body is read).
    for (const page of PAGE_PATHS) if (page !== '/login') targets.push({ method: 'post', url: page, type: 'application/x-www-form-urlencoded', auth: false });
    expect(targets.length).to.be.greaterThan(20);
    expect(targets.some((t) => t.url === '/api/v1/auth/login')).to.equal(true);
    expect(targets.filter((t) => t.internal).length, 'the internal route is among the targets').to.equal(1);
    for (const t of targets) {
      for (const [who, caller] of [
        ['signed in', agent],
        ['anonymous', anonymous],
      ] as const) {
        for (const [encoding, body] of [...Object.entries(corrupt), ['compress', Buffer.from('{}')] as const]) {
          const res = await caller[t.method as 'post'](t.url).set('Content-Type', t.type).set('Content-Encoding', encoding).serialize(raw).send(body);
          const what = `${t.method.toUpperCase()} ${t.url} ${who} ${encoding}: ${JSON.stringify(res.body)}`;
          const expected = t.internal ? 404 : who === 'anonymous' && t.auth ? 401 : encoding === 'compress' ? 415 : 400;
          expect(res.status, what).to.equal(expected);
          expect(res.headers['content-type'], what).to.match(/^application\/problem\+json/);
          const code = { 404: 'not_found', 401: 'unauthenticated', 415: 'unsupported_media_type', 400: 'validation_failed' }[expected];
          expect(res.body.code, what).to.equal(code);
        }
      }
    }
    expect((await agent.get('/api/v1/me')).status).to.equal(200);
  });
});
