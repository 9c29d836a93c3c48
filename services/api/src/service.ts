import { createHmac } from 'node:crypto';
import path from 'node:path';
import * as accounts from '@svc/accounts';
import * as changes from '@svc/changes';
import type { Clock, DishCatalog, PersonalDataSources, RandomBytes } from '@svc/contracts';
import { type ReadDeclaration, ReadKernel, runMigrations } from '@svc/db';
import * as dishes from '@svc/dishes';
import * as households from '@svc/households';
import {
  AnswerSealer,
  type ApiRouter,
  idempotency,
  idempotencyMigrations,
  type Logger,
  type Metrics,
  PgConditionalWriteLocks,
  PgIdempotencyStore,
  pathMatcher,
  RateLimit,
  RequestReads,
  systemClock,
  systemRandom,
} from '@svc/http-kit';
import * as jobs from '@svc/jobs';
import * as mealEvents from '@svc/meal-events';
import * as mealRules from '@svc/meal-rules';
import * as planner from '@svc/planner';
import * as push from '@svc/push';
import * as signInFactors from '@svc/sign-in-factors';
import type { Express } from 'express';
import type { Redis } from 'ioredis';
import type { Knex } from 'knex';
import { createApp } from './app.js';
import type { Config } from './config.js';

/** Every package's migrations, dependencies first. */
export const allMigrations = [
  // The job queue's tables first: a package's migration may create its queue in them.
  jobs.migrations,
  accounts.migrations,
  households.migrations,
  mealRules.migrations,
  mealEvents.migrations,
  dishes.migrations,
  push.migrations,
  signInFactors.migrations,
  planner.migrations,
  changes.migrations,
  idempotencyMigrations,
  // Queues in the job queue's tables, once those exist.
  accounts.queues,
  households.queues,
  mealEvents.queues,
  changes.queues,
  planner.queues,
  signInFactors.queues,
  // Foreign keys across packages, once every package's tables exist.
  households.relations,
  push.relations,
  mealRules.relations,
  mealEvents.relations,
  dishes.relations,
  signInFactors.relations,
  planner.relations,
  // The changes feed's triggers on the tables each owning package declares (they must exist).
  changes.sourceMigrations([
    ...households.changeSources,
    ...mealRules.changeSources,
    ...mealEvents.changeSources,
    ...dishes.changeSources,
    ...planner.changeSources,
  ]),
  // A change of a field a feed value borrows (a member's account name) recorded as a change of the
  // borrower: the value reads the changes feed is handed below (changeValues), each kind's.
  changes.linkMigrations({
    household: { read: households.householdRead },
    member: { read: households.memberRead(accounts.accountNameLink) },
    rule: { read: mealRules.ruleRead },
    event: { read: mealEvents.eventRead },
    dish: { read: dishes.dishRead },
    plan: { read: planner.planRead },
  }),
  // Writes that enqueue their own jobs (the mail outbox's rows, a rename's news, events' reminders), once the tables and queues exist.
  jobs.sourceMigrations([...accounts.jobSources, ...households.jobSources, ...mealEvents.jobSources]),
];

export interface ServiceDeps {
  config: Config;
  knex: Knex;
  /**
   * The URL and options `knex` was opened with: the calendar feed's rendering thread reads its
   * window over a connection of its own (no row of it on the event loop). Left out: the window is
   * read through `knex` and handed over page by page.
   */
  database?: mealEvents.FeedDatabase;
  logger: Logger;
  clock?: Clock;
  random?: RandomBytes;
  /** Tests may hand the mail worker a transport of their own. */
  mailTransport?: accounts.AccountServiceOptions['mailTransport'];
  /** Start accounts' housekeeping (default true); tests drive the outbox by hand with `accounts.deliverDueMail()`. */
  startMailer?: boolean;
  /** A CA certificate the APNs connection trusts besides the system's (tests: the APNs fake's own certificate). */
  apnsCa?: string;
  /** Start this instance's job runner, which delivers mail and pushes (default: as `startMailer`); tests run due jobs by hand with `jobs.runDue()`. */
  startJobs?: boolean;
  /** Prometheus metrics of this instance (main creates them when METRICS_PORT is set). */
  metrics?: Metrics;
  /** True once the instance drains before stopping (main sets it on SIGTERM). */
  draining?: () => boolean;
  /** False: no declared read is loaded with the principal, every route reads itself (the byte-equality test's reference). Default true. */
  declaredReads?: boolean;
  /** The dishes the planner plans with (tests may hand in their own); default @svc/dishes' catalog. */
  dishCatalog?: DishCatalog;
}

