import { randomUUID } from 'node:crypto';
import type { Clock } from '@svc/contracts';
import type { Knex } from 'knex';
import PgBoss from 'pg-boss';
import { Counter, Gauge, type Registry } from 'prom-client';
import { JOBS_SCHEMA } from './migrations.js';

/** The part of a pino logger the queue writes to. */
export interface JobsLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** What a handler is told besides its data. */
export interface JobContext {
  /** The job's id (a uuid; a retry is a new job with a new id). */
  id: string;
  /** 1 for the first run, 2 for the first retry, … */
  attempt: number;
  /** When the job first became due: the day's limit counts from here. */
  firstDueAt: Date;
  /** Aborted when the handler has run for half the queue's expiry (or the instance stops): stop and let it retry. */
  signal: AbortSignal;
}

export type JobHandler<T> = (data: T, context: JobContext) => Promise<void>;

/**
 * Thrown by a handler: try again later, not before `retryAfterMs` (e.g. a provider's Retry-After)
 * when given. With `nextData` the retry runs with that data instead of the job's (the part of the
 * work still left, e.g. the phones of a notification that have not got it yet); the retry is
 * written in the transaction that ends this run, so the work done is never done again by it.
 */
export class RetryLater extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
    readonly nextData?: unknown,
  ) {
    super(message);
    this.name = 'RetryLater';
  }
}

/**
 * Thrown by a handler: not now, run this job again in `delayMs` (e.g. after a person's quiet hours).
 * Not a failure: no attempt is counted, and the day's limit counts from the new time.
 */
export class RunLater extends Error {
  constructor(readonly delayMs: number) {
    super('run later');
    this.name = 'RunLater';
  }
}

/** Thrown by a handler: this job can never succeed; give it up now (logged and counted). */
export class GiveUp extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GiveUp';
  }
}

export interface QueueHandlerOptions {
  /** Must equal the `expireInSeconds` the queue's migration created it with. */
  expireInSeconds: number;
  /**
   * Handlers of this queue in flight at once on this instance (default: the queue's `concurrency`).
   * For work that waits on a smaller resource (e.g. a few worker threads): more handlers at once
   * would only crowd the event loop and hold jobs another instance could run.
   */
  concurrency?: number;
}

export interface JobQueueOptions {
  knex: Knex;
  clock: Clock;
  logger: JobsLogger;
  /** prom-client registry (http-kit's `Metrics.registry`) for the queue's metrics; none: not measured. */
  registry?: Registry;
  /** A number in [0, 1) for the backoff's jitter (default Math.random). */
  random?: () => number;
  /** Handlers in flight at once on this instance (default 32). */
  concurrency?: number;
  /** How long an idle runner waits before it looks for due jobs again (default 1000 ms). */
  pollIntervalMs?: number;
  /** How often (cluster-wide, whichever instance comes first) abandoned jobs are put back (default 30 s). */
  maintenanceIntervalSeconds?: number;
  /** A job that has not succeeded this long after it first became due is given up (default one day). */
  giveUpAfterMs?: number;
  /** Backoff of the n-th retry: base·2^(n-1), jittered to 50–100 %, at most `maxMs` (defaults 2 s and 1 h). */
  backoff?: { baseMs: number; maxMs: number };
}

/** What is stored as pg-boss's job data: the payload and the retry bookkeeping. */
interface Envelope<T> {
  p: T;
  /** attempt number of this run */
  a: number;
  /** first due, ISO (none in a job pg-boss's cron sent: due when it runs first, by the injected clock) */
  f: string;
}

interface QueueRecord {
  handler: JobHandler<unknown>;
  expireInSeconds: number;
  /** This queue's limit of handlers in flight on this instance. */
  concurrency: number;
  /** This queue's handlers in flight on this instance. */
  inFlight: number;
}

/**
 * pg-boss's database interface on a knex (or a knex transaction: then every statement runs in it).
 * Each statement is announced as knex announces its own (`query`, then `query-response` or
 * `query-error`), so whatever counts a request's statements (http-kit's Server-Timing and
 * X-Diagnostics) counts an enqueue inside a request too.
 */
