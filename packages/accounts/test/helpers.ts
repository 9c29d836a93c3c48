import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Membership } from '@svc/contracts';
import { type ReadDeclaration, ReadKernel } from '@svc/db';
import { ApiRouter, type Logger, ManualClock, pathMatcher, principalOf, RequestReads } from '@svc/http-kit';
import * as jobs from '@svc/jobs';
import { buildTestApp, createTestDatabase, linksIn, type ReceivedMail, SmtpReceiver, type TestDatabase } from '@svc/test-support';
import type { Express } from 'express';
import { pino } from 'pino';
import request from 'supertest';
import {
  type AccountDirectoryWithWaitlist,
  AccountService,
  type AccountServiceOptions,
  type AccountsConfig,
  type AccountsRouter,
  accountDirectory,
  createRouter,
  jobSources,
  migrations,
  ObjectionAccountStore,
  queues,
  type RouterOptions,
} from '../src/index.js';
import { TestPersonData } from './person-data.js';

/** This package's migrations as the host runs them: the job queue's tables, the package's, its mail queue, then the outbox's enqueue-on-insert. */
export const accountsMigrations = [jobs.migrations, migrations, queues, jobs.sourceMigrations(jobSources)];

export const PUBLIC_BASE_URL = 'https://meals.example.test';
export const PASSWORD = 'correct horse battery staple';

/** A logger that keeps its lines, so tests can assert what was (and was not) logged. */
export function memoryLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'debug', base: undefined }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  return { logger, lines };
}

/** One accounts instance as the host composes it: store, directory, service, router. */
export interface TestAccounts {
  store: ObjectionAccountStore;
  directory: AccountDirectoryWithWaitlist;
  service: AccountService;
  router: AccountsRouter;
  /** This instance's job queue (mail is delivered on it; not started: `service.deliverDueMail()` runs it). */
  jobs: jobs.JobQueue;
}

/** What a test may change of an instance: the service's options, and the router's Redis. */
export type InstanceOptions = Partial<AccountServiceOptions> & Pick<RouterOptions, 'redis'>;

export interface World {
  db: TestDatabase;
  smtp: SmtpReceiver;
  clock: ManualClock;
  accounts: TestAccounts;
  app: Express;
  config: AccountsConfig;
  logLines: Record<string, unknown>[];
  /** Memberships GET /me lists, by user id (the provider makes one query, as the real one does). */
  memberships: Map<string, Membership[]>;
  /** The other packages as account deletion and the export see them (see `TestPersonData`). */
  personal: TestPersonData;
  /** Delivers due mail and answers the mails received since the last clear. */
  deliver(): Promise<ReceivedMail[]>;
  /** A new app (and accounts instance) on the same database, e.g. a second service instance. */
  another(overrides?: Partial<AccountsConfig>, options?: InstanceOptions): { accounts: TestAccounts; app: Express };
  reset(): Promise<void>;
  close(): Promise<void>;
}

