/**
 * Does an enumeration-sensitive operation take measurably longer for an address that has an
 * account than for one that has none? Not a test (speed is never asserted by a test): a check to
 * run by hand or in a nightly job, on an otherwise idle machine.
 *
 * For each operation it sends pairs of requests, one per branch, in random order within each pair
 * (interleaved, so drift of the machine hits both branches alike), over one keep-alive connection
 * to a real server on a real PostgreSQL database, and times each answer at the client. Then:
 * - Welch's t-test on the means (normal approximation: the samples are large),
 * - Mann-Whitney U on the ranks (normal approximation with tie correction), robust to the long
 *   tail of latencies,
 * - a permutation test on the difference of means (simple-statistics, 2000 shuffles).
 * A p-value under --alpha (default 0.01) on the rank test or the permutation test flags the
 * operation. It also prints the SQL statements and Server-Timing steps of each branch (X-Diagnostics),
 * which must be equal.
 *
 *   cd packages/accounts
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run timing-check -- --n 400 --ops forgot,change-email
 *
 * Options: --n pairs per operation (default 300) · --ops forgot,register,change-email,login
 * (default all) · --bcrypt-cost (default 12, as in production; register and login hash on both
 * branches) · --alpha (default 0.01) · --warmup pairs discarded first (default 30).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { ManualClock } from '@svc/http-kit';
import * as jobs from '@svc/jobs';
import { buildTestApp, createTestDatabase } from '@svc/test-support';
import bcrypt from 'bcryptjs';
import { pino } from 'pino';
import { errorFunction, mean, median, permutationTest, sampleVariance } from 'simple-statistics';
import { AccountService, createRouter, jobSources, migrations, ObjectionAccountStore, queues } from '../src/index.js';
import { prehash } from '../src/PasswordHasher.js';

const { values: args } = parseArgs({
  options: {
    n: { type: 'string', default: '300' },
    ops: { type: 'string', default: 'forgot,register,change-email,login' },
    'bcrypt-cost': { type: 'string', default: '12' },
    alpha: { type: 'string', default: '0.01' },
    warmup: { type: 'string', default: '30' },
  },
});
const N = Number(args.n);
const WARMUP = Number(args.warmup);
const ALPHA = Number(args.alpha);
const OPS = String(args.ops).split(',');
const PASSWORD = 'correct horse battery staple';

interface Sample {
  ms: number;
  status: number;
  work: string;
}

/** Two-sided p of a standard normal statistic (erf to ~1e-7; simple-statistics' table would stop at 0.002). */
function twoSided(z: number): number {
  return 1 - errorFunction(Math.abs(z) / Math.SQRT2);
}

/** Two-sided p of Welch's t (normal approximation, fine for samples in the hundreds). */
function welch(x: number[], y: number[]): { t: number; p: number } {
  const se = Math.sqrt(sampleVariance(x) / x.length + sampleVariance(y) / y.length);
  const t = (mean(x) - mean(y)) / se;
  return { t, p: twoSided(t) };
}

/** Two-sided p of the Mann-Whitney U test (normal approximation with the tie correction). */
function mannWhitney(x: number[], y: number[]): { z: number; p: number } {
  const all = [...x.map((v) => ({ v, g: 0 })), ...y.map((v) => ({ v, g: 1 }))].sort((a, b) => a.v - b.v);
  const ranks = new Array<number>(all.length);
  let tieTerm = 0;
  for (let i = 0; i < all.length; ) {
    let j = i;
    while (j + 1 < all.length && all[j + 1]!.v === all[i]!.v) j++;
    const t = j - i + 1;
    tieTerm += t ** 3 - t;
    for (let k = i; k <= j; k++) ranks[k] = (i + j) / 2 + 1;
    i = j + 1;
  }
  const n1 = x.length;
  const n2 = y.length;
  const r1 = all.reduce((sum, s, i) => (s.g === 0 ? sum + ranks[i]! : sum), 0);
  const u = r1 - (n1 * (n1 + 1)) / 2;
  const n = n1 + n2;
  const sigma = Math.sqrt(((n1 * n2) / 12) * (n + 1 - tieTerm / (n * (n - 1))));
  const z = (u - (n1 * n2) / 2) / sigma;
  return { z, p: twoSided(z) };
}

