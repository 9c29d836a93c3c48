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

async function waitReady(s: Started, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (s.child.exitCode !== null) throw new Error(`exited early: ${s.output()}`);
    try {
      const res = await fetch(`http://127.0.0.1:${s.port}/readyz`);
      if (res.status === 200) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`not ready in time: ${s.output()}`);
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

  it('migrates, serves, drains an in-flight request on SIGTERM and exits 0', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-proc-'));
    const s = await start({ DATABASE_URL: db.url, DATA_DIR: dataDir });
    try {
      await waitReady(s);
      expect(s.output()).to.match(/"msg":"ready"/);
      // An in-flight request: its headers and half its body are in when the signal comes; the rest after.
      const net = await import('node:net');
      const socket = net.connect(s.port, '127.0.0.1');
      let received = '';
      socket.on('data', (d) => {
        received += d;
      });
      socket.on('error', () => {}); // the server may reset the socket once it has answered and closes
      await new Promise((r) => socket.once('connect', r));
      const body = JSON.stringify({ hello: 'world' });
      socket.write(`POST /api/v1/not-there HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`);
      await new Promise((r) => setTimeout(r, 200));
      s.child.kill('SIGTERM');
      while (!s.output().includes('"msg":"draining"')) await new Promise((r) => setTimeout(r, 20));
      socket.write(body.slice(5));
      await new Promise((r) => socket.once('close', r));
      expect(received).to.match(/^HTTP\/1\.1 404 /);
      expect(received).to.contain('application/problem+json');
      expect(await s.exited).to.equal(0);
      expect(s.output()).to.contain('"msg":"stopped"');
      expect(s.output()).to.not.match(/service_session=|password/i);
    } finally {
      s.child.kill('SIGKILL');
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('starts an embedded PostgreSQL without DATABASE_URL and keeps its data across restarts', async () => {
    // DATA_DIR inside a private directory (mkdtemp makes mode 700), as in a checkout under `mktemp -d`
    const privateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-embedded-'));
    expect(fs.statSync(privateDir).mode & 0o777).to.equal(0o700);
    const dataDir = path.join(privateDir, 'data');
    try {
      const first = await start({ DATA_DIR: dataDir });
      await waitReady(first);
      expect(first.output()).to.contain('"database":"embedded"');
      first.child.kill('SIGTERM');
      expect(await first.exited).to.equal(0);
      expect(fs.existsSync(path.join(dataDir, 'postgres', 'PG_VERSION'))).to.equal(true);
      const marker = fs.statSync(path.join(dataDir, 'postgres', 'PG_VERSION')).mtimeMs;

      const second = await start({ DATA_DIR: dataDir });
      await waitReady(second);
      expect(second.output()).to.not.contain('migrations applied');
      expect(fs.statSync(path.join(dataDir, 'postgres', 'PG_VERSION')).mtimeMs).to.equal(marker);
      second.child.kill('SIGTERM');
      expect(await second.exited).to.equal(0);
    } finally {
      fs.rmSync(privateDir, { recursive: true, force: true });
    }
  });
});
