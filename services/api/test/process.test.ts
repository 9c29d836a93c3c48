import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@svc/db';
import { createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface Started {
  child: ChildProcess;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
}

/**
 * Runs the real entry point as a separate process, compiled as in production (`node
 * dist/src/main.js`): under tsx's loader a signal would reach tsx's own handlers, not only ours.
 */
async function start(env: Record<string, string>): Promise<Started> {
  const port = await freePort();
  let out = '';
  const child = spawn(process.execPath, ['dist/src/main.js'], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      PASSWORD_BREACH_API: 'off',
      SHUTDOWN_DRAIN_SECONDS: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, port, output: () => out, exited };
}

/** Resolves once the process has written `text` (event-driven: no polling, no sleeping). */
function waitForOutput(s: Started, text: string, timeoutMs = 60_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (s.output().includes(text)) {
        cleanup();
        resolve();
      }
    };
    const onExit = () => {
      cleanup();
      reject(new Error(`exited before "${text}": ${s.output()}`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`no "${text}" in time: ${s.output()}`));
    }, timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      s.child.stdout!.off('data', check);
      s.child.stderr!.off('data', check);
      s.child.off('exit', onExit);
    };
    s.child.stdout!.on('data', check);
    s.child.stderr!.on('data', check);
    s.child.on('exit', onExit);
    check();
  });
}

async function waitReady(s: Started): Promise<void> {
  await waitForOutput(s, '"msg":"ready"');
  const res = await fetch(`http://127.0.0.1:${s.port}/readyz`);
  if (res.status !== 200) throw new Error(`ready line but /readyz ${res.status}: ${s.output()}`);
}