async function main(): Promise<void> {
  // As the host migrates: the mail outbox's rows enqueue their delivery in the inserting statement.
  const db = await createTestDatabase([jobs.migrations, migrations, queues, jobs.sourceMigrations(jobSources)]);
  const clock = new ManualClock();
  // Composed as services/api composes it (no households: no memberships to list).
  const service = new AccountService({
    store: new ObjectionAccountStore(db.knex),
    knex: db.knex,
    jobs: new jobs.JobQueue({ knex: db.knex, clock, logger: pino({ level: 'silent' }) }),
    clock,
    // The operations measured here never delete or export an account.
    deletionSteps: [],
    personalData: {
      household: () => Promise.reject(new Error('not used by the timing check')),
      rules: () => Promise.reject(new Error('not used by the timing check')),
      events: () => ({ [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new Error('not used by the timing check')) }) }),
      devices: () => Promise.reject(new Error('not used by the timing check')),
    },
    logger: pino({ level: 'silent' }),
    config: {
      publicBaseUrl: 'https://meals.example.test',
      sessionSecret: 'timing-check-secret-timing-check-secret-0123',
      cookieSecure: false,
      mailFrom: 'Meal Planner <no-reply@meals.example.test>',
      // The worker is not started: mail stays in the outbox, as it would until after the answer.
      dataDir: '/nonexistent',
      authRateLimit: 1e9,
      authRateWindowSeconds: 60,
      lockoutMaxFailures: 1e6,
      lockoutSeconds: 300,
      platformAdminEmails: [],
    },
    memberships: async () => [],
    // Limits out of the way: the check measures the branch that writes mail against the one that does not.
    tuning: { bcryptCost: Number(args['bcrypt-cost']), unaskedMail: { perRecipient: 1e9, perIp: 1e9, windowMs: 3600_000 } },
  });
  const app = buildTestApp({ routers: [createRouter({ service })], authenticate: service.sessions.authenticate, publicBaseUrl: 'https://meals.example.test' });
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

  const send = (path: string, body: unknown, cookie?: string): Promise<Sample & { setCookie?: string[] }> =>
    new Promise((resolve, reject) => {
      const payload = JSON.stringify(body);
      const started = performance.now();
      const req = http.request(
        `${base}${path}`,
        {
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), 'x-diagnostics': '1', ...(cookie ? { cookie } : {}) },
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            const ms = performance.now() - started;
            const d = JSON.parse(String(res.headers['x-diagnostics'] ?? '{"db":{},"steps":[]}'));
            const work = `${d.db.queries} statements; steps ${d.steps.map((s: { name: string }) => s.name).join(',') || '-'}`;
            resolve({ ms, status: res.statusCode ?? 0, work, setCookie: res.headers['set-cookie'] });
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });

  const total = N + WARMUP;
  // A real hash at the configured cost: a wrong password against it costs what it costs in production.
  const passwordHash = bcrypt.hashSync(prehash('some password of theirs'), Number(args['bcrypt-cost']));
  // Accounts made up front, one per pair, so every "known" request takes the branch that writes mail.
  const seed = async (prefix: string) => {
    const rows = Array.from({ length: total }, (_, i) => ({
      email: `${prefix}${i}@example.test`,
      emailNormalized: `${prefix}${i}@example.test`,
      displayName: 'Known',
      passwordHash,
      emailConfirmed: true,
      securityStamp: 'x',
      createdAt: clock.now(),
      updatedAt: clock.now(),
    }));
    for (let i = 0; i < rows.length; i += 500) await db.knex('accounts').insert(rows.slice(i, i + 500));
  };

  const operations: Record<string, { setup(): Promise<void>; known(i: number): Promise<Sample>; unknown(i: number): Promise<Sample> }> = {};
  let cookie = '';
  operations.forgot = {
    setup: () => seed('forgot'),
    known: (i) => send('/api/v1/auth/forgot-password', { email: `forgot${i}@example.test` }),
    unknown: (i) => send('/api/v1/auth/forgot-password', { email: `nobody-forgot${i}@example.test` }),
  };
  operations.register = {
    setup: () => seed('taken'),
    known: (i) => send('/api/v1/auth/register', { email: `taken${i}@example.test`, password: PASSWORD, displayName: 'X' }),
    unknown: (i) => send('/api/v1/auth/register', { email: `fresh${i}@example.test`, password: PASSWORD, displayName: 'X' }),
  };
  operations['change-email'] = {
    async setup() {
      await seed('other');
      const me = await send('/api/v1/auth/register', { email: 'changer@example.test', password: PASSWORD, displayName: 'Changer' });
      cookie = (me.setCookie ?? []).map((c) => c.split(';')[0]).join('; ');
    },
    known: (i) => send('/api/v1/me/email', { newEmail: `other${i}@example.test` }, cookie),
    unknown: (i) => send('/api/v1/me/email', { newEmail: `free${i}@example.test` }, cookie),
  };
  operations.login = {
    setup: () => seed('login'),
    known: (i) => send('/api/v1/auth/login', { email: `login${i}@example.test`, password: 'wrong password' }),
    unknown: (i) => send('/api/v1/auth/login', { email: `nobody-login${i}@example.test`, password: 'wrong password' }),
  };

  let flagged = false;
  for (const name of OPS) {
    const op = operations[name];
    if (!op) throw new Error(`unknown operation ${name}; known: ${Object.keys(operations).join(', ')}`);
    await op.setup();
    const known: Sample[] = [];
    const unknown: Sample[] = [];
    for (let i = 0; i < total; i++) {
      const knownFirst = Math.random() < 0.5;
      const first = await (knownFirst ? op.known(i) : op.unknown(i));
      const second = await (knownFirst ? op.unknown(i) : op.known(i));
      if (i < WARMUP) continue;
      known.push(knownFirst ? first : second);
      unknown.push(knownFirst ? second : first);
    }
    const x = known.map((s) => s.ms);
    const y = unknown.map((s) => s.ms);
    const t = welch(x, y);
    const u = mannWhitney(x, y);
    const perm = permutationTest(x, y, 'two_side', 2000);
    const works = [...new Set(known.map((s) => s.work))].join(' | ');
    const worksUnknown = [...new Set(unknown.map((s) => s.work))].join(' | ');
    const verdict = u.p < ALPHA || perm < ALPHA ? 'DIFFERENT' : 'no detectable difference';
    if (verdict === 'DIFFERENT' || works !== worksUnknown) flagged = true;
    console.log(
      [
        `${name}: ${N} interleaved pairs (status ${known[0]?.status} / ${unknown[0]?.status})`,
        `  with an account:    median ${median(x).toFixed(3)} ms, mean ${mean(x).toFixed(3)} ms; ${works}`,
        `  without an account: median ${median(y).toFixed(3)} ms, mean ${mean(y).toFixed(3)} ms; ${worksUnknown}`,
        `  Welch t = ${t.t.toFixed(2)} (p ${t.p.toPrecision(2)}), Mann-Whitney z = ${u.z.toFixed(2)} (p ${u.p.toPrecision(2)}), permutation p ${perm.toFixed(3)}`,
        `  at alpha ${ALPHA}: ${verdict}${works !== worksUnknown ? '; the database work differs' : ''}`,
      ].join('\n'),
    );
  }

  agent.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await service.close();
  await db.destroy();
  process.exitCode = flagged ? 1 : 0;
}

await main();