export function knexDb(knex: Knex): PgBoss.Db {
  return {
    async executeSql(text: string, values?: unknown[]) {
      const client = knex.client as {
        acquireConnection(): Promise<PgConnection>;
        releaseConnection(c: PgConnection): Promise<void>;
        emit(event: string, ...args: unknown[]): boolean;
      };
      const query = { sql: text, bindings: values ?? [], method: 'raw', __knexQueryUid: randomUUID() };
      const conn = await client.acquireConnection();
      client.emit('query', query);
      try {
        const result = await conn.query(text, values);
        client.emit('query-response', result, query);
        return result;
      } catch (err) {
        client.emit('query-error', err, query);
        throw err;
      } finally {
        await client.releaseConnection(conn);
      }
    },
  };
}

interface PgConnection {
  query(text: string, values?: unknown[]): Promise<{ rows: PgBoss.Db extends { executeSql(...a: never[]): Promise<{ rows: infer R }> } ? R : never }>;
}

const DAY_MS = 86_400_000;

/**
 * The service's one way to do work later: jobs in PostgreSQL (pg-boss), enqueued inside the
 * transaction of the change that causes them, run by every instance that calls `start` (no
 * leader: a job is taken by exactly one runner with `FOR UPDATE SKIP LOCKED`). A handler that
 * throws is tried again with exponential backoff (never sooner than a `RetryLater`'s
 * `retryAfterMs`); a job that has not succeeded a day after it first became due is given up,
 * logged and counted. A runner that dies mid-job leaves the job active; after the queue's expiry
 * any instance's maintenance puts it back and another runner finishes it.
 */
export class JobQueue {
  private readonly knex: Knex;
  private readonly clock: Clock;
  private readonly logger: JobsLogger;
  private readonly boss: PgBoss;
  private readonly random: () => number;
  private readonly concurrency: number;
  private readonly pollIntervalMs: number;
  private readonly giveUpAfterMs: number;
  private readonly backoff: { baseMs: number; maxMs: number };
  private readonly queues = new Map<string, QueueRecord>();
  private readonly inFlight = new Map<Promise<void>, AbortController>();
  private readonly completing = new Map<string, { ids: string[]; result: Promise<void> }>();
  private readonly givenUp?: Counter<'queue'>;
  private readonly outcomes?: Counter<'queue' | 'outcome'>;
  private running: Promise<void> | undefined;
  private stopping = false;
  private wake: (() => void) | undefined;
  private started = false;
  private readonly schedules = new Map<string, { cron: string; data: object }>();

