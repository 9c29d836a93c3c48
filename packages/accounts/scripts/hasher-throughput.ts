/**
 * Which way of running bcrypt off the main thread is fastest, and what does each cost the main
 * thread? Not a test (speed is never asserted by a test): a measurement to run by hand, ideally on
 * an idle machine. It compares, at the production cost (12) with a fixed number of jobs in flight:
 *
 *   a. bcryptjs in a hand-written worker_threads pool: one job per worker, posted as a message
 *      (what PasswordHasher did before it moved to @node-rs/bcrypt; reproduced here, inline);
 *   b. bcryptjs in piscina (scripts/bcryptjs-task.mjs);
 *   c. @node-rs/bcrypt's async API (native bcrypt on libuv's threadpool).
 *
 * For each it prints hashes/s, verifications/s and the main thread's event-loop delay meanwhile
 * (perf_hooks.monitorEventLoopDelay: p50, p99 and max of how late a 5 ms timer fired, the 5 ms
 * themselves subtracted, so an idle loop reads about 0), and the CPU time the process spent per
 * job in all its threads (process.cpuUsage: it counts worker threads and libuv's threads alike),
 * which a loaded machine disturbs much less than the rates. The
 * candidates run in rounds, in a rotated order each round, so that drift of a shared machine hits
 * them alike; the summary gives medians over the rounds, with the 1-minute load average.
 * Before timing, it checks that the three agree: @node-rs/bcrypt verifies bcryptjs's `$2b$` and
 * `$2a$` hashes and bcryptjs verifies @node-rs/bcrypt's.
 *
 *   cd packages/accounts
 *   npm run hasher-throughput -- --rounds 5 --jobs 8 --concurrency 2
 *
 * Options: --rounds (default 3) · --jobs per operation per round (default 8) · --concurrency jobs
 * in flight, also the pool size (default 2) · --cost (default 12).
 */
import { createRequire } from 'node:module';
import os from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import * as native from '@node-rs/bcrypt';
import bcryptjs from 'bcryptjs';
import { Piscina } from 'piscina';
import { prehash } from '../src/PasswordHasher.js';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    jobs: { type: 'string', default: '8' },
    concurrency: { type: 'string', default: '2' },
    cost: { type: 'string', default: '12' },
  },
});
const ROUNDS = Number(args.rounds);
const JOBS = Number(args.jobs);
const CONCURRENCY = Number(args.concurrency);
const COST = Number(args.cost);
const RESOLUTION_MS = 5;

interface Candidate {
  name: string;
  hash(input: string): Promise<string>;
  verify(input: string, hash: string): Promise<boolean>;
  close(): Promise<void>;
}

interface Job {
  id: number;
  op: 'hash' | 'verify';
  input: string;
  cost: number;
  hash?: string;
}

/** (a) The hand-written pool, reduced to what costs time: a fixed set of workers, one message per job. */
function handWrittenPool(size: number): Candidate {
  const bcryptPath = createRequire(import.meta.url).resolve('bcryptjs');
  const code = `
    const { parentPort } = require('node:worker_threads');
    const bcrypt = require(${JSON.stringify(bcryptPath)});
    parentPort.on('message', (job) => parentPort.postMessage({ id: job.id,
      result: job.op === 'hash' ? bcrypt.hashSync(job.input, job.cost) : bcrypt.compareSync(job.input, job.hash) }));`;
  const idle: Worker[] = [];
  const waiting: Array<(w: Worker) => void> = [];
  const pending = new Map<number, (v: string | boolean) => void>();
  for (let i = 0; i < size; i++) {
    const w = new Worker(code, { eval: true });
    w.on('message', ({ id, result }: { id: number; result: string | boolean }) => {
      pending.get(id)?.(result);
      pending.delete(id);
      const next = waiting.shift();
      if (next) next(w);
      else idle.push(w);
    });
    idle.push(w);
  }
  let nextId = 1;
  const run = async (job: Omit<Job, 'id'>) => {
    const w = idle.pop() ?? (await new Promise<Worker>((resolve) => waiting.push(resolve)));
    const id = nextId++;
    return new Promise<string | boolean>((resolve) => {
      pending.set(id, resolve);
      w.postMessage({ ...job, id });
    });
  };
  const all = [...idle];
  return {
    name: 'a. bcryptjs, hand-written worker pool',
    hash: async (input) => (await run({ op: 'hash', input, cost: COST })) as string,
    verify: async (input, hash) => (await run({ op: 'verify', input, cost: COST, hash })) as boolean,
    close: async () => {
      await Promise.all(all.map((w) => w.terminate()));
    },
  };
}

/** (b) bcryptjs in piscina. */
function piscinaPool(size: number): Candidate {
  const pool = new Piscina({ filename: new URL('./bcryptjs-task.mjs', import.meta.url).href, minThreads: size, maxThreads: size });
  return {
    name: 'b. bcryptjs, piscina',
    hash: (input) => pool.run({ op: 'hash', input, cost: COST }),
    verify: (input, hash) => pool.run({ op: 'verify', input, cost: COST, hash }),
    close: () => pool.destroy(),
  };
}

