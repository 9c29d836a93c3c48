import { type ChildProcess, spawn } from 'node:child_process';
import { createKnex, type MigrationSet, rollbackMigrations, runMigrations } from '@svc/db';
import { ManualClock } from '@svc/http-kit';
import { createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { Registry } from 'prom-client';
import {
  createQueueMigration,
  GiveUp,
  type JobContext,
  JobQueue,
  type JobSource,
  type JobsLogger,
  migrations,
  RetryLater,
  RunLater,
  sourceMigrations,
} from '../src/index.js';

const QUEUE = 'test-work';
const testQueues: MigrationSet = { name: 'jobs_test', migrations: [createQueueMigration('20261127170100_test_queue', QUEUE, { expireInSeconds: 60 })] };

// A table of a "package" that declares: a row with a gate enqueues { n } on QUEUE, due at `due`; so does a row whose gate is set later.
const testTable: MigrationSet = {
  name: 'jobs_test_table',
  migrations: [
    {
      name: '20261127170200_test_rows',
      up: (knex) =>
        knex.raw(`create table jobs_test_rows (id uuid primary key default gen_random_uuid(), n int not null, gate text, due timestamptz, note text);
                  create table jobs_test_row_rows (id uuid primary key default gen_random_uuid(), n int not null, gate text, note text)`),
      down: (knex) => knex.raw('drop table jobs_test_rows; drop table jobs_test_row_rows'),
    },
  ],
};
/** The test tables' models: a job source names its table and columns by a model and its properties, as a declared read does. */
const TestRow = { tableName: 'jobs_test_rows' };
const TestRowRow = { tableName: 'jobs_test_row_rows' };
const testSource: JobSource = { model: TestRow, queue: QUEUE, payload: { n: 'n' }, due: 'due', whenNotNull: 'gate', onUpdateOf: ['gate'] };
// The same on a row trigger: only an UPDATE that changes the gate runs anything; inserts never enqueue.
const rowSource: JobSource = {
  model: TestRowRow,
  queue: QUEUE,
  payload: { n: 'n' },
  whenNotNull: 'gate',
  onUpdateOf: ['gate'],
  rowLevelUpdate: true,
  onInsert: false,
};

function recordingLogger() {
  const lines: { level: string; obj: object; msg?: string }[] = [];
  const logger: JobsLogger = {
    info: (obj, msg) => lines.push({ level: 'info', obj, msg }),
    warn: (obj, msg) => lines.push({ level: 'warn', obj, msg }),
    error: (obj, msg) => lines.push({ level: 'error', obj, msg }),
  };
  return { lines, logger };
}

describe('jobs: the PostgreSQL job queue', () => {
  let db: TestDatabase;
  // The tests' instant is PostgreSQL's own now() (to the second), read once: pg-boss compares due
  // times with the database's clock, so a fixed calendar date would drift away from it as days pass.
  let T0 = '';
  const at = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();
  const clock = new ManualClock('2000-01-01T00:00:00.000Z');
  const queues: JobQueue[] = [];
  const knexes: Knex[] = [];
  const children: ChildProcess[] = [];

  function newQueue(handler: (data: { n: number }, ctx: JobContext) => Promise<void>, options: { knex?: Knex; registry?: Registry; logger?: JobsLogger } = {}) {
    const q = new JobQueue({
      knex: options.knex ?? db.knex,
      clock,
      logger: options.logger ?? recordingLogger().logger,
      registry: options.registry,
      random: () => 0.5,
    });
    q.define(QUEUE, handler, { expireInSeconds: 60 });
    queues.push(q);
    return q;
  }
  const jobs = () =>
    db.knex
      .raw(`select id, state, data, output, extract(epoch from start_after - now())::float8 as due_in from pgboss.job where name = ? order by created_on`, [
        QUEUE,
      ])
      .then((r) => r.rows);

  before(async () => {
    db = await createTestDatabase([migrations, testQueues, testTable, sourceMigrations([testSource, rowSource])]);
    T0 = new Date((await db.knex.raw(`select date_trunc('second', now()) as t`)).rows[0].t).toISOString();
  });
  beforeEach(() => clock.set(T0));
  afterEach(async () => {
    await Promise.all(
      children.splice(0).map((c) => {
        if (c.exitCode !== null || c.signalCode !== null) return undefined;
        const gone = new Promise((r) => c.once('exit', r));
        c.kill('SIGKILL');
        return gone;
      }),
    );
    await Promise.all(queues.splice(0).map((q) => q.stop(1000)));
    await db.knex.raw('delete from pgboss.job; delete from pgboss.archive; delete from jobs_test_rows; delete from jobs_test_row_rows');
  });
  after(async () => {
    await Promise.all(knexes.map((k) => k.destroy()));
    await db.destroy();
  });

  it('migrations run up, down and up again (pg-boss schema and a queue)', async () => {
    await rollbackMigrations(db.knex, [migrations, testQueues]);
    expect((await db.knex.raw(`select 1 from pg_namespace where nspname = 'pgboss'`)).rows).to.have.length(0);
    await runMigrations(db.knex, [migrations, testQueues]);
    // pg-boss's cron queue comes with the schema, so pg-boss creates nothing at run time.
    expect((await db.knex.raw(`select name from pgboss.queue`)).rows.map((r: { name: string }) => r.name)).to.have.members([QUEUE, '__pgboss__send-it']);
  });

  it('enqueues inside the caller transaction: a rollback leaves no job, a commit leaves exactly one', async () => {
    const ran: number[] = [];
    const q = newQueue(async (d) => {
      ran.push(d.n);
    });
    await db.knex
      .transaction(async (trx) => {
        await q.enqueue(QUEUE, { n: 1 }, { trx });
        throw new Error('the change fails');
      })
      .catch(() => {});
    expect(await jobs()).to.have.length(0);
    await db.knex.transaction(async (trx) => {
      await q.enqueue(QUEUE, { n: 2 }, { trx });
      // Not visible outside the transaction until it commits.
      expect((await db.knex.raw('select count(*)::int as n from pgboss.job')).rows[0].n).to.equal(0);
    });
    expect(await q.runDue()).to.equal(1);
    expect(ran).to.deep.equal([2]);
    expect((await jobs())[0].state).to.equal('completed');
  });

  it('completes the runs of a fetched batch that succeed together in one statement; a failing one is retried on its own', async () => {
    const q = newQueue(async (d) => {
      if (d.n === 3) throw new Error('provider answered 503');
    });
    await q.enqueueMany(
      QUEUE,
      Array.from({ length: 8 }, (_, i) => ({ n: i })),
    );
    const statements: string[] = [];
    const onQuery = (query: { sql: string }) => statements.push(query.sql);
    db.knex.on('query', onQuery);
    try {
      expect(await q.runDue(QUEUE)).to.equal(8);
    } finally {
      db.knex.off('query', onQuery);
    }
    // pg-boss's completeJobs statement: once for the seven that succeeded (plus once inside the failed run's retry).
    const completions = statements.filter((sql) => /SET completed_on = now\(\),\s+state = 'completed'/.test(sql));
    expect(completions).to.have.length(2);
    const rows = await jobs();
    const states = rows.map((r: { state: string; data: { p: { n: number }; a: number } }) => `${r.data.p.n}:${r.data.a}:${r.state}`).sort();
    expect(states).to.deep.equal([
      '0:1:completed',
      '1:1:completed',
      '2:1:completed',
      '3:1:completed',
      '3:2:created',
      '4:1:completed',
      '5:1:completed',
      '6:1:completed',
      '7:1:completed',
    ]);
  });

  it('retries with exponential backoff, and never sooner than Retry-After', async () => {
    const attempts: number[] = [];
    const q = newQueue(async (_d, ctx) => {
      attempts.push(ctx.attempt);
      if (ctx.attempt === 1) throw new Error('provider answered 503');
      if (ctx.attempt === 2) throw new RetryLater('provider answered 429', 120_000);
    });
    await q.enqueue(QUEUE, { n: 1 });
    await q.runDue();
    let rows = await jobs();
    expect(rows.map((r: { state: string }) => r.state)).to.deep.equal(['completed', 'created']);
    // First retry: base 2 s, jitter 0.5 → 1.5 s.
    expect(rows[1].due_in).to.be.within(1.3, 1.6);
    expect(rows[1].data).to.include({ a: 2 });
    await db.knex.raw(`update pgboss.job set start_after = now() - interval '1 second' where state = 'created'`);
    await q.runDue();
    rows = await jobs();
    // Backoff would be 3 s; Retry-After says 120 s.
    expect(rows[2].due_in).to.be.within(119, 120.1);
    await db.knex.raw(`update pgboss.job set start_after = now() - interval '1 second' where state = 'created'`);
    await q.runDue();
    expect(attempts).to.deep.equal([1, 2, 3]);
    expect((await jobs()).map((r: { state: string }) => r.state)).to.deep.equal(['completed', 'completed', 'completed']);
  });

  it('retries with the data a RetryLater names (the work still left), keeping the first due time', async () => {
    const seen: { n: number; attempt: number }[] = [];
    const q = newQueue(async (d, ctx) => {
      seen.push({ n: d.n, attempt: ctx.attempt });
      if (ctx.attempt === 1) throw new RetryLater('two of three done', 30_000, { n: d.n - 2 });
    });
    await q.enqueue(QUEUE, { n: 3 });
    await q.runDue();
    const rows = await jobs();
    expect(rows.map((r: { state: string }) => r.state)).to.deep.equal(['completed', 'created']);
    expect(rows[1].data).to.deep.equal({ p: { n: 1 }, a: 2, f: T0 });
    expect(rows[1].due_in).to.be.within(29, 30.1);
    await db.knex.raw(`update pgboss.job set start_after = now() - interval '1 second' where state = 'created'`);
    await q.runDue();
    expect(seen).to.deep.equal([
      { n: 3, attempt: 1 },
      { n: 1, attempt: 2 },
    ]);
  });

  it('runs a deferred job later without counting an attempt (RunLater)', async () => {
    const seen: number[] = [];
    const q = newQueue(async (_d, ctx) => {
      seen.push(ctx.attempt);
      if (seen.length === 1) throw new RunLater(8 * 3_600_000);
    });
    await q.enqueue(QUEUE, { n: 1 });
    await q.runDue();
    const rows = await jobs();
    expect(rows[1].due_in).to.be.within(8 * 3600 - 2, 8 * 3600 + 0.1);
    expect(rows[1].data).to.include({ a: 1, f: at(8 * 3_600_000) });
    // 23 hours later the day's limit still has 9 hours to go: it counts from the new time.
    clock.advance(23 * 3_600_000);
    await db.knex.raw(`update pgboss.job set start_after = now() - interval '1 second' where state = 'created'`);
    await q.runDue();
    expect(seen).to.deep.equal([1, 1]);
    expect((await jobs()).map((r: { state: string }) => r.state)).to.deep.equal(['completed', 'completed']);
  });

  it('gives a job up a day after it first became due: logged and counted', async () => {
    const registry = new Registry();
    const { lines, logger } = recordingLogger();
    const q = newQueue(
      async () => {
        throw new RetryLater('still down', 3_600_000);
      },
      { registry, logger },
    );
    await q.enqueue(QUEUE, { n: 1 });
    await q.runDue();
    clock.advance(23 * 3_600_000 + 60_000);
    await db.knex.raw(`update pgboss.job set start_after = now() - interval '1 second' where state = 'created'`);
    // 23 h 1 min + the next hour's Retry-After passes the day: given up instead of rescheduled.
    await q.runDue();
    const rows = await jobs();
    expect(rows.map((r: { state: string }) => r.state)).to.deep.equal(['completed', 'completed']);
    expect(rows[1].output).to.include({ givenUp: true });
    expect(lines.filter((l) => l.level === 'error' && l.msg === 'job given up')).to.have.length(1);
    const text = await registry.metrics();
    expect(text).to.match(/jobs_given_up_total\{queue="test-work"\} 1/);
  });

  it('gives up at once on GiveUp, and reports depth and oldest age', async () => {
    const registry = new Registry();
    const q = newQueue(
      async () => {
        throw new GiveUp('the device is gone');
      },
      { registry },
    );
    // First due 30 s ago, by the test's clock and the database's alike.
    clock.set(at(-30_000));
    await q.enqueueMany(QUEUE, [{ n: 1 }, { n: 2 }, { n: 3 }]);
    clock.set(T0);
    await db.knex.raw(`update pgboss.job set start_after = now() - interval '30 seconds'`);
    const before = await registry.metrics();
    expect(before).to.match(/jobs_queued\{queue="test-work"\} 3/);
    expect(Number(/jobs_oldest_due_age_seconds\{queue="test-work"\} ([\d.]+)/.exec(before)![1])).to.be.within(29, 60);
    expect(Number(/jobs_oldest_unfinished_age_seconds\{queue="test-work"\} ([\d.]+)/.exec(before)![1])).to.be.within(29, 60);
    await q.runDue();
    const after = await registry.metrics();
    expect(after).to.match(/jobs_queued\{queue="test-work"\} 0/);
    expect(after).to.match(/jobs_oldest_due_age_seconds\{queue="test-work"\} 0/);
    expect(after).to.match(/jobs_oldest_unfinished_age_seconds\{queue="test-work"\} 0/);
    expect(after).to.match(/jobs_given_up_total\{queue="test-work"\} 3/);
  });

  it('two runners in parallel run every job once and never one job twice at once', async () => {
    const running = new Set<number>();
    const ranBy = new Map<number, number>();
    let overlaps = 0;
    const handler = (runner: number) => async (d: { n: number }) => {
      if (running.has(d.n)) overlaps++;
      running.add(d.n);
      await new Promise((r) => setImmediate(r));
      running.delete(d.n);
      if (ranBy.has(d.n)) overlaps++;
      ranBy.set(d.n, runner);
    };
    const knexA = createKnex(db.url, { poolMax: 4 });
    const knexB = createKnex(db.url, { poolMax: 4 });
    knexes.push(knexA, knexB);
    const a = newQueue(handler(1), { knex: knexA });
    const b = newQueue(handler(2), { knex: knexB });
    await a.enqueueMany(
      QUEUE,
      Array.from({ length: 400 }, (_, n) => ({ n })),
    );
    const [ranA, ranB] = await Promise.all([a.runDue(), b.runDue()]);
    expect(overlaps).to.equal(0);
    expect(ranBy.size).to.equal(400);
    expect(ranA + ranB).to.equal(400);
    // Both took part (the batches interleave).
    expect(ranA).to.be.greaterThan(0);
    expect(ranB).to.be.greaterThan(0);
  });

  it('a runner killed mid-job: after the expiry another instance finishes the job', async function () {
    this.timeout(60_000);
    const id = await db.knex.transaction((trx) => new JobQueue({ knex: db.knex, clock, logger: recordingLogger().logger }).enqueue(QUEUE, { n: 7 }, { trx }));
    // Another process takes the job and hangs in its handler; it is killed with SIGKILL (no clean-up of any kind).
    const script = `
      import { createKnex } from '@svc/db';
      import { JobQueue } from '@svc/jobs';
      const knex = createKnex(process.env.DB_URL, { poolMax: 2 });
      // The test's own instant, not this process's wall clock: a fixed date must never meet a real clock.
      const q = new JobQueue({ knex, clock: { now: () => new Date(process.env.NOW) }, logger: { info() {}, warn() {}, error() {} }, pollIntervalMs: 50 });
      q.define('${QUEUE}', async (d, ctx) => { process.stdout.write('started ' + ctx.id + '\\n'); await new Promise(() => {}); }, { expireInSeconds: 60 });
      await q.start();
    `;
    const child = spawn(process.execPath, ['--import', 'tsx/esm', '--conditions=source', '--input-type=module', '-e', script], {
      env: { ...process.env, DB_URL: db.url, NOW: clock.now().toISOString() },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    // Killed when the test ends, pass or fail: a runner left behind would take the next tests' jobs.
    children.push(child);
    const started = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (b: Buffer) => {
        const m = /started (\S+)/.exec(b.toString());
        if (m) resolve(m[1]!);
      });
      child.once('exit', (code) => reject(new Error(`runner exited early (${code})`)));
    });
    expect(started).to.equal(id);
    child.kill('SIGKILL');
    await exited;
    expect((await jobs())[0].state).to.equal('active');

    const ran: string[] = [];
    const b = newQueue(async (_d, ctx) => {
      ran.push(ctx.id);
    });
    // Not before its expiry: the job is still the dead runner's.
    await b.expireAbandoned();
    expect(await b.runDue()).to.equal(0);
    // The expiry passes (moved in the database instead of waited for).
    await db.knex.raw(`update pgboss.job set started_on = now() - interval '61 seconds' where id = ?`, [id]);
    await b.expireAbandoned();
    expect(await b.runDue()).to.equal(1);
    expect(ran).to.deep.equal([id]);
    expect((await jobs()).map((r: { state: string }) => r.state)).to.deep.equal(['completed']);
  });

  it('start runs due jobs in the background, and stop waits for the handler in flight', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const seen: number[] = [];
    let entered!: () => void;
    const inHandler = new Promise<void>((r) => {
      entered = r;
    });
    const q = new JobQueue({ knex: db.knex, clock, logger: recordingLogger().logger, pollIntervalMs: 20 });
    // Stopped by afterEach when the test fails: a runner left going would take the next tests' jobs.
    queues.push(q);
    q.define(
      QUEUE,
      async (d: { n: number }) => {
        entered();
        await gate;
        seen.push(d.n);
      },
      { expireInSeconds: 60 },
    );
    await q.enqueue(QUEUE, { n: 5 });
    await q.start();
    await inHandler;
    const stopped = q.stop(5000);
    release();
    await stopped;
    expect(seen).to.deep.equal([5]);
    expect((await jobs())[0].state).to.equal('completed');
  });

  it("a periodic task is pg-boss's schedule(): written at start, once for the cluster; the job its cron sends runs with its first due time from the injected clock", async () => {
    const seen: { n: number; firstDueAt: string }[] = [];
    const a = newQueue(async (data, ctx) => void seen.push({ n: data.n, firstDueAt: ctx.firstDueAt.toISOString() }));
    const b = newQueue(async () => {});
    const undefinedQueue = await new JobQueue({ knex: db.knex, clock, logger: recordingLogger().logger })
      .schedule('not-defined', '* * * * *')
      .catch((e: Error) => e);
    expect((undefinedQueue as Error | undefined)?.message).to.match(/define not-defined before scheduling it/);
    await a.schedule(QUEUE, '0 * * * *', { n: 7 });
    await b.schedule(QUEUE, '0 * * * *', { n: 7 });
    expect((await db.knex.raw('select count(*)::int as n from pgboss.schedule')).rows[0].n, 'not before start').to.equal(0);
    await Promise.all([a.start(), b.start()]);
    const rows = (await db.knex.raw('select name, cron, timezone, data from pgboss.schedule')).rows;
    expect(rows).to.deep.equal([{ name: QUEUE, cron: '0 * * * *', timezone: 'UTC', data: { p: { n: 7 }, a: 1 } }]);
    await Promise.all([a.stop(), b.stop()]);
    // What pg-boss's cron inserts at a cron time: the schedule's data as the job's (no first-due time).
    await db.knex.raw(`insert into pgboss.job (id, name, data) values (gen_random_uuid(), ?, ?::jsonb)`, [QUEUE, JSON.stringify(rows[0].data)]);
    clock.set(at(90_000));
    expect(await a.runDue()).to.equal(1);
    expect(seen).to.deep.equal([{ n: 7, firstDueAt: at(90_000) }]);
    await db.knex.raw('delete from pgboss.schedule');
  });

  it("a queue's own concurrency: never more of its handlers in flight at once on the instance, every job still run", async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => {
      open = r;
    });
    let current = 0;
    let most = 0;
    const done: number[] = [];
    let twoIn!: () => void;
    const twoEntered = new Promise<void>((r) => {
      twoIn = r;
    });
    let allDone!: () => void;
    const finished = new Promise<void>((r) => {
      allDone = r;
    });
    const q = new JobQueue({ knex: db.knex, clock, logger: recordingLogger().logger, pollIntervalMs: 20 });
    queues.push(q);
    q.define(
      QUEUE,
      async (d: { n: number }) => {
        current++;
        most = Math.max(most, current);
        if (current === 2) twoIn();
        await gate;
        current--;
        done.push(d.n);
        if (done.length === 5) allDone();
      },
      { expireInSeconds: 60, concurrency: 2 },
    );
    // One fetch could take all five (the runner's own limit is 32): the queue's limit of 2 holds them back.
    await q.enqueueMany(
      QUEUE,
      [1, 2, 3, 4, 5].map((n) => ({ n })),
    );
    await q.start();
    await twoEntered;
    open();
    await finished;
    expect(most).to.equal(2);
    expect(done.sort()).to.deep.equal([1, 2, 3, 4, 5]);
  });

  it('a declared enqueue-on-write: the writing statement makes the job (gated, due at its column), and pg-boss itself fetches and completes it', async () => {
    const ran: { n: number; firstDueAt: string }[] = [];
    const q = newQueue(async (d, ctx) => {
      ran.push({ n: d.n, firstDueAt: ctx.firstDueAt.toISOString() });
    });
    // One statement, three rows: two pass the gate (one due now, one in an hour), one does not.
    await db.knex.raw(
      `insert into jobs_test_rows (n, gate, due) values (1, 'y', now() - interval '1 second'), (2, 'y', now() + interval '1 hour'), (3, null, now())`,
    );
    // A statement that writes no row, and one rolled back, make no job.
    await db.knex.raw(`insert into jobs_test_rows (n, gate) select 9, 'y' where false`);
    await db.knex
      .transaction(async (trx) => {
        await trx.raw(`insert into jobs_test_rows (n, gate, due) values (8, 'y', now())`);
        await trx.rollback();
      })
      .catch(() => undefined);
    const made = await db.knex.raw(
      `select data, state, extract(epoch from start_after - now())::float8 as due_in, expire_in, retry_limit, retry_delay, retry_backoff, policy,
              extract(epoch from keep_until - start_after)::float8 as kept from pgboss.job where name = ? order by (data->'p'->>'n')::int`,
      [QUEUE],
    );
    expect(made.rows.map((r: { data: { p: unknown; a: number } }) => [r.data.p, r.data.a])).to.deep.equal([
      [{ n: 1 }, 1],
      [{ n: 2 }, 1],
    ]);
    // The same settings as a job pg-boss's own insert makes on this queue.
    await q.enqueue(QUEUE, { n: 100 });
    const own = (
      await db.knex.raw(
        `select expire_in, retry_limit, retry_delay, retry_backoff, policy, extract(epoch from keep_until - start_after)::float8 as kept from pgboss.job where data->'p'->>'n' = '100'`,
      )
    ).rows[0];
    for (const row of made.rows)
      expect({ ...row, data: undefined, state: undefined, due_in: undefined }).to.deep.equal({ ...own, data: undefined, state: undefined, due_in: undefined });
    expect(made.rows[1].due_in).to.be.within(3500, 3600);
    await db.knex.raw(`delete from pgboss.job where data->'p'->>'n' = '100'`);

    expect(await q.runDue()).to.equal(1);
    expect(ran.map((r) => r.n)).to.deep.equal([1]);
    // The first-due instant the handler sees is the row's column (the day's limit counts from it).
    const due1 = (await db.knex.raw(`select due from jobs_test_rows where n = 1`)).rows[0].due as Date;
    expect(ran[0]!.firstDueAt).to.equal(new Date(Math.floor(due1.getTime())).toISOString());
    const states = await db.knex.raw(`select data->'p'->>'n' as n, state from pgboss.job where name = ? order by 1`, [QUEUE]);
    expect(states.rows).to.deep.equal([
      { n: '1', state: 'completed' },
      { n: '2', state: 'created' },
    ]);

    // An UPDATE that sets the gate enqueues; one that changes another column does not.
    await db.knex.raw(`update jobs_test_rows set note = 'x'`);
    await db.knex.raw(`update jobs_test_rows set gate = 'now', due = now() where n = 3`);
    expect(await q.runDue()).to.equal(1);
    expect(ran.map((r) => r.n)).to.deep.equal([1, 3]);
  });

  it('a row-level UPDATE source (rowLevelUpdate): one job per row whose column changed, none for other updates, inserts or rollbacks', async () => {
    const triggers = await db.knex.raw(
      `select tgname, (tgtype & 1) = 1 as per_row, tgqual is not null as has_when from pg_trigger where tgrelid = 'jobs_test_row_rows'::regclass and not tgisinternal`,
    );
    expect(triggers.rows).to.deep.equal([{ tgname: 'jobs_enqueue_jobs_test_row_rows_test_work_update', per_row: true, has_when: true }]);
    const ran: number[] = [];
    const q = newQueue(async (d) => {
      ran.push(d.n);
    });
    await db.knex.raw(`insert into jobs_test_row_rows (n, gate) values (1, 'a'), (2, 'a'), (3, null), (4, 'a')`);
    await db.knex.raw(`update jobs_test_row_rows set note = 'x'`);
    await db.knex.raw(`update jobs_test_row_rows set gate = 'a' where n in (1, 2)`);
    expect(await jobs()).to.have.length(0);
    // One statement changing three rows' gate: three jobs (the row whose gate becomes null passes no gate).
    await db.knex.raw(`update jobs_test_row_rows set gate = case n when 4 then null else 'b' end`);
    await db.knex
      .transaction(async (trx) => {
        await trx.raw(`update jobs_test_row_rows set gate = 'c' where n = 1`);
        await trx.rollback();
      })
      .catch(() => undefined);
    expect(await q.runDue()).to.equal(3);
    expect(ran.sort()).to.deep.equal([1, 2, 3]);
  });
});