  constructor(options: JobQueueOptions) {
    this.knex = options.knex;
    this.clock = options.clock;
    this.logger = options.logger;
    this.random = options.random ?? Math.random;
    this.concurrency = options.concurrency ?? 32;
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
    this.giveUpAfterMs = options.giveUpAfterMs ?? DAY_MS;
    this.backoff = options.backoff ?? { baseMs: 2000, maxMs: 3_600_000 };
    this.boss = new PgBoss({
      db: knexDb(options.knex),
      schema: JOBS_SCHEMA,
      migrate: false, // the service's migrations install it (@svc/jobs `migrations`)
      supervise: true,
      // pg-boss's cron (`schedule()`): every instance's timekeeper competes, each cron time sends one job cluster-wide.
      schedule: true,
      maintenanceIntervalSeconds: options.maintenanceIntervalSeconds ?? 30,
    });
    this.boss.on('error', (err: Error) => this.logger.warn({ err: { message: err.message } }, 'job queue maintenance failed'));
    if (options.registry) {
      const registers = [options.registry];
      this.givenUp = new Counter({
        name: 'jobs_given_up_total',
        help: 'Jobs given up (failed for a day, or refused for good), by queue',
        labelNames: ['queue'],
        registers,
      });
      this.outcomes = new Counter({
        name: 'jobs_runs_total',
        help: 'Job runs on this instance by queue and outcome (completed, retried, deferred, given_up)',
        labelNames: ['queue', 'outcome'],
        registers,
      });
      const knex = options.knex;
      // Per queue (mail is the queue `accounts-mail`, push deliveries `push-deliver`, …): one query a scrape, shared by both gauges.
      let pending: Promise<Map<string, { n: number; age: number; pending: number }>> | undefined;
      const read = () => {
        pending ??= knex
          .raw(
            `select name, count(*)::int as n,
                    coalesce(extract(epoch from now() - min(start_after) filter (where start_after < now())), 0)::float8 as age,
                    coalesce(greatest(extract(epoch from now() - min((data->>'f')::timestamptz)), 0), 0)::float8 as pending
               from ${JOBS_SCHEMA}.job where state < 'active' group by name`,
          )
          .then(
            (r: { rows: { name: string; n: number; age: number; pending: number }[] }) =>
              new Map(r.rows.map((row) => [row.name, { n: row.n, age: row.age, pending: row.pending }])),
          )
          .finally(() => {
            pending = undefined;
          });
        return pending;
      };
      const queueNames = () => [...this.queues.keys()];
      queueGauge(options.registry, 'jobs_queued', 'Jobs waiting (due or scheduled), cluster-wide, by queue', queueNames, async () => {
        const byQueue = await read();
        return (q) => byQueue.get(q)?.n ?? 0;
      });
      queueGauge(
        options.registry,
        'jobs_oldest_due_age_seconds',
        'How long the oldest due job has waited to be run, cluster-wide, by queue (0: none waiting)',
        queueNames,
        async () => {
          const byQueue = await read();
          return (q) => byQueue.get(q)?.age ?? 0;
        },
      );
      // Through its retries: a job failing again and again (SMTP or a provider down) waits for a
      // later retry, so it is not "due"; this age grows all the same.
      queueGauge(
        options.registry,
        'jobs_oldest_unfinished_age_seconds',
        'How long ago the oldest waiting job first became due, retries included, cluster-wide, by queue (0: none waiting)',
        queueNames,
        async () => {
          const byQueue = await read();
          return (q) => byQueue.get(q)?.pending ?? 0;
        },
      );
    }
  }

  /** Looks for due jobs now rather than at the next poll (after a commit that enqueued work this instance may run). */
  nudge(): void {
    this.wake?.();
  }

  /** The handler of a queue (its migration created the queue: `createQueueMigration`). */
  define<T>(queue: string, handler: JobHandler<T>, options: QueueHandlerOptions): void {
    if (this.queues.has(queue)) throw new Error(`jobs: queue ${queue} already has a handler`);
    const concurrency = Math.min(this.concurrency, Math.max(1, Math.floor(options.concurrency ?? this.concurrency)));
    this.queues.set(queue, { handler: handler as JobHandler<unknown>, expireInSeconds: options.expireInSeconds, concurrency, inFlight: 0 });
  }

  /**
   * Enqueues a job; with `trx`, inside that transaction (one INSERT), so it exists exactly when the
   * change that caused it commits. `delayMs` defers it. Answers the job id.
   */
  async enqueue<T>(queue: string, data: T, options: { trx?: Knex.Transaction; delayMs?: number } = {}): Promise<string> {
    const ids = await this.enqueueMany(queue, [data], options);
    return ids[0]!;
  }

  /** Several jobs of one queue in one INSERT (same options as `enqueue`). */
  async enqueueMany<T>(queue: string, items: readonly T[], options: { trx?: Knex.Transaction; delayMs?: number } = {}): Promise<string[]> {
    if (items.length === 0) return [];
    const delayMs = Math.max(0, options.delayMs ?? 0);
    const firstDue = new Date(this.clock.now().getTime() + delayMs).toISOString();
    const db = knexDb(options.trx ?? this.knex);
    // One statement: pg-boss's bulk insert (ids made here so the caller learns them).
    const ids = items.map(() => randomUUID());
    // Due relative to the database's clock, which is the one pg-boss's fetch compares with.
    const startAfter = delayMs > 0 ? `${delayMs / 1000} seconds` : undefined;
    await this.boss.insert(
      items.map((p, i) => ({ id: ids[i], name: queue, data: { p, a: 1, f: firstDue } satisfies Envelope<T>, ...(startAfter ? { startAfter } : {}) })),
      { db },
    );
    return ids;
  }

