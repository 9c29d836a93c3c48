import { createHash } from 'node:crypto';
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import bcrypt from 'bcryptjs';
import type { HashJob, HashResult } from './hash-worker.js';

export interface PasswordHasherOptions {
  /** bcrypt cost; 12 in service (tests may lower it for speed). */
  cost?: number;
  /**
   * Worker threads that run bcrypt. 0 hashes on the main thread (bcryptjs's async mode, which
   * still blocks the loop in ~100 ms slices; kept for measuring). Default: one per core, 1 to 4.
   */
  workers?: number;
}

/**
 * bcrypt reads at most 72 bytes, so two long passwords sharing their first 72 bytes would both
 * work. Feeding it base64(SHA-256(password)) instead (44 ASCII characters, no NUL) keeps every
 * byte of the password significant. The stored value is an ordinary `$2b$` bcrypt string.
 */
export function prehash(password: string): string {
  return createHash('sha256').update(password, 'utf8').digest('base64');
}

/** A bcrypt hash of nothing anyone can type (made once, cost 12): unknown addresses are checked against it. */
const DUMMY_HASH_COST_12 = '$2b$12$nRbi0NzVeLkrk3GGQM5bcejMuqeLoecBMRly5H18MV5OzLD6qmkmK';

interface Pending {
  job: HashJob;
  resolve: (v: string | boolean) => void;
  reject: (e: Error) => void;
}

/** A small fixed pool of worker threads, each doing one bcrypt job at a time. */
class WorkerPool {
  private readonly idle: Worker[] = [];
  private readonly busy = new Map<Worker, Pending>();
  private readonly queue: Pending[] = [];
  private size = 0;
  private nextId = 1;
  private closed = false;

  constructor(private readonly max: number) {}

  run(job: Omit<HashJob, 'id'>): Promise<string | boolean> {
    if (this.closed) return Promise.reject(new Error('password hasher closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ job: { ...job, id: this.nextId++ }, resolve, reject });
      this.dispatch();
    });
  }

  private spawn(): Worker {
    const here = import.meta.url;
    // Built, the worker is the .js next to this file. Run from the sources (tests under tsx), it is
    // a .ts file, and loader hooks do not reach worker threads on Node 20: load it through tsx's API.
    const worker = here.endsWith('.ts')
      ? new Worker(`import('tsx/esm/api').then((api) => api.tsImport(${JSON.stringify(new URL('./hash-worker.ts', here).href)}, ${JSON.stringify(here)}))`, {
          eval: true,
        })
      : new Worker(new URL('./hash-worker.js', here));
    worker.unref();
    this.size += 1;
    worker.on('message', (answer: HashResult) => {
      const pending = this.busy.get(worker);
      this.busy.delete(worker);
      this.idle.push(worker);
      worker.unref();
      if (pending) {
        if (answer.error !== undefined) pending.reject(new Error(answer.error));
        else pending.resolve(answer.result as string | boolean);
      }
      this.dispatch();
    });
    const lost = (err: Error) => {
      const pending = this.busy.get(worker);
      this.busy.delete(worker);
      const at = this.idle.indexOf(worker);
      if (at >= 0) this.idle.splice(at, 1);
      this.size -= 1;
      pending?.reject(err);
      this.dispatch();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => {
      if (this.busy.has(worker) || this.idle.includes(worker)) lost(new Error(`hash worker exited with code ${code}`));
    });
    return worker;
  }

  private dispatch(): void {
    while (this.queue.length > 0 && !this.closed) {
      let worker = this.idle.pop();
      if (!worker) {
        if (this.size >= this.max) return;
        worker = this.spawn();
      }
      const pending = this.queue.shift()!;
      this.busy.set(worker, pending);
      // A worker with a job in hand keeps the process alive until it answers.
      worker.ref();
      worker.postMessage(pending.job);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.queue.splice(0)) p.reject(new Error('password hasher closed'));
    const all = [...this.idle, ...this.busy.keys()];
    this.idle.length = 0;
    for (const [, p] of this.busy) p.reject(new Error('password hasher closed'));
    this.busy.clear();
    await Promise.all(all.map((w) => w.terminate()));
  }
}

/** Hashes and checks passwords with bcrypt, off the main thread. */
export class PasswordHasher {
  readonly cost: number;
  private readonly pool: WorkerPool | undefined;
  private dummy: Promise<string> | undefined;

  constructor(options: PasswordHasherOptions = {}) {
    this.cost = options.cost ?? 12;
    // One core is left to the event loop: a burst of logins (bcrypt cost 12) must not starve every other request.
    const workers = options.workers ?? Math.min(4, Math.max(1, os.availableParallelism() - 1));
    this.pool = workers > 0 ? new WorkerPool(workers) : undefined;
  }

  async hash(password: string): Promise<string> {
    const input = prehash(password);
    if (!this.pool) return bcrypt.hash(input, this.cost);
    return (await this.pool.run({ op: 'hash', input, cost: this.cost })) as string;
  }

  async verify(password: string, hash: string): Promise<boolean> {
    const input = prehash(password);
    if (!this.pool) return bcrypt.compare(input, hash);
    return (await this.pool.run({ op: 'verify', input, hash })) as boolean;
  }

  /**
   * Checks `password` against `hash`, or, when there is no hash (unknown address, social-only
   * account), against a throwaway hash of the same cost: every login costs one bcrypt either way.
   */
  async verifyOrBurn(password: string, hash: string | null | undefined): Promise<boolean> {
    if (hash) return this.verify(password, hash);
    this.dummy ??= this.cost === 12 ? Promise.resolve(DUMMY_HASH_COST_12) : this.hash('no account has this password');
    await this.verify(password, await this.dummy);
    return false;
  }

  async close(): Promise<void> {
    await this.pool?.close();
  }
}
