import type { MessagePort } from 'node:worker_threads';
import { PlanSolverTimeout } from './errors.js';
import { highs } from './model.js';
import { solvePlan } from './solve.js';
import type { PlanInput, PlanResult } from './types.js';

// Loaded once per worker, before its first task.
await highs();

export interface WorkerTask {
  /** The PlanInput as JSON: a string crosses to the thread for a fraction of what a structured clone of its objects costs. */
  input: string;
  timeLimitMs: number;
  /** Told when the solve starts, so the pool's clock runs from then and not from the queue. */
  started: MessagePort;
}

export type WorkerAnswer = { result: PlanResult } | { timeout: true };

export default async function solveTask(task: WorkerTask): Promise<WorkerAnswer> {
  task.started.postMessage('started');
  task.started.close();
  try {
    return { result: await solvePlan(JSON.parse(task.input) as PlanInput, { timeLimitMs: task.timeLimitMs }) };
  } catch (error) {
    if (error instanceof PlanSolverTimeout) return { timeout: true };
    throw error;
  }
}
