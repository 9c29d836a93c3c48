/**
 * `npm run bench`: the hot paths of the composed service over real HTTP (autocannon), on a
 * database of its own (TEST_DATABASE_URL or DATABASE_URL, else an embedded server).
 * Prints, per path: requests/s, latency p50/p99, and the SQL queries one request makes (read from
 * its Server-Timing header), then the event-loop delay while logins hash passwords.
 *
 *   npm run bench                 # all scenarios, 10 s each
 *   npm run bench -- --seconds 3  # shorter
 */
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createLogger } from '@svc/http-kit';
import { createTestDatabase } from '@svc/test-support';
import autocannon from 'autocannon';
import { loadConfig } from '../src/config.js';
import { buildService } from '../src/service.js';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '10' }, connections: { type: 'string', default: '20' } } });
const seconds = Number(values.seconds);
const connections = Number(values.connections);

if (!process.env.TEST_DATABASE_URL && process.env.DATABASE_URL) process.env.TEST_DATABASE_URL = process.env.DATABASE_URL;
const db = await createTestDatabase();
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'));
const config = loadConfig({ DATA_DIR: dataDir, PASSWORD_BREACH_API: 'off', AUTH_RATE_LIMIT: '1000000', LOCKOUT_MAX_FAILURES: '1000' });
const service = await buildService({ config, knex: db.knex, logger: createLogger({ level: 'silent' }), startMailer: false });
const server = service.app.listen(0, '127.0.0.1');
await new Promise((r) => server.once('listening', r));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

async function call(method: string, url: string, body?: unknown, cookie?: string) {
  const res = await fetch(base + url, {
    method,
    headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

// One account with a household, a few rules and 2,000 events.
const signup = await fetch(`${base}/api/v1/auth/register`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ email: 'bench@example.com', password: 'bench password 1', displayName: 'Bench' }),
});
const cookie = (signup.headers.get('set-cookie') ?? '').split(';')[0]!;
const household = (await call('POST', '/api/v1/households', { name: 'Bench', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' }, cookie)).body;
await db.knex.raw(
  `insert into meal_events (id, household_id, date, event_type, serving_time, available_cooking_minutes, notes, participants, created_at, updated_at)
   select gen_random_uuid(), ?, date '2026-01-01' + (g % 3650), 'Guests', time '18:00', 30, '', '[]'::jsonb, now(), now() from generate_series(1, 2000) g`,
  [household.id],
);

interface Row {
  path: string;
  rps: number;
  p50: number;
  p99: number;
  queries: string;
  non2xx: number;
}
const rows: Row[] = [];

async function scenario(name: string, url: string, opts: { method?: string; body?: unknown; cookie?: string } = {}) {
  const probe = await call(opts.method ?? 'GET', url, opts.body, opts.cookie);
  const timing = probe.headers.get('server-timing') ?? '';
  const queries = /desc="(\d+) queries"/.exec(timing)?.[1] ?? '?';
  const result = await autocannon({
    url: base + url,
    method: (opts.method ?? 'GET') as 'GET',
    connections,
    duration: seconds,
    headers: { 'content-type': 'application/json', ...(opts.cookie ? { cookie: opts.cookie } : {}) },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  rows.push({
    path: `${opts.method ?? 'GET'} ${name}`,
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    queries,
    non2xx: result.non2xx,
  });
}

await scenario('/healthz', '/healthz');
await scenario('/api/v1/me', '/api/v1/me', { cookie });
await scenario('/api/v1/households/{id}', `/api/v1/households/${household.id}`, { cookie });
await scenario('/api/v1/households/{id}/events?limit=50', `/api/v1/households/${household.id}/events?limit=50`, { cookie });
await scenario('/api/v1/households/{id}/rules', `/api/v1/households/${household.id}/rules`, { cookie });

// Logins hash passwords: the event loop of the serving process must stay responsive meanwhile.
const histogram = monitorEventLoopDelay({ resolution: 5 });
histogram.enable();
const logins = await autocannon({
  url: `${base}/api/v1/auth/login`,
  method: 'POST',
  connections: 8,
  duration: Math.min(seconds, 5),
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ email: 'bench@example.com', password: 'bench password 1' }),
});
histogram.disable();

console.log(`\n${connections} connections, ${seconds} s per path, ${os.cpus().length} cores\n`);
console.log('| path | req/s | p50 ms | p99 ms | SQL queries per request | non-2xx |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const r of rows) console.log(`| ${r.path} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.queries} | ${r.non2xx} |`);
console.log(
  `\nPOST /api/v1/auth/login (8 connections): ${Math.round(logins.requests.average)} req/s, p50 ${logins.latency.p50} ms, p99 ${logins.latency.p99} ms, non-2xx ${logins.non2xx}`,
);
console.log(
  `event-loop delay meanwhile: p50 ${(histogram.percentile(50) / 1e6).toFixed(1)} ms, p99 ${(histogram.percentile(99) / 1e6).toFixed(1)} ms, max ${(histogram.max / 1e6).toFixed(1)} ms`,
);

server.close();
await service.close();
await db.destroy();
fs.rmSync(dataDir, { recursive: true, force: true });
process.exit(0);