export async function createWorld(options: { config?: Partial<AccountsConfig>; options?: InstanceOptions } = {}): Promise<World> {
  const db = await createTestDatabase(accountsMigrations);
  const smtp = new SmtpReceiver();
  await smtp.start();
  const clock = new ManualClock();
  const { logger, lines } = memoryLogger();
  const memberships = new Map<string, Membership[]>();
  const personal = new TestPersonData(db.knex);
  await personal.migrate();
  const config: AccountsConfig = {
    publicBaseUrl: PUBLIC_BASE_URL,
    sessionSecret: 'test-secret-test-secret-test-secret-0123456789',
    cookieSecure: false,
    mailFrom: 'Meal Planner <no-reply@meals.example.test>',
    smtpUrl: smtp.url,
    dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'accounts-test-')),
    authRateLimit: 10_000,
    authRateWindowSeconds: 60,
    lockoutMaxFailures: 5,
    lockoutSeconds: 300,
    passwordBreachApi: undefined,
    platformAdminEmails: ['admin@example.test'],
    ...options.config,
  };
  const instances: AccountService[] = [];
  const queues: jobs.JobQueue[] = [];
  // Composed as services/api composes it: the store first, its directory, then the service (with
  // the other packages' capabilities, here stand-ins) and its router.
  const build = (overrides: Partial<AccountsConfig> = {}, more: InstanceOptions = {}) => {
    const { redis, ...serviceOptions } = { ...options.options, ...more };
    const store = new ObjectionAccountStore(db.knex);
    // One delivery at a time, oldest first, as the tests read the receiver's mails in order.
    const jobQueue = new jobs.JobQueue({ knex: db.knex, clock, logger, random: () => 0.5, concurrency: 1 });
    queues.push(jobQueue);
    // The host's read kernel (as services/api makes it, without the other packages' reads): this
    // package's declared reads (GET /me/sessions, /me/logins) load with the session, in one statement.
    const kernel = serviceOptions.requestReads ? undefined : new ReadKernel({ matcher: pathMatcher });
    const service = new AccountService({
      store,
      requestReads: kernel && new RequestReads({ knex: db.knex, clock, kernel }),
      knex: db.knex,
      jobs: jobQueue,
      clock,
      logger,
      config: { ...config, ...overrides },
      memberships: async (userId) => {
        await db.knex.raw('select 1 where false');
        return memberships.get(userId) ?? [];
      },
      tuning: { bcryptCost: 4, hashWorkers: 1 },
      deletionSteps: [personal.deletionStep],
      personalData: personal.sources,
      ...serviceOptions,
      // The same Redis for the service's own limits (per token) as for the router's (per IP).
      redis,
    });
    instances.push(service);
    const accounts: TestAccounts = { store, directory: accountDirectory(store, clock), service, router: createRouter({ service, redis }), jobs: jobQueue };
    for (const { method, path: route, read } of accounts.router.operations) if (kernel && read && method === 'get') kernel.add(read as ReadDeclaration, route);
    // A stand-in for social sign-in, through the seam it will use.
    const seam = new ApiRouter();
    seam.route<{ accountId: string; method?: 'password' | 'google' | 'apple' }>(
      {
        method: 'post',
        path: '/api/v1/test/sign-in',
        operationId: 'testSignIn',
        summary: 'test only',
        body: {
          type: 'object',
          required: ['accountId'],
          properties: { accountId: { type: 'string', format: 'uuid' }, method: { type: 'string', enum: ['password', 'google', 'apple'] } },
        },
        responses: { 200: { description: 'me' } },
      },
      async (req, res) => {
        await service.signIn(req, req.input.body.accountId, req.input.body.method);
        const account = await service.findById(principalOf(req).userId);
        res.json(await service.meResponse(account!));
      },
    );
    const app = buildTestApp({
      routers: [accounts.router, seam],
      authenticate: service.sessions.authenticate,
      authLimiter: accounts.router.authLimiter,
      publicBaseUrl: PUBLIC_BASE_URL,
    });
    return { accounts, app };
  };
  const first = build();
  return {
    db,
    smtp,
    clock,
    config,
    memberships,
    personal,
    logLines: lines,
    accounts: first.accounts,
    app: first.app,
    another: build,
    async deliver() {
      await first.accounts.service.deliverDueMail();
      return smtp.mails;
    },
    async reset() {
      await db.truncate();
      await db.knex.raw('delete from pgboss.job');
      smtp.clear();
      lines.length = 0;
      memberships.clear();
      personal.clear();
      clock.set('2026-11-22T09:00:00.000Z');
    },
    async close() {
      for (const q of queues) await q.stop(1000);
      for (const a of instances) await a.close();
      await smtp.stop();
      await db.destroy();
      fs.rmSync(config.dataDir, { recursive: true, force: true });
    },
  };
}

/** The mails to `address` (newest last), optionally of one subject. */
export function mailsTo(world: World, address: string, subject?: RegExp): ReceivedMail[] {
  return world.smtp.mails.filter((m) => m.to.map((t) => t.toLowerCase()).includes(address.toLowerCase()) && (!subject || subject.test(m.subject)));
}

/** The one link of a mail on PUBLIC_BASE_URL, with its query values decoded. */
export function linkIn(mail: ReceivedMail): { url: URL; params: Record<string, string> } {
  const found = linksIn(mail.text).filter((u) => u.origin === PUBLIC_BASE_URL && u.pathname !== '/login');
  if (found.length !== 1) throw new Error(`expected one action link in "${mail.subject}", found ${found.length}`);
  const url = found[0]!;
  return { url, params: Object.fromEntries(url.searchParams.entries()) };
}

/** POST /auth/register through `client`: `request(app)` (no cookie jar) or an agent. */
export function register(client: { post(url: string): request.Test }, email: string, password = PASSWORD, displayName = 'Ada Lovelace'): request.Test {
  return client.post('/api/v1/auth/register').send({ email, password, displayName });
}

export function login(agent: request.Agent, email: string, password = PASSWORD): request.Test {
  return agent.post('/api/v1/auth/login').send({ email, password });
}

/** Registers `email` with a fresh agent (signed in) and answers the agent and the user id. */
export async function signedUp(
  world: World,
  email: string,
  password = PASSWORD,
  displayName = 'Ada Lovelace',
): Promise<{ agent: request.Agent; userId: string }> {
  const agent = request.agent(world.app);
  const res = await agent.post('/api/v1/auth/register').send({ email, password, displayName });
  if (res.status !== 200) throw new Error(`register answered ${res.status}: ${JSON.stringify(res.body)}`);
  const me = await agent.get('/api/v1/me');
  if (me.status !== 200) throw new Error(`me answered ${me.status}`);
  return { agent, userId: me.body.user.id };
}

/** The session cookie of a response's Set-Cookie, or undefined. */
export function sessionCookie(res: request.Response): string | undefined {
  const set = res.headers['set-cookie'] as unknown as string[] | undefined;
  return set?.find((c) => c.startsWith('service_session='));
}

/** `db` query count from Server-Timing. */
export function dbQueries(res: request.Response): number {
  const m = /db;dur=[\d.]+;desc="(\d+) queries"/.exec(String(res.headers['server-timing']));
  if (!m) throw new Error(`no db entry in Server-Timing: ${res.headers['server-timing']}`);
  return Number(m[1]);
}

export function serverTimingSteps(res: request.Response): string[] {
  return String(res.headers['server-timing'])
    .split(',')
    .map((p) => p.trim().split(';')[0]!);
}
