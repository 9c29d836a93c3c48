#!/usr/bin/env node
// `npm test`: every package's mocha suites and the API's end-to-end suites. Against
// TEST_DATABASE_URL when set; otherwise one embedded PostgreSQL is started here for the whole run
// (each test file still makes a database of its own) and removed afterwards.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// The suites run on the Node the repository installs (tools/node-runtime: node_modules/.bin/node,
// first on the PATH of npm scripts), and every process they start inherits it.
if (Number(process.versions.node.split('.')[0]) !== 24) {
  console.error(
    `npm test runs on Node 24 (npm install puts it at node_modules/.bin/node); this is Node ${process.version}: run \`npm test\` after \`npm install\``,
  );
  process.exit(1);
}

const args = process.argv.slice(2);
let embedded;
let tmp;
if (!process.env.TEST_DATABASE_URL) {
  const { startEmbeddedPostgres } = await import('../packages/db/dist/src/embedded-postgres.js').catch(async () => {
    // @svc/db not built yet: build it first (a fresh clone)
    await run('npx', ['turbo', 'run', 'build', '--filter=@svc/db', '--output-logs=errors-only']);
    return import('../packages/db/dist/src/embedded-postgres.js');
  });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-test-pg-'));
  fs.chmodSync(tmp, 0o777);
  embedded = await startEmbeddedPostgres({ dir: path.join(tmp, 'data') });
  process.env.TEST_DATABASE_URL = embedded.url;
  console.log(`test database: embedded PostgreSQL on port ${embedded.port}`);
} else {
  console.log('test database: TEST_DATABASE_URL');
}

const totals = { passed: 0, failed: 0, skipped: 0 };
let pending = '';

/** Counts mocha's closing lines ("N passing", "N failing", "N pending") as they stream by. */
function count(text) {
  pending += text;
  const lines = pending.split('\n');
  pending = lines.pop() ?? '';
  for (const raw of lines) {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: strips the ANSI colour codes mocha writes
    const line = raw.replace(/\u001b\[[0-9;]*m/g, '');
    const m = /^(?:\S+:\s+)?\s*(\d+) (passing|failing|pending)\b/.exec(line);
    if (m) totals[{ passing: 'passed', failing: 'failed', pending: 'skipped' }[m[2]]] += Number(m[1]);
  }
}

function run(cmd, argv, { tally = false } = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, argv, { stdio: ['inherit', tally ? 'pipe' : 'inherit', 'inherit'], env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' } });
    if (tally) {
      child.stdout.on('data', (chunk) => {
        process.stdout.write(chunk);
        count(chunk.toString());
      });
    }
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

let code = 1;
try {
  code = await run('npx', ['turbo', 'run', 'test', '--concurrency=2', '--output-logs=full', '--log-order=grouped', ...args], { tally: true });
} finally {
  if (embedded) await embedded.stop().catch(() => {});
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
}
count('\n');
if (code === 0 && totals.passed === 0) {
  console.error('no test ran');
  code = 1;
}
// One closing line for every package's suites together.
console.log(`\n${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
process.exit(code);