  /**
   * Jobs of one queue each due at its own instant, in one INSERT (inside `trx` when given): a job
   * whose instant is past is due at once. The day's limit counts from each job's instant.
   */
  async enqueueAt<T>(queue: string, items: readonly { data: T; at: Date }[], options: { trx?: Knex.Transaction } = {}): Promise<string[]> {
    if (items.length === 0) return [];
    const now = this.clock.now().getTime();
    const db = knexDb(options.trx ?? this.knex);
    const ids = items.map(() => randomUUID());
    // Due relative to the database's clock (pg-boss's fetch compares with it), as `enqueue` does.
    await this.boss.insert(
      items.map(({ data, at }, i) => {
        const delayMs = Math.max(0, at.getTime() - now);
        return {
          id: ids[i],
          name: queue,
          data: { p: data, a: 1, f: at.toISOString() } satisfies Envelope<T>,
          ...(delayMs > 0 ? { startAfter: `${delayMs / 1000} seconds` } : {}),
        };
      }),
      { db },
    );
    return ids;
  }

  /**
   * Runs `queue`'s handler on a cron schedule (UTC): pg-boss's `schedule()`, whose cron sends one
   * job per cron time for the whole cluster (whichever instance's timekeeper comes first), run
   * like any other job (retries, expiry, give-up). Kept in pg-boss's `schedule` table, written at
   * `start` (or at once when started). The job's `firstDueAt` is the injected clock's time of its
   * first run. Every periodic task of the service is one of these: no interval timer of its own.
   */
  async schedule(queue: string, cron: string, data: object = {}): Promise<void> {
    if (!this.queues.has(queue)) throw new Error(`jobs: define ${queue} before scheduling it`);
    this.schedules.set(queue, { cron, data });
    if (this.started) await this.writeSchedule(queue);
  }

  private async writeSchedule(queue: string): Promise<void> {
    const { cron, data } = this.schedules.get(queue)!;
    await this.boss.schedule(queue, cron, { p: data, a: 1 } satisfies Omit<Envelope<object>, 'f'>, { tz: 'UTC' });
  }