describe('the service process', function () {
  this.timeout(120_000);
  let db: TestDatabase;
  before(async () => {
    // the packages' dist is built before any test runs (turbo: test dependsOn ^build); this one's now
    execFileSync(process.execPath, [path.join(root, '../../node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
    db = await createTestDatabase();
  });
  after(() => db.destroy());

  it('stops at start-up with one line naming a bad variable', async () => {
    const s = await start({ DATABASE_URL: db.url, AUTH_RATE_LIMIT: 'many' });
    expect(await s.exited).to.equal(2);
    const lines = s.output().trim().split('\n');
    expect(lines).to.have.length(1);
    expect(lines[0]).to.match(/^Invalid configuration: AUTH_RATE_LIMIT: /);
  });

  it('on SIGTERM: readiness 503 at once, keeps serving with Connection: close for the drain, finishes an in-flight request, exits 0', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-proc-'));
    const s = await start({ DATABASE_URL: db.url, DATA_DIR: dataDir, SHUTDOWN_DRAIN_SECONDS: '2', INSTANCE_ID: 'proc-test-1' });
    try {
      await waitReady(s);
      expect(s.output()).to.match(/"msg":"ready"/);
      // HOST=127.0.0.1 and no PUBLIC_BASE_URL: the printed URL is the origin sign-in accepts.
      const readyLine = JSON.parse(
        s
          .output()
          .split('\n')
          .find((l) => l.includes('"msg":"ready"'))!,
      ) as { url: string; publicBaseUrl: string };
      expect(readyLine.url).to.equal(`http://127.0.0.1:${s.port}`);
      expect(new URL(readyLine.url).origin).to.equal(new URL(readyLine.publicBaseUrl).origin);
      const signIn = await fetch(`${readyLine.url}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Origin: readyLine.url },
        body: JSON.stringify({ email: 'nobody@example.test', password: 'not the password' }),
      });
      expect(signIn.status).to.equal(401); // refused for the credentials, not 403 for the origin
      expect(s.output()).to.contain('"instance":"proc-test-1"');
      // A keep-alive connection that has already been answered once (so the server is reading it).
      const net = await import('node:net');
      const socket = net.connect(s.port, '127.0.0.1');
      let received = '';
      const answers: (() => void)[] = [];
      socket.on('data', (d) => {
        received += d;
        for (const wake of answers.splice(0)) wake();
      });
      socket.on('error', () => {}); // the server may reset the socket once it has answered and closes
      await new Promise((r) => socket.once('connect', r));
      const answered = (n: number) =>
        new Promise<void>((resolve) => {
          const check = () => ((received.match(/HTTP\/1\.1 /g) ?? []).length >= n ? resolve() : answers.push(check));
          check();
        });
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      await answered(1);
      expect(received).to.match(/^HTTP\/1\.1 200 /);

      s.child.kill('SIGTERM');
      await waitForOutput(s, '"msg":"draining"');
      const ready = await fetch(`http://127.0.0.1:${s.port}/readyz`);
      expect(ready.status).to.equal(503);
      expect(((await ready.json()) as { code: string }).code).to.equal('service_unavailable');
      const during = await fetch(`http://127.0.0.1:${s.port}/healthz`);
      expect(during.status).to.equal(200);
      expect(during.headers.get('connection')).to.equal('close');

      // An in-flight request: its headers and half its body arrive during the drain, the rest after the close began.
      const body = JSON.stringify({ hello: 'world' });
      socket.write(`POST /api/v1/not-there HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`);
      await waitForOutput(s, '"msg":"closing"');
      socket.write(body.slice(5));
      await new Promise((r) => socket.once('close', r));
      const second = received.slice(received.lastIndexOf('HTTP/1.1 '));
      expect(second).to.match(/^HTTP\/1\.1 404 /);
      expect(second).to.contain('application/problem+json');
      expect(second.toLowerCase()).to.contain('connection: close');
      expect(await s.exited).to.equal(0);
      expect(s.output()).to.contain('"msg":"stopped"');
      expect(s.output()).to.not.match(/service_session=|password/i);
    } finally {
      s.child.kill('SIGKILL');
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('serves Prometheus metrics on METRICS_PORT, not on the API port', async () => {
    const metricsPort = await freePort();
    const s = await start({ DATABASE_URL: db.url, METRICS_PORT: String(metricsPort), INSTANCE_ID: 'metrics-1' });
    try {
      await waitReady(s);
      await fetch(`http://127.0.0.1:${s.port}/healthz`);
      const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(res.status).to.equal(200);
      const text = await res.text();
      expect(text).to.match(/http_request_duration_seconds_count\{instance="metrics-1",method="GET",route="GET \/healthz",status="200"\} \d+/);
      expect(text).to.contain('db_pool_connections_in_use');
      expect(text).to.contain('nodejs_eventloop_lag_p99_seconds');
      expect((await fetch(`http://127.0.0.1:${s.port}/metrics`)).status).to.equal(404);
      s.child.kill('SIGTERM');
      expect(await s.exited).to.equal(0);
    } finally {
      s.child.kill('SIGKILL');
    }
  });

  it('npm run migrate: applies the migrations and exits 0, then finds nothing to do', async () => {
    const fresh = await createTestDatabase();
    try {
      const run = () =>
        new Promise<{ code: number | null; out: string }>((resolve) => {
          let out = '';
          const child = spawn(process.execPath, ['dist/src/migrate.js'], {
            cwd: root,
            env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATABASE_URL: fresh.url, PASSWORD_BREACH_API: 'off' },
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          child.stdout.on('data', (d) => {
            out += d;
          });
          child.stderr.on('data', (d) => {
            out += d;
          });
          child.on('exit', (code) => resolve({ code, out }));
        });
      const first = await run();
      expect(first.code, first.out).to.equal(0);
      expect(first.out).to.contain('migrations applied');
      const second = await run();
      expect(second.code).to.equal(0);
      expect(second.out).to.contain('nothing to migrate');
    } finally {
      await fresh.destroy();
    }
  });

  it('starts an embedded PostgreSQL without DATABASE_URL, keeps its data across restarts, and changes no directory it does not own', async () => {
    // DATA_DIR inside a private directory (mkdtemp makes mode 700), as in a checkout under `mktemp -d`
    const privateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-embedded-'));
    expect(fs.statSync(privateDir).mode & 0o777).to.equal(0o700);
    const dataDir = path.join(privateDir, 'data');
    const asRoot = process.getuid?.() === 0;
    try {
      const first = await start({ DATA_DIR: dataDir });
      await waitReady(first);
      expect(first.output()).to.contain('"database":"embedded"');
      first.child.kill('SIGTERM');
      expect(await first.exited).to.equal(0);
      // Root: postgres runs as the postgres user, which cannot pass through the private directory;
      // the service keeps the cluster in a directory of its own and says where, instead of opening
      // the private one up.
      expect(fs.statSync(privateDir).mode & 0o777).to.equal(0o700);
      const where = /the embedded cluster for [^ ]+ is kept in ([^"\\]+)"/.exec(first.output())?.[1];
      if (asRoot) expect(where, first.output()).to.be.a('string');
      const clusterDir = asRoot ? where! : path.join(dataDir, 'postgres');
      expect(fs.existsSync(path.join(clusterDir, 'PG_VERSION'))).to.equal(true);
      const marker = fs.statSync(path.join(clusterDir, 'PG_VERSION')).mtimeMs;

      const second = await start({ DATA_DIR: dataDir });
      await waitReady(second);
      expect(second.output()).to.not.contain('migrations applied');
      expect(fs.statSync(path.join(clusterDir, 'PG_VERSION')).mtimeMs).to.equal(marker);
      second.child.kill('SIGTERM');
      expect(await second.exited).to.equal(0);
      if (asRoot) fs.rmSync(path.dirname(clusterDir), { recursive: true, force: true });
    } finally {
      fs.rmSync(privateDir, { recursive: true, force: true });
    }
  });
});
