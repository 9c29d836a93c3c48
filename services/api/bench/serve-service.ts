/**
 * The service as the bench measures it: `buildService` on the bench database (BENCH_DATABASE_URL),
 * composed the way main.ts composes it (pool of 20, statement timeout, Server-Timing query
 * counting, http-kit's createHttpServer), listening on 127.0.0.1 on a free port and printing `port=<n>`. Logging is silent
 * (the anchors log nothing either). Started by run.ts in a process of its own; the event-loop
 * delay and CPU readings are the bench harness's (harness.ts), not the service's.
 *
 *   BENCH_DATABASE_URL=postgres://… SESSION_SECRET=<32+ chars> node --conditions=source --import=tsx/esm bench/serve-service.ts
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createKnex } from '@svc/db';
import { createHttpServer, createLogger, instrumentKnex } from '@svc/http-kit';
import { loadConfig } from '../src/config.js';
import { tuneHeap } from '../src/heap.js';
import { buildService } from '../src/service.js';
import { prioritizeEventLoop } from '../src/threads.js';
import { attachHarness, listen } from './harness.js';

const url = process.env.BENCH_DATABASE_URL;
if (!url) throw new Error('BENCH_DATABASE_URL is required');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-service-'));
const config = loadConfig({
  NODE_ENV: 'production',
  DATABASE_URL: url,
  DATA_DIR: dataDir,
  SESSION_SECRET: process.env.SESSION_SECRET,
  PUBLIC_BASE_URL: 'http://127.0.0.1',
  HOST: '127.0.0.1',
  PORT: '0',
  PASSWORD_BREACH_API: 'off',
  // The login storm is 20 logins at a time from one address; lockouts never happen (right password).
  AUTH_RATE_LIMIT: '1000000',
  // The bearer scenarios send one token from every connection.
  TOKEN_RATE_LIMIT: '1000000000',
  LOCKOUT_MAX_FAILURES: '1000',
  // To compare heap settings: HEAP_GROWING_PERCENT=0 npm run bench … (V8's own growth).
  HEAP_GROWING_PERCENT: process.env.HEAP_GROWING_PERCENT,
  // To compare: HELPER_THREAD_NICE=0 npm run bench -- --only storm (helpers as the event loop).
  HELPER_THREAD_NICE: process.env.HELPER_THREAD_NICE,
  THREADPOOL_IDLE: process.env.THREADPOOL_IDLE,
});
// As main does.
tuneHeap(config.heapGrowingPercent);
await prioritizeEventLoop(config.helperThreadNice, config.threadpoolIdle);
const knex = instrumentKnex(createKnex(url, { poolMax: 20, statementTimeoutMs: config.dbStatementTimeoutMs }));
const service = await buildService({
  config,
  knex,
  database: { url, options: { statementTimeoutMs: config.dbStatementTimeoutMs } },
  logger: createLogger({ level: 'silent' }),
  startMailer: false,
});
const server = await listen(createHttpServer(service.app));
attachHarness(server, {
  close: async () => {
    await service.close();
    await knex.destroy();
    fs.rmSync(dataDir, { recursive: true, force: true });
  },
});