/** (c) @node-rs/bcrypt: no pool of ours; the driver below keeps CONCURRENCY jobs in flight. */
function nativeBinding(): Candidate {
  return {
    name: 'c. @node-rs/bcrypt (libuv threadpool)',
    hash: (input) => native.hash(input, { cost: COST }),
    verify: (input, hash) => native.verify(input, hash),
    close: async () => {},
  };
}

/** Runs `jobs` calls of `fn`, `concurrency` at a time; returns jobs/s and the main thread's event-loop delay. */
async function measure(fn: (i: number) => Promise<unknown>) {
  const delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  const load = os.loadavg()[0]!;
  delay.enable();
  const cpu = process.cpuUsage();
  const start = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < JOBS) await fn(next++);
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  delay.disable();
  if (delay.count === 0) throw new Error('the run was shorter than the loop-delay timer: raise --jobs or --cost');
  const ms = (ns: number) => Math.max(0, ns / 1e6 - RESOLUTION_MS);
  return {
    perSecond: JOBS / seconds,
    cpuMs: (used.user + used.system) / 1000 / JOBS,
    p50: ms(delay.percentile(50)),
    p99: ms(delay.percentile(99)),
    max: ms(delay.max),
    load,
  };
}

function median(values: number[]): number {
  const s = [...values].sort((x, y) => x - y);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

async function checkCompatibility(): Promise<void> {
  const input = prehash('correct horse battery staple');
  const b2b = bcryptjs.hashSync(input, 4);
  const b2a = bcryptjs.hashSync(input, bcryptjs.genSaltSync(4).replace('$2b$', '$2a$'));
  const n2b = await native.hash(input, { cost: 4 });
  const checks = {
    'bcryptjs $2b$ hash verified by @node-rs/bcrypt': b2b.startsWith('$2b$') && (await native.verify(input, b2b)),
    'bcryptjs $2a$ hash verified by @node-rs/bcrypt': b2a.startsWith('$2a$') && (await native.verify(input, b2a)),
    'wrong password refused by @node-rs/bcrypt': !(await native.verify(prehash('wrong'), b2b)),
    '@node-rs/bcrypt writes $2b$, verified by bcryptjs': n2b.startsWith('$2b$04$') && bcryptjs.compareSync(input, n2b),
  };
  for (const [what, ok] of Object.entries(checks)) console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (Object.values(checks).includes(false)) process.exit(1);
}

type Row = Awaited<ReturnType<typeof measure>>;

async function main() {
  console.log(
    `node ${process.version}, ${os.availableParallelism()} CPUs, cost ${COST}, ${CONCURRENCY} in flight, ${JOBS} jobs per operation, ${ROUNDS} rounds`,
  );
  await checkCompatibility();
  const candidates = [handWrittenPool(CONCURRENCY), piscinaPool(CONCURRENCY), nativeBinding()];
  const stored = await bcryptjs.hash(prehash('stored'), COST);
  // Warm up: threads started, code compiled; not measured.
  for (const c of candidates) await Promise.all(Array.from({ length: CONCURRENCY }, () => c.verify(prehash('stored'), stored)));
  const results = new Map<string, { hash: Row[]; verify: Row[] }>(candidates.map((c) => [c.name, { hash: [], verify: [] }]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = candidates.map((_, i) => candidates[(i + round) % candidates.length]!);
    for (const c of order) {
      const h = await measure((i) => c.hash(prehash(`password ${round} ${i}`)));
      const v = await measure((i) => c.verify(prehash(i % 2 ? 'stored' : 'wrong'), stored));
      results.get(c.name)!.hash.push(h);
      results.get(c.name)!.verify.push(v);
      const f = (r: Row) =>
        `${r.perSecond.toFixed(2)}/s, ${r.cpuMs.toFixed(0)} ms CPU each, loop delay p50 ${r.p50.toFixed(1)} p99 ${r.p99.toFixed(1)} max ${r.max.toFixed(1)} ms, load ${r.load.toFixed(2)}`;
      console.log(`round ${round + 1}  ${c.name.padEnd(40)} hash ${f(h)} | verify ${f(v)}`);
    }
  }
  await Promise.all(candidates.map((c) => c.close()));
  console.log(`\nmedians over ${ROUNDS} rounds:`);
  console.log('| candidate | hashes/s | verify/s | CPU ms per hash / verify | loop delay p99 (ms) hash / verify | max (ms) | load avg |');
  console.log('|---|---|---|---|---|---|---|');
  for (const [name, { hash, verify }] of results) {
    const m = (rows: Row[], k: keyof Row) => median(rows.map((r) => r[k]));
    console.log(
      `| ${name} | ${m(hash, 'perSecond').toFixed(2)} | ${m(verify, 'perSecond').toFixed(2)} | ${m(hash, 'cpuMs').toFixed(0)} / ${m(verify, 'cpuMs').toFixed(0)} | ${m(hash, 'p99').toFixed(1)} / ${m(verify, 'p99').toFixed(1)} | ${Math.max(m(hash, 'max'), m(verify, 'max')).toFixed(1)} | ${median([...hash, ...verify].map((r) => r.load)).toFixed(2)} |`,
    );
  }
}

await main();
