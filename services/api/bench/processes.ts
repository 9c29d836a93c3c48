/** The measured processes (each a whole event loop of its own, told what to do over IPC: harness.ts) and the child benches. */
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVICE_ENV, SERVICE_NODE_FLAGS } from '../src/heap.js';
import type { ChildStats, HarnessRequest } from './harness.js';
import { args, log, num, opts } from './options.js';

// Compiled (npm run bench: bench/dist/bench/*.js, run by plain node like production) or under tsx.
const here = path.dirname(fileURLToPath(import.meta.url));
const ext = path.extname(fileURLToPath(import.meta.url));

// The fan-out scenario (issue 32): push deliveries to the local FCM fake from one and two job-runner
// processes, on a database of its own (bench/background.ts prints its table and verdicts). Last, after
// the HTTP scenarios' processes have stopped: its 1,000 households' writes leave PostgreSQL busy
// (autovacuum, dirty buffers) for a while, which measured ahead of them cost the reads up to half
// their rate. `--only fan-out` runs it alone.
export async function fanOut(): Promise<number> {
  const fanOutArgs = ['--fanout-households', String(num(args['fanout-households'], 1000)), '--fanout-latency-ms', String(num(args['fanout-latency-ms'], 50))];
  const child = fork(path.join(here, `background${ext}`), ['--only', 'fan-out', ...fanOutArgs], {
    execArgv: process.execArgv,
    stdio: 'inherit',
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) log(`fan-out scenario exited with ${code}`);
  return code ?? 1;
}
// The planner (issue 46): CPU per run beside the bare solve, and a queue of runs drained (bench/planner.ts). `--only planner` runs it alone.
export async function plannerBench(): Promise<number> {
  const child = fork(path.join(here, `planner${ext}`), process.argv.slice(2), { execArgv: process.execArgv, stdio: 'inherit' });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) log(`planner scenario exited with ${code}`);
  return code ?? 1;
}

const sessionSecret = randomBytes(36).toString('base64url');

/** A request to the harness without its id (App.ask numbers it). */
type HarnessMessage = HarnessRequest extends infer R ? (R extends unknown ? Omit<R, 'id'> : never) : never;

export class App {
  private pending = new Map<number, (v: unknown) => void>();
  private nextId = 1;
  private constructor(
    readonly name: string,
    readonly proc: ChildProcess,
    readonly base: string,
  ) {
    proc.on('message', (msg: { id: number }) => {
      this.pending.get(msg.id)?.(msg);
      this.pending.delete(msg.id);
    });
  }

  /**
   * Waits until the process is idle: less than 5 % of a core (all its threads: bcrypt's included)
   * over 500 ms. False when it is still busy after 30 s.
   */
  async waitIdle(): Promise<boolean> {
    const sliceMs = 500;
    let last = await this.stats();
    for (let waited = 0; waited < 30_000; waited += sliceMs) {
      await new Promise((resolve) => setTimeout(resolve, sliceMs));
      const now = await this.stats();
      const cpuMs = (now.cpu.user - last.cpu.user + now.cpu.system - last.cpu.system) / 1000;
      if (cpuMs < 0.05 * sliceMs) return true;
      last = now;
    }
    return false;
  }

  static async start(name: string, file: string, databaseUrl: string, cpuProfile?: string): Promise<App> {
    const execArgv = [...process.execArgv];
    // The service runs as `npm start` runs it; BENCH_SERVICE_FLAGS come after, so they can override.
    if (file === 'serve-service') execArgv.push(...SERVICE_NODE_FLAGS);
    if (file === 'serve-service' && process.env.BENCH_SERVICE_FLAGS) execArgv.push(...process.env.BENCH_SERVICE_FLAGS.split(' '));
    if (cpuProfile && opts.profile) execArgv.push('--cpu-prof', `--cpu-prof-dir=${opts.profile}`, `--cpu-prof-name=${cpuProfile}.cpuprofile`);
    const proc = fork(path.join(here, `${file}${ext}`), [], {
      execArgv,
      env: {
        ...(file === 'serve-service' ? SERVICE_ENV : {}),
        ...process.env,
        NODE_ENV: 'production',
        BENCH_DATABASE_URL: databaseUrl,
        SESSION_SECRET: sessionSecret,
      },
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    });
    const port = await new Promise<number>((resolve, reject) => {
      let out = '';
      const onData = (chunk: Buffer) => {
        out += chunk.toString();
        const m = /^port=(\d+)$/m.exec(out);
        if (m) resolve(Number(m[1]));
      };
      proc.stdout!.on('data', onData);
      proc.once('exit', (code) => reject(new Error(`${name} exited with ${code} before listening`)));
      setTimeout(() => reject(new Error(`${name} did not listen within 60 s`)), 60_000).unref();
    });
    if (process.env.BENCH_STDOUT) proc.stdout!.pipe(fs.createWriteStream(`/tmp/bench-${name}.log`));
    else proc.stdout!.resume();
    return new App(name, proc, `http://127.0.0.1:${port}`);
  }

  get pid(): number {
    return this.proc.pid!;
  }

  private ask<T>(msg: HarnessMessage): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve) => {
      this.pending.set(id, resolve as (v: unknown) => void);
      this.proc.send({ id, ...msg } satisfies HarnessRequest);
    });
  }

  stats(): Promise<ChildStats> {
    return this.ask<ChildStats>({ cmd: 'stats' });
  }

  async resetEventLoopDelay(): Promise<void> {
    await this.ask({ cmd: 'eld-reset' });
  }

  /** Hands the process data made while seeding; false when it takes no fixture of that name. */
  async fixture(name: string, body: string): Promise<boolean> {
    return (await this.ask<{ ok: boolean }>({ cmd: 'fixture', name, body })).ok;
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode !== null) return;
    const exited = new Promise((resolve) => this.proc.once('exit', resolve));
    this.proc.send({ id: 0, cmd: 'exit' } satisfies HarnessRequest);
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  }
}
