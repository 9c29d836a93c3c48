import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { PlanSolverTimeout } from './errors.js';
import type { PlanInput, PlanResult, PlanSolverPoolOptions } from './types.js';
import type { WorkerAnswer, WorkerTask } from './worker.js';

// The worker beside this module: worker.ts when run from source (tests), worker.js when built.
const workerFile = new URL(import.meta.url.endsWith('.ts') ? './worker.ts' : './worker.js', import.meta.url).href;

/**
 * Solves in worker threads (the solver loaded once per worker). A solve over `timeoutMs` rejects
 * with PlanSolverTimeout (and the worker is replaced); a crash rejects with the error.
 */
export class PlanSolverPool {
  readonly #pool: Piscina<WorkerTask, WorkerAnswer>;
  readonly #timeoutMs: number;

  constructor(options: PlanSolverPoolOptions) {
    const threads = Math.max(1, options.threads ?? 1);
    this.#timeoutMs = options.timeoutMs;
    this.#pool = new Piscina({ filename: workerFile, minThreads: threads, maxThreads: threads, idleTimeout: 2 ** 31 - 1 });
  }

  async solve(input: PlanInput): Promise<PlanResult> {
    const ms = this.#timeoutMs;
    const abort = new AbortController();
    const { port1, port2 } = new MessageChannel();
    let timer: NodeJS.Timeout | undefined;
    // The clock starts when a worker takes the task; over the limit the worker is stopped (and replaced).
    port1.once('message', () => {
      timer = setTimeout(() => abort.abort(), ms);
    });
    try {
      const answer = await this.#pool.run({ input: JSON.stringify(input), timeLimitMs: ms, started: port2 }, { signal: abort.signal, transferList: [port2] });
      if ('timeout' in answer) throw new PlanSolverTimeout(ms);
      return answer.result;
    } catch (error) {
      if (abort.signal.aborted) throw new PlanSolverTimeout(ms);
      throw error;
    } finally {
      clearTimeout(timer);
      port1.close();
    }
  }

  destroy(): Promise<void> {
    return this.#pool.destroy();
  }
}