  /** Starts this instance's runner and pg-boss's maintenance (expiry of abandoned jobs, archiving) and cron. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await this.boss.start();
    for (const queue of this.schedules.keys()) await this.writeSchedule(queue);
    this.stopping = false;
    this.running = this.loop();
  }

  /**
   * Stops taking jobs, waits up to `timeoutMs` for the handlers in flight, then aborts the rest
   * (each is rescheduled as a retry). Closes nothing it did not open (the knex pool stays).
   */
  async stop(timeoutMs = 10_000): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.running;
    const pending = [...this.inFlight.keys()];
    if (pending.length) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      });
      await Promise.race([Promise.allSettled(pending), late]);
      clearTimeout(timer);
      for (const controller of this.inFlight.values()) controller.abort(new Error('instance stopping'));
      await Promise.allSettled([...this.inFlight.keys()]);
    }
    if (this.started) await this.boss.stop({ graceful: false, close: false, wait: true });
    this.started = false;
  }

  /**
   * Runs every due job of every defined queue (or of `queue` alone) on this instance until none is
   * left (tests, the admin command). Answers how many ran.
   */
  async runDue(queue?: string): Promise<number> {
    let total = 0;
    for (;;) {
      const batch = await this.fetchAndRun(this.concurrency, queue);
      if (batch.length === 0) return total;
      total += batch.length;
      await Promise.allSettled(batch);
    }
  }

  /** Puts back every job whose runner vanished (active longer than its queue's expiry), as maintenance does. */
  async expireAbandoned(): Promise<void> {
    await this.boss.expire();
  }

  private async fetchAndRun(room: number, only?: string): Promise<Promise<void>[]> {
    const started: Promise<void>[] = [];
    for (const [queue, record] of this.queues) {
      if (only !== undefined && queue !== only) continue;
      if (room - started.length <= 0) break;
      const free = Math.min(room - started.length, record.concurrency - record.inFlight);
      if (free <= 0) continue;
      const jobs = await this.boss.fetch<Envelope<unknown>>(queue, { batchSize: free });
      for (const job of jobs) started.push(this.track(queue, record, job));
    }
    return started;
  }

  private track(queue: string, record: QueueRecord, job: PgBoss.Job<Envelope<unknown>>): Promise<void> {
    const controller = new AbortController();
    record.inFlight++;
    const run = this.run(queue, record, job, controller).finally(() => {
      this.inFlight.delete(run);
      record.inFlight--;
      // A full runner (or queue) looks again once half its slots are free: one fetch for many jobs, not one per job.
      const queueRoom = record.concurrency < this.concurrency && record.inFlight <= record.concurrency / 2;
      if (this.inFlight.size <= this.concurrency / 2 || queueRoom) this.wake?.();
    });
    this.inFlight.set(run, controller);
    return run;
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      let fetched = 0;
      try {
        const room = this.concurrency - this.inFlight.size;
        if (room > 0) fetched = (await this.fetchAndRun(room)).length;
      } catch (err) {
        this.logger.warn({ err: { message: (err as Error).message } }, 'job queue fetch failed');
      }
      if (this.stopping) break;
      // Full: wait for a slot. Found work: look again at once. Nothing due: wait for the poll interval.
      const full = this.inFlight.size >= this.concurrency;
      if (!full && fetched > 0) continue;
      await new Promise<void>((resolve) => {
        const timer = full ? undefined : setTimeout(resolve, this.pollIntervalMs);
        this.wake = () => {
          clearTimeout(timer);
          this.wake = undefined;
          resolve();
        };
      });
    }
  }

  private async run(queue: string, record: QueueRecord, sent: PgBoss.Job<Envelope<unknown>>, controller: AbortController): Promise<void> {
    // A job pg-boss's cron sent carries no first-due time: it is due from its first run.
    const job = sent.data.f ? sent : { ...sent, data: { ...sent.data, f: this.clock.now().toISOString() } };
    const envelope = job.data;
    const firstDueAt = new Date(envelope.f);
    const attempt = envelope.a;
    const log = { queue, jobId: job.id, attempt };
    try {
      if (this.clock.now().getTime() - firstDueAt.getTime() > this.giveUpAfterMs) {
        await this.giveUp(queue, job.id, log, 'due for longer than the limit');
        return;
      }
      const timer = setTimeout(() => controller.abort(new RetryLater('handler ran for half the queue expiry')), (record.expireInSeconds * 1000) / 2);
      try {
        const aborted = new Promise<never>((_, reject) => {
          controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true });
        });
        await Promise.race([record.handler(envelope.p, { id: job.id, attempt, firstDueAt, signal: controller.signal }), aborted]);
      } finally {
        clearTimeout(timer);
      }
      // Completed together with the other runs that finish in the same turn: one UPDATE for many jobs.
      await this.completeSoon(queue, job.id);
      this.outcomes?.inc({ queue, outcome: 'completed' });
    } catch (err) {
      try {
        await this.failed(queue, job, err as Error, log);
      } catch (e) {
        // The job stays active; after its expiry maintenance puts it back.
        this.logger.error({ ...log, err: { message: (e as Error).message } }, 'job outcome could not be recorded');
      }
    }
  }

  private async failed(queue: string, job: PgBoss.Job<Envelope<unknown>>, err: Error, log: object): Promise<void> {
    const envelope = job.data;
    if (err instanceof GiveUp) return this.giveUp(queue, job.id, log, err.message);
    if (err instanceof RunLater) {
      const due = new Date(this.clock.now().getTime() + err.delayMs).toISOString();
      return this.reschedule(queue, job, { ...envelope, f: due }, err.delayMs, 'deferred', log, err);
    }
    const backoff = Math.min(this.backoff.maxMs, this.backoff.baseMs * 2 ** (envelope.a - 1)) * (0.5 + this.random() / 2);
    const delayMs = Math.max(backoff, err instanceof RetryLater ? (err.retryAfterMs ?? 0) : 0);
    const firstDue = new Date(envelope.f).getTime();
    if (this.clock.now().getTime() + delayMs - firstDue > this.giveUpAfterMs) return this.giveUp(queue, job.id, log, err.message);
    const p = err instanceof RetryLater && err.nextData !== undefined ? err.nextData : envelope.p;
    await this.reschedule(queue, job, { ...envelope, p, a: envelope.a + 1 }, delayMs, 'retried', log, err);
  }

  /** Ends this run and schedules `next` in `delayMs`, in one transaction: never both, never neither. */
  private async reschedule(
    queue: string,
    job: PgBoss.Job<Envelope<unknown>>,
    next: Envelope<unknown>,
    delayMs: number,
    outcome: 'retried' | 'deferred',
    log: object,
    err: Error,
  ): Promise<void> {
    const rescheduled = await this.knex.transaction(async (trx) => {
      const db = knexDb(trx);
      // Only while the run is still ours: a job that outlived its expiry was put back and belongs to another runner now.
      const ended = await this.complete(queue, job.id, { [outcome]: true, error: err.message }, db);
      if (ended.affected === 0) return false;
      await this.boss.insert([{ name: queue, data: next, startAfter: `${Math.round(delayMs) / 1000} seconds` }], { db });
      return true;
    });
    if (!rescheduled) return this.logger.warn(log, 'job ended after its expiry had put it back; the other run stands');
    this.outcomes?.inc({ queue, outcome });
    if (outcome === 'retried') this.logger.info({ ...log, retryInMs: Math.round(delayMs), err: { message: err.message } }, 'job failed; retry scheduled');
  }

  /**
   * Ends a successful run together with every other run of the queue that succeeds before the
   * next turn of the event loop: one pg-boss `complete(name, ids)` statement for all of them. A
   * failed statement rejects every run of the batch: each then goes the way of a failed run
   * (rescheduled, which ends it on its own, only while it is still active).
   */
  private completeSoon(queue: string, id: string): Promise<void> {
    let batch = this.completing.get(queue);
    if (!batch) {
      const ids: string[] = [];
      const result = new Promise<void>((resolve, reject) => {
        setImmediate(() => {
          this.completing.delete(queue);
          this.complete(queue, ids).then((done) => {
            // Fewer than asked: runs that outlived their expiry were put back for another runner meanwhile (their work is done all the same).
            if (done.affected < ids.length)
              this.logger.warn({ queue, jobs: ids.length, completed: done.affected }, 'jobs finished after their expiry had put them back');
            resolve();
          }, reject);
        });
      });
      batch = { ids, result };
      this.completing.set(queue, batch);
    }
    batch.ids.push(id);
    return batch.result;
  }

  /** Ends an active run; answers how many runs it ended (0: the job is no longer active, so not this runner's). */
  private async complete(queue: string, id: string | string[], output?: object, db?: PgBoss.Db): Promise<{ affected: number }> {
    // pg-boss answers { jobs, requested, affected } though its types say void.
    // (Its types also leave out ids together with output; pg-boss takes either.)
    const complete = this.boss.complete.bind(this.boss) as (name: string, id: string | string[], data: object, options: object) => Promise<unknown>;
    const result = (await complete(queue, id, output ?? {}, db ? { db } : {})) as { affected: number };
    return result;
  }

  private async giveUp(queue: string, id: string, log: object, reason: string): Promise<void> {
    const ended = await this.complete(queue, id, { givenUp: true, error: reason });
    if (ended.affected === 0) return;
    this.givenUp?.inc({ queue });
    this.outcomes?.inc({ queue, outcome: 'given_up' });
    this.logger.error({ ...log, reason }, 'job given up');
  }
}

function queueGauge(registry: Registry, name: string, help: string, queues: () => string[], read: () => Promise<(queue: string) => number>): void {
  // Read at scrape time, one series per queue this instance defines; a failed read leaves the gauge unset rather than failing the scrape.
  new Gauge({
    name,
    help,
    labelNames: ['queue'],
    registers: [registry],
    async collect() {
      try {
        const value = await read();
        for (const queue of queues()) this.set({ queue }, value(queue));
      } catch {
        this.reset();
      }
    },
  });
}