export interface Service {
  app: Express;
  accounts: accounts.AccountService;
  /** What households (and the admin command's waitlist) know of accounts. */
  accountDirectory: accounts.AccountDirectoryWithWaitlist;
  households: households.HouseholdsService;
  /** The planner (tests run a plan's run by hand with `planner.run(planId)`). */
  planner: planner.PlannerService;
  /** The job queue every package defers work to (runs on every instance). */
  jobs: jobs.JobQueue;
  /** The declared reads the routes serve, by name and path (GET). */
  declaredReads: { name: string; path: string }[];
  /** The read kernel composing them with the session lookup (tests ask it what a path loads). */
  readKernel: ReadKernel;
  /** Stops background work and closes connections the service opened (not the knex pool). */
  close(): Promise<void>;
}

/** A key of its own for each purpose, derived from the session secret, so one secret is all ops keep. */
function derivedKey(secret: string, purpose: string): string {
  return createHmac('sha256', secret).update(purpose).digest('base64url');
}

/**
 * One line for the migrations a start applied: how many (their names at debug level: on a first
 * start they are every package's whole history, kilobytes of names).
 */
export function logMigrations(logger: Logger, applied: readonly string[]): void {
  if (!applied.length) return;
  logger.debug({ applied }, 'migrations applied (names)');
  logger.info({ count: applied.length }, 'migrations applied');
}

