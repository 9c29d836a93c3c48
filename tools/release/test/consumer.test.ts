import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import { pack, publishable } from './packages.js';

// A project outside this repository installs the packed tarballs (and their dependencies from the
// registry, as any consumer would) and mounts @svc/push's router on http-kit's pipeline against a
// real database: proof that the packages work without the monorepo around them.
const CONSUMER = `
import { createKnex, runMigrations } from '@svc/db';
import { createHttpApp, createLogger, systemClock } from '@svc/http-kit';
import { migrations as jobs } from '@svc/jobs';
import { createRouter, migrations, ObjectionPushStore, PushService } from '@svc/push';

const knex = createKnex(process.env.DATABASE_URL);
// @svc/push's delivery queue lives in @svc/jobs' tables: those first.
await runMigrations(knex, [jobs, migrations]);
const service = new PushService({ store: new ObjectionPushStore(knex), clock: systemClock, config: { defaultProvider: 'fcm' } });
const app = createHttpApp({
  logger: createLogger({ level: 'silent' }),
  allowedOrigins: ['http://localhost'],
  authenticate: [(req, _res, next) => { req.principal = { userId: '6f1c2b9e-4a8d-4c3e-9b7a-2d5e8f0a1b3c' }; next(); }],
  routers: [createRouter({ service })],
});
const server = app.listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const base = 'http://127.0.0.1:' + server.address().port;
const put = await fetch(base + '/api/v1/me/devices', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: 'consumer-token', platform: 'ios' }) });
const missing = await fetch(base + '/api/v1/me/devices/nothing-here');
console.log(JSON.stringify({ put: put.status, body: await put.json(), missing: missing.status, type: missing.headers.get('content-type') }));
server.close();
await knex.destroy();
`;

describe('a packed package works in a project of its own', function () {
  this.timeout(300_000);
  let db: TestDatabase;
  let dir: string;

  before(async () => {
    db = await createTestDatabase([]);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-consumer-'));
  });
  after(async () => {
    await db.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('installs @svc/contracts, @svc/db, @svc/http-kit, @svc/jobs and @svc/push from their tarballs and serves the push routes', async () => {
    const wanted = ['@svc/contracts', '@svc/db', '@svc/http-kit', '@svc/jobs', '@svc/push'];
    const tarballs = publishable()
      .filter((p) => wanted.includes(p.name))
      .map((p) => pack(p.dir, dir));
    expect(tarballs).to.have.length(5);
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }));
    // From npm's cache where it can, else the registry (the tarballs' dependencies). A bounded wait:
    // execFileSync blocks the event loop, so mocha's own timeout could not end a stalled install.
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--omit=optional', '--fetch-retries=1', ...tarballs], {
      cwd: dir,
      stdio: 'pipe',
      timeout: 240_000,
    });
    // Only the tarballs' own files: no path back into this repository.
    expect(fs.realpathSync(path.join(dir, 'node_modules/@svc/push'))).to.equal(path.join(fs.realpathSync(dir), 'node_modules/@svc/push'));
    fs.writeFileSync(path.join(dir, 'consumer.mjs'), CONSUMER);
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, ['consumer.mjs'], {
        cwd: dir,
        env: { PATH: process.env.PATH, DATABASE_URL: db.url },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c) => (stdout += c));
      child.stderr.on('data', (c) => (stderr += c));
      child.on('exit', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`consumer exited ${code}: ${stderr}`))));
    });
    const result = JSON.parse(out.trim().split('\n').pop()!);
    expect(result.put).to.equal(200);
    expect(result.body).to.include({ token: 'consumer-token', platform: 'ios', provider: 'fcm' });
    expect(result.missing).to.equal(404);
    expect(result.type).to.match(/^application\/problem\+json/);
  });
});
