// Runs bcrypt off the main thread: a cost-12 hash takes a third of a second of pure CPU, which on
// the main thread would hold up every other request for that long.
import { parentPort } from 'node:worker_threads';
import bcrypt from 'bcryptjs';

export interface HashJob {
  id: number;
  op: 'hash' | 'verify';
  input: string;
  cost?: number;
  hash?: string;
}

export interface HashResult {
  id: number;
  result?: string | boolean;
  error?: string;
}

parentPort?.on('message', (job: HashJob) => {
  let answer: HashResult;
  try {
    answer = { id: job.id, result: job.op === 'hash' ? bcrypt.hashSync(job.input, job.cost ?? 12) : bcrypt.compareSync(job.input, job.hash ?? '') };
  } catch (err) {
    answer = { id: job.id, error: err instanceof Error ? err.message : String(err) };
  }
  parentPort?.postMessage(answer);
});
