#!/usr/bin/env node
// Builds what @svc/api needs (turbo: only what changed, the rest from its cache) without turbo's
// banner and summary: they are kept back and shown on stderr only when the build fails.
// `--announce` first says so on stdout, one line in the format of the service's log (readable on a
// terminal outside production, else a JSON line), so that a first start (half a minute of build)
// is not silent. Used by `npm start`, `npm run migrate` and the admin CLI (services/api/bin/admin.js).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repository = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const announce = process.argv.includes('--announce');
const pretty = process.env.LOG_FORMAT === 'pretty' || (process.env.LOG_FORMAT !== 'json' && process.stdout.isTTY && process.env.NODE_ENV !== 'production');

function say(msg, fields = {}) {
  if (!announce) return;
  if (pretty) {
    const time = new Date().toTimeString().slice(0, 8);
    const extra = Object.keys(fields).length ? ` ${JSON.stringify(fields)}` : '';
    process.stdout.write(`[${time}] INFO: ${msg}${extra}\n`);
  } else {
    process.stdout.write(`${JSON.stringify({ level: 30, time: new Date().toISOString(), name: 'build', msg, ...fields })}\n`);
  }
}

const turbo = createRequire(import.meta.url).resolve('turbo/bin/turbo');
say('building the service (turbo: only what changed)');
const started = performance.now();
const child = spawn(process.execPath, [turbo, 'run', 'build', '--filter=@svc/api...', '--output-logs=errors-only'], {
  cwd: repository,
  stdio: ['ignore', 'pipe', 'pipe'],
  env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' },
});
const output = [];
child.stdout.on('data', (d) => output.push(d));
child.stderr.on('data', (d) => output.push(d));
// A Ctrl-C reaches turbo too (same process group); this script only reports how it ended.
process.on('SIGINT', () => {});
child.on('error', (err) => {
  process.stderr.write(`build: could not run turbo: ${err.message}\n`);
  process.exit(1);
});
child.on('close', (code, signal) => {
  if (code === 0) {
    say('built', { ms: Math.round(performance.now() - started) });
    return;
  }
  process.stderr.write(Buffer.concat(output));
  process.stderr.write(`build: failed (${signal ?? `exit ${code}`})\n`);
  process.exit(code || 1);
});
