/**
 * A frozen database (`npm run test:ops`): PostgreSQL's processes stopped with SIGSTOP for 6 s under
 * read and write load through nginx and two instances, then SIGCONT. Connections stay open and
 * nothing is refused, which is what a hung host or a paused VM looks like. A PostgreSQL of its own
 * (the embedded one, in a temporary directory), so the machine's shared server is never stopped.
 *
 * Wanted (issue 29, item 6; decisions: "requests get 503 quickly while the database does not
 * answer, and the service recovers by itself"): no answer slower than 2 s, 503
 * `service_unavailable` with `Retry-After` meanwhile, readiness 503, every acknowledged write stored
 * exactly once afterwards, recovery after SIGCONT without a restart.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createKnex, type EmbeddedDatabase, startEmbeddedPostgres } from '@svc/db';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { Client, findOrInstall, freePort, Instance, Nginx, type Outcome, requirePart, summary } from './cluster.js';
import { awaitRecovery, eventsLoad, expectWritesOnce } from './workload.js';

const FROZEN_MS = 6000;
const SLOWEST_MS = 2000;

/** The postmaster's pid (postmaster.pid's first line) and every process it started (backends, checkpointer, …). */
function postgresProcesses(dir: string): number[] {
  const postmaster = Number(fs.readFileSync(path.join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children = spawnSync('ps', ['-o', 'pid=', '--ppid', String(postmaster)], { encoding: 'utf8' })
    .stdout.split('\n')
    .map((l) => Number(l.trim()))
    .filter((n) => n > 0);
  return [postmaster, ...children];
}

describe('ops: PostgreSQL frozen (SIGSTOP) under load', function () {
  this.timeout(240_000);
  let root: string;
  let pg: EmbeddedDatabase;
  let db: Knex;
  let nginx: Nginx;
  const instances: Instance[] = [];
  const users: { client: Client; householdId: string }[] = [];
  let stopped: number[] = [];

  before(async function () {
    const nginxBin = requirePart(this, findOrInstall('nginx', 'nginx'));
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-frozen-'));
    fs.chmodSync(root, 0o777); // as root, the server runs as `postgres`, which must reach its directory
    pg = await startEmbeddedPostgres({ dir: path.join(root, 'pg') });
    const dbUrl = new URL(pg.url);
    dbUrl.pathname = '/ops_frozen';
    const admin = createKnex(pg.url, { poolMax: 1 });
    await admin.raw('create database ops_frozen');
    await admin.destroy();
    db = createKnex(dbUrl.toString(), { poolMax: 2 });
    const ports = await Promise.all([0, 1].map(async () => [await freePort(), await freePort()] as const));
    nginx = new Nginx(
      nginxBin,
      ports.map(([p]) => `127.0.0.1:${p}`),
    );
    const sessionSecret = randomBytes(48).toString('base64url');
    const env = () => ({
      DATABASE_URL: dbUrl.toString(),
      SESSION_SECRET: sessionSecret,
      TRUST_PROXY: 'loopback',
      PUBLIC_BASE_URL: `http://localhost:${nginx.port}`,
      PASSWORD_BREACH_API: 'off',
      PASSWORD_HASH_WORKERS: '1',
      SHUTDOWN_DRAIN_SECONDS: '0',
      AUTH_RATE_LIMIT: '1000',
      DATA_DIR: path.join(root, 'data'),
      LOG_LEVEL: 'warn',
      // DB_STATEMENT_TIMEOUT_MS and DB_UNANSWERED_MS at their defaults (5000, 1000): what runs in production.
    });
    for (const [i, [port, metricsPort]] of ports.entries()) instances.push(new Instance(`frozen-${i + 1}`, port, metricsPort, env));
    await nginx.start();
    for (const i of instances) i.start();
    await Promise.all(instances.map((i) => i.waitReady()));
    for (let k = 0; k < 3; k++) {
      const c = new Client(nginx.url);
      c.fresh = true;
      const reg = await c.call('POST', '/api/v1/auth/register', { email: `frozen-${k}@example.com`, password: 'correct horse battery', displayName: 'Frozen' });
      expect(reg.status, JSON.stringify(reg.body)).to.equal(200);
      const h = await c.call('POST', '/api/v1/households', { name: `Frozen ${k}`, timeZoneId: 'Europe/Oslo', defaultDinnerTime: '18:00' });
      expect(h.status, JSON.stringify(h.body)).to.equal(201);
      users.push({ client: c, householdId: h.body.id });
    }
  });

  after(async () => {
    for (const pid of stopped) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        /* gone */
      }
    }
    await Promise.all(instances.map((i) => i.stop('SIGKILL')));
    await nginx?.stop();
    await db?.destroy();
    await pg?.stop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  const load = () => eventsLoad(users, 'frozen', 6);

  it(`stopped ${FROZEN_MS / 1000} s: no answer slower than ${SLOWEST_MS / 1000} s, 503 with Retry-After meanwhile, every acknowledged write stored once, recovery after SIGCONT`, async () => {
    const starts = instances.map((i) => i.starts);
    const l = load();
    l.start();
    let frozenAt = 0;
    let thawedAt = 0;
    const readiness: { status: number; ms: number }[] = [];
    try {
      await l.more(40);
      stopped = postgresProcesses(pg.dir);
      frozenAt = Date.now();
      for (const pid of stopped) process.kill(pid, 'SIGSTOP');
      // The fault lasts as long as it lasts: a bounded wait while the load runs.
      while (Date.now() - frozenAt < FROZEN_MS) {
        await new Promise((r) => setTimeout(r, 500));
        if (Date.now() - frozenAt > 2500 && readiness.length < instances.length) {
          for (const i of instances) {
            const t = Date.now();
            readiness.push({ status: (await fetch(`${i.url}/readyz`)).status, ms: Date.now() - t });
          }
        }
      }
      for (const pid of [...stopped].reverse()) process.kill(pid, 'SIGCONT');
      thawedAt = Date.now();
      stopped = [];
      await awaitRecovery(l, thawedAt, 'SIGCONT');
    } finally {
      for (const pid of stopped) process.kill(pid, 'SIGCONT');
      stopped = [];
      await l.stop();
    }
    const outcomes = l.outcomes;
    // Every request that was under way at some moment of the freeze, or began during it.
    const during = outcomes.filter((o) => o.at >= frozenAt && o.at - o.ms <= thawedAt);
    const slowest = Math.max(...during.map((o) => o.ms));
    const unavailable = during.filter((o) => o.status === 503);
    const firstRefusal = Math.min(...unavailable.map((o) => o.at)) - frozenAt;
    const firstWriteBack = Math.min(...outcomes.filter((o) => o.at >= thawedAt && o.kind === 'write' && o.status === 201).map((o) => o.at)) - thawedAt;
    console.log(
      `      frozen ${thawedAt - frozenAt} ms: ${during.length} requests during it, slowest ${slowest} ms, ${unavailable.length} answered 503 ` +
        `(first ${firstRefusal} ms after SIGSTOP), first write acknowledged ${firstWriteBack} ms after SIGCONT; readiness ${JSON.stringify(readiness)}; ${summary(during)}`,
    );
    const slow = during.filter((o) => o.ms > SLOWEST_MS);
    expect(
      slow.map((o: Outcome) => `${o.kind} ${o.status} ${o.ms} ms`),
      `answers slower than ${SLOWEST_MS} ms while frozen`,
    ).to.deep.equal([]);
    expect(unavailable.length, '503 answers while frozen').to.be.greaterThan(10);
    expect(readiness.length).to.equal(instances.length);
    for (const r of readiness) {
      expect(r.status, 'readiness while frozen').to.equal(503);
      expect(r.ms).to.be.below(SLOWEST_MS);
    }
    const unexpected = outcomes.filter(
      (o) => !(o.status === 200 || o.status === 201 || (o.status === 503 && o.fromService && o.code === 'service_unavailable' && o.retryAfter)),
    );
    expect(unexpected, summary(outcomes)).to.deep.equal([]);
    expect(
      instances.map((i) => i.starts),
      'no instance restarted',
    ).to.deep.equal(starts);
    for (const i of instances) expect(i.child!.exitCode).to.equal(null);
    for (const i of instances) expect((await fetch(`${i.url}/readyz`)).status).to.equal(200);
    // Every acknowledged write is stored exactly once; nothing is stored twice.
    await expectWritesOnce(db, outcomes);
    // Each instance said so in its log, once per freeze, and that it recovered.
    for (const i of instances) {
      expect(i.lines('database not answering').length, `${i.name}: ${i.tail()}`).to.be.greaterThan(0);
      expect(i.lines('database answers again').length, `${i.name}: ${i.tail()}`).to.be.greaterThan(0);
    }
  });
});