/** Migrates the database and composes every package into one app. Used by main and by the end-to-end tests. */
export async function buildService(deps: ServiceDeps): Promise<Service> {
  const { config, knex, logger } = deps;
  const clock = deps.clock ?? systemClock;
  const random = deps.random ?? systemRandom;
  if (!accounts.BCRYPT_NATIVE)
    logger.warn({}, 'no native bcrypt for this platform (@node-rs/bcrypt): passwords are hashed by bcryptjs, slower and on the event loop');
  logMigrations(logger, await runMigrations(knex, allMigrations));
  // A command Redis does not answer within 500 ms fails (a hung Redis must not hang sign-ins); any
  // failure sends the rate limits to their in-memory insurance limiter (per instance) until Redis
  // answers again. A connection that receives nothing for 1 s while a command waits is dead
  // (ioredis' `socketTimeout`): ioredis drops it, says so ('error') and reconnects, and 'ready'
  // says Redis answers again, so a hung Redis is noticed by the first command sent to it, and its
  // return by ioredis' own reconnection, with no probe of ours. One warning when it goes, one line
  // when it is back, not one per reconnect.
  // ioredis is loaded only when REDIS_URL is set (an instance without it never holds the client (its resident memory: docs/benchmarks.md, "What the bench settled").
  const redis: Redis | undefined = config.redisUrl
    ? new (await import('ioredis')).Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 500, socketTimeout: 1000 })
    : undefined;
  let redisDown = false;
  const redisFailed = (err: Error) => {
    if (redisDown) return logger.debug({ err: { message: err.message } }, 'redis error');
    redisDown = true;
    logger.warn({ err: { message: err.message } }, 'redis unavailable: auth rate limits are per instance (in memory) until it is back');
  };
  const redisAnswered = () => {
    if (!redisDown) return;
    redisDown = false;
    logger.info('redis back: auth rate limits shared again');
  };
  redis?.on('error', redisFailed);
  redis?.on('ready', redisAnswered);

  // The one way to do work later: every instance runs it (no leader); its metrics join this instance's.
  const jobQueue = new jobs.JobQueue({ knex, clock, logger: logger.child({ component: 'jobs' }), registry: deps.metrics?.registry });

  // households looks accounts up (the directory, straight from the accounts store) and accounts
  // lists memberships (households' capabilities): the store comes first, so no cycle is closed late.
  const accountsStore = new accounts.ObjectionAccountStore(knex);
  const accountDirectory = accounts.accountDirectory(accountsStore, clock);
  // Meal events' part in a household's membership changes (a departed member's participants, the
  // calendar feed they could read) needs only its own stores: made before households, which calls it.
  const eventsStore = new mealEvents.ObjectionMealEventStore(knex);
  const feedsStore = new mealEvents.ObjectionCalendarFeedStore(knex);
  // A provider without its configuration writes each message under DATA_DIR/push and logs it.
  const pushLogger = logger.child({ component: 'push' });
  const pushFiles = { dir: path.join(config.dataDir, 'push'), clock, logger: pushLogger };
  const pushProviders: push.PushProviders = {
    fcm: config.fcm ? new push.FcmProvider({ ...config.fcm, clock }) : new push.FilePushProvider('fcm', pushFiles),
    apns: config.apns ? new push.ApnsProvider({ ...config.apns, clock, ca: deps.apnsCa }) : new push.FilePushProvider('apns', pushFiles),
  };
  // The people a notification is for (the household's members with accounts), its language, zone
  // and name: read through households' own store, so push is built before households, which tells
  // it of changes (householdNews).
  const householdMembers = new households.ObjectionHouseholdStore(knex);
  const notifications = new push.NotificationService({
    knex,
    clock,
    jobs: jobQueue,
    accountIds: async (householdId, trx) =>
      (await householdMembers.members(householdId, trx as Knex.Transaction | undefined)).flatMap((m) => (m.userId ? [m.userId] : [])),
    profiles: (householdId) => householdMembers.profile(householdId),
    householdName: async (householdId) => (await householdMembers.get(householdId).catch(() => undefined))?.name,
    displayNames: async (ids) => new Map([...(await accountDirectory.profiles(ids)).values()].map((p) => [p.id, p.displayName])),
    providers: pushProviders,
    logger: pushLogger,
  });
  const householdsApi = new households.HouseholdsService({
    store: new households.ObjectionHouseholdStore(knex),
    ledger: new households.CreditLedger(knex, clock, config.aiTurnsPerMonth),
    clock,
    random,
    logger,
    config: { intakeMode: config.intakeMode, inviteCodes: config.inviteCodes, welcomeCredits: config.welcomeCredits },
    accounts: accountDirectory,
    accountName: accounts.accountNameLink,
    invitationSecret: derivedKey(config.sessionSecret, 'households-invitation-code'),
    membershipListeners: [new mealEvents.MealEventsMembershipListener({ events: eventsStore, feeds: feedsStore })],
    // A zone change moves the pending reminders (meal events', made below; called only from a PATCH).
    zoneListeners: [(householdId, zone, now, trx) => eventReminders.zoneWritten(householdId, zone, now, trx as Knex.Transaction)],
    news: notifications.news,
  });
  // A rename's news: enqueued by the renaming statement, told through push by the job.
  householdsApi.defineJobs(jobQueue);
  const rulesService = new mealRules.MealRulesService({
    store: new mealRules.ObjectionMealRuleStore(knex),
    clock,
    access: householdsApi.access,
    profiles: householdsApi.profiles,
    householdCountry: households.householdCountryLink,
    spendTurn: householdsApi.spendTurn,
    // RULE_PARSER_URL set: a language model reads sentences first, the offline parser fills in and stands in.
    modelParser: config.ruleParser && mealRules.createModelRuleParser(config.ruleParser),
    logger: logger.child({ component: 'meal-rules' }),
  });
  const seriesStore = new mealEvents.SeriesStore(knex);
  // Meal events' reminders: enqueued with each write, sent through push to the participants' accounts.
  const eventReminders = new mealEvents.EventReminders({
    knex,
    jobs: jobQueue,
    clock,
    memberAccounts: async (householdId) =>
      new Map((await householdMembers.members(householdId)).flatMap((m) => (m.userId ? [[m.memberId.toLowerCase(), m.userId] as const] : []))),
    send: notifications.remind,
  });
  eventReminders.define();
  const eventsService = new mealEvents.MealEventsService({
    store: eventsStore,
    clock,
    random,
    access: householdsApi.access,
    memberIds: householdsApi.memberIds,
    cursorSecret: derivedKey(config.sessionSecret, 'meal-events-cursor'),
    series: seriesStore,
    profiles: householdsApi.profiles,
    reminders: eventReminders,
  });
  // Series of repeating events: their window is extended every day by a job of the queue (every instance ticks; one enqueues).
  const seriesScheduler = new mealEvents.SeriesScheduler(
    jobQueue,
    new mealEvents.SeriesExtender({ series: seriesStore, clock, profiles: householdsApi.profiles, random }),
    seriesStore,
    clock,
  );
  seriesScheduler.define();
  // A household's own dishes and the starter library; `dishesService.catalog` is what the planner reads of them.
  const dishesService = new dishes.DishesService({
    store: new dishes.ObjectionDishStore(knex),
    clock,
    random,
    access: householdsApi.access,
    cursorSecret: derivedKey(config.sessionSecret, 'dishes-cursor'),
  });
  // The planner: runs on the job queue, solved in worker threads; inputs through the owning packages' capabilities.
  // The worker threads (each loads the solver once) start with the first run, not with every instance.
  let solverPool: planner.PlanSolverPool | undefined;
  const planSolver: planner.PlanSolver = {
    solve: (input) => {
      solverPool ??= new planner.PlanSolverPool({ threads: config.planner.threads, timeoutMs: config.planner.timeoutMs });
      return solverPool.solve(input);
    },
  };
  const plannerService = new planner.PlannerService({
    store: new planner.ObjectionPlanStore(knex),
    knex,
    clock,
    jobs: jobQueue,
    access: householdsApi.access,
    households: households.planningHouseholds(householdMembers),
    rules: mealRules.planningRules(rulesService),
    events: mealEvents.planningEvents(eventsStore),
    dishes: deps.dishCatalog ?? dishesService.catalog,
    tellRunDone: push.runDoneTeller(notifications, householdsApi.profiles),
    solver: planSolver,
    // A run's reads and write overlap another's solve (and the queue fetches two at a time); more would only wait for a thread.
    runsAtOnce: Math.max(4, 2 * config.planner.threads),
    logger: logger.child({ component: 'planner' }),
  });
  plannerService.defineJobs();
  const calendarService = new mealEvents.CalendarFeedService({
    feeds: feedsStore,
    events: eventsStore,
    clock,
    random,
    access: householdsApi.access,
    profiles: householdsApi.profiles,
    publicBaseUrl: config.publicBaseUrl,
    tokenSecret: derivedKey(config.sessionSecret, 'meal-events-calendar-feed'),
    // The current plans' dinners beside the events (one VEVENT each; their version is part of the feed's ETag).
    dinners: plannerService.plannedDinners,
    database: deps.database,
    // Below the event loop, as the other helper threads (HELPER_THREAD_NICE).
    renderNice: config.helperThreadNice,
  });
  // The changes feed: each kind's value read with the page, in its one statement, by the owning
  // package's declared read of one row, made into the answer its own GET makes of that row.
  const changeValues: changes.ChangeValueReads = {
    household: householdsApi.changeValues!.household,
    member: householdsApi.changeValues!.member,
    rule: rulesService.changeValue,
    event: eventsService.changeValue,
    dish: dishesService.changeValue,
    plan: plannerService.changeValue,
  };
  const changesService = new changes.ChangesService({
    // linkMigrations (above) records the members' borrowed account names: every page may be kept.
    store: new changes.ChangesStore(knex, changeValues, { linksRecorded: true }),
    access: householdsApi.access,
    clock,
    cursorSecret: derivedKey(config.sessionSecret, 'changes-cursor'),
  });
  // Idempotency-Key: kept in PostgreSQL (every instance shares them), answers sealed with a key
  // derived from SESSION_SECRET (rotating it leaves the last 24 h's keys answering 422); forgotten
  // after 24 h by the daily purge.
  const idempotencyStore = new PgIdempotencyStore(knex, new AnswerSealer(derivedKey(config.sessionSecret, 'idempotency-answers')));
  const changesPurge = new changes.ChangesPurgeScheduler(jobQueue, changesService, [() => idempotencyStore.purge(clock.now())]);
  changesPurge.define();
  const pushService = new push.PushService({ store: new push.ObjectionPushStore(knex), clock, config: { defaultProvider: config.pushDefaultProvider } });

  // A person's erasure and data export: each package deletes or reads only its own rows, inside
  // accounts' one transaction (households first: it may refuse with owner_must_transfer).
  const deletionSteps = [
    householdsApi.deletionStep,
    pushService.deletionStep,
    notifications.deletionStep,
    // The answers kept for the person's Idempotency-Keys hold what they sent and got.
    { deleteAccountData: (userId: string, trx: unknown) => idempotencyStore.forgetPerson(userId, trx as Knex.Transaction) },
  ];
  const personalData: PersonalDataSources = {
    household: householdsApi.exportSource.household,
    rules: (householdId) => rulesService.exportRules(householdId),
    events: (householdId) => eventsService.exportEvents(householdId),
    // What the export reads: each page as the JSON text PostgreSQL wrote, written through.
    eventPages: (householdId) => eventsService.exportEventPages(householdId),
    devices: (userId) => pushService.list(userId),
    notifications: (userId) => notifications.exportInbox(userId) as AsyncIterable<Record<string, unknown>[]>,
  };
  // The declared reads of the routes (each GET that names one), composed with the session lookup by
  // the kernel: filled in once the routers exist, before the first request.
  const reads = new ReadKernel({
    matcher: pathMatcher,
    membership: households.membership,
    principalReads: [{ column: 'memberships', read: households.membershipsRead }],
  });
  const accountsService = new accounts.AccountService({
    store: accountsStore,
    knex,
    clock,
    random,
    logger,
    memberships: householdsApi.memberships,
    // The kernel runs the session's and the token's statements, each with the caller's memberships
    // and a GET's declared read, which it hands to the route (accounts sees neither).
    requestReads: new RequestReads({ knex, clock, kernel: reads }),
    // GET /me/logins: the second factors' summary lent to accounts' read (one statement with the session).
    secondFactorLinks: signInFactors.secondFactorLinks,
    deletionSteps,
    personalData,
    mailTransport: deps.mailTransport,
    jobs: jobQueue,
    metrics: deps.metrics,
    redis,
    tuning: { hashWorkers: config.passwordHashWorkers },
    config: {
      publicBaseUrl: config.publicBaseUrl,
      sessionSecret: config.sessionSecret,
      cookieSecure: config.cookieSecure,
      mailFrom: config.mailFrom,
      smtpUrl: config.smtpUrl,
      dataDir: config.dataDir,
      authRateLimit: config.authRateLimit,
      authRateWindowSeconds: config.authRateWindowSeconds,
      lockoutMaxFailures: config.lockoutMaxFailures,
      lockoutSeconds: config.lockoutSeconds,
      passwordBreachApi: config.passwordBreachApi,
      platformAdminEmails: config.platformAdminEmails,
      sessionMaxAgeDays: config.sessionMaxAgeDays,
      unaskedMailPerAddress: config.unaskedMailPerAddress,
      unaskedMailPerIp: config.unaskedMailPerIp,
      google: config.google,
      apple: config.apple,
      appRedirectUris: config.appRedirectUris,
      webClientUrl: config.webClientUrl,
      accessTokenSecret: config.accessTokenSecret,
      tokenRateLimit: config.tokenRateLimit,
      tokenRateWindowSeconds: config.tokenRateWindowSeconds,
    },
  });
  const accountsRouter = accounts.createRouter({ service: accountsService, redis });
  // TOTP and passkeys: accounts asks them after every right first factor; they finish sign-ins through accounts.
  const factorsService = new signInFactors.SignInFactorsService({
    store: new signInFactors.SignInFactorStore(knex),
    clock,
    random,
    logger: logger.child({ component: 'sign-in-factors' }),
    secret: derivedKey(config.sessionSecret, 'sign-in-factors'),
    webauthn: config.webauthn,
    accounts: accountsService.signInCompletion(),
  });
  accountsService.useSecondFactors(factorsService);

  const routers: ApiRouter[] = [
    accountsRouter,
    signInFactors.createRouter({
      service: factorsService,
      signInResponseSchema: accounts.MeResponseSchema,
      // Each answer stores a challenge: ten an account per ten minutes, shared by every instance.
      passkeyOptionsLimit: new RateLimit({ keyPrefix: 'passkey-options', points: 10, durationSeconds: 600, redis, code: 'rate_limited' }).middleware(
        (req) => req.principal?.userId ?? req.ip ?? 'unknown',
      ),
    }),
    households.createRouter({ service: householdsApi }),
    mealRules.createRouter({ service: rulesService }),
    mealEvents.createRouter({ service: eventsService, calendar: calendarService, calendarLimits: mealEvents.calendarFeedLimits({ redis }) }),
    dishes.createRouter({ service: dishesService }),
    push.createRouter({ service: pushService, notifications, internalTokens: config.internalApiTokens }),
    changes.createRouter({ service: changesService }),
    planner.createRouter({ service: plannerService }),
  ];
  const declaredReads: { name: string; path: string }[] = [];
  for (const { method, path: route, read, heldVersion } of routers.flatMap((r) => r.operations)) {
    if (!read || method !== 'get') continue;
    declaredReads.push({ name: read.name, path: route });
    if (deps.declaredReads !== false) reads.add(read as ReadDeclaration, route, heldVersion);
  }
  const app = createApp({
    knex,
    logger,
    publicBaseUrl: config.publicBaseUrl,
    corsOrigins: config.corsOrigins,
    appVersionFloors: config.appVersionFloors,
    trustProxy: config.trustProxy,
    authenticate: accountsService.sessions.authenticate,
    authLimiter: accountsRouter.authLimiter,
    metrics: deps.metrics,
    draining: deps.draining,
    pages: config.webPages ? { paths: accounts.PAGE_PATHS, router: accountsRouter.pages } : undefined,
    webClientUrl: config.webClientUrl,
    idempotency: idempotency({ store: idempotencyStore, clock, logger, roleOf: householdsApi.access.roleOf }),
    conditionalWriteLocks: new PgConditionalWriteLocks(knex, clock),
    routers,
  });
  // Every periodic task is a pg-boss cron schedule on the job queue (one job per time for the cluster).
  if (deps.startMailer !== false) {
    await accountsService.startBackgroundWork();
    await signInFactors.schedulePrune(jobQueue, () => factorsService.prune());
  }
  if (deps.startJobs ?? deps.startMailer !== false) {
    await jobQueue.start();
    await seriesScheduler.schedule().catch((err) => logger.warn({ err: { message: (err as Error).message } }, 'series extension could not be scheduled'));
    await changesPurge.schedule().catch((err) => logger.warn({ err: { message: (err as Error).message } }, 'the purge of old changes could not be scheduled'));
  }
  return {
    app,
    accounts: accountsService,
    accountDirectory,
    households: householdsApi,
    planner: plannerService,
    jobs: jobQueue,
    declaredReads,
    readKernel: reads,
    async close() {
      await jobQueue.stop(); // handlers in flight finish (or are rescheduled) while the database is still open
      await plannerService.close(); // the LISTEN connection of Prefer: wait
      await solverPool?.destroy(); // the solver's worker threads
      await Promise.all(Object.values(pushProviders).map((p) => p.close())); // APNs' HTTP/2 session
      await accountsService.close(); // housekeeping, the mail transport and the hashing threads
      redis?.disconnect();
    },
  };
}
