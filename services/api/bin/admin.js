#!/usr/bin/env node
// `npx meal-planner-admin <command>`: the operator CLI (src/admin.ts). In the repository it first
// builds what changed, as `npm run admin` does, quietly (the build's output, on stderr, only when it
// fails): stdout carries only the CLI's own output (with --json, one JSON document). Where there is nothing to build with
// (an image holds only the compiled code), it runs the compiled CLI as it is.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repository = path.resolve(here, '../../..');
let turbo;
try {
  turbo = createRequire(import.meta.url).resolve('turbo/bin/turbo');
} catch {
  turbo = undefined; // no devDependencies here: run what is compiled
}
const build = path.join(repository, 'scripts', 'build-api.mjs');
if (turbo && fs.existsSync(path.join(repository, 'turbo.json')) && fs.existsSync(build)) {
  // Quiet: turbo's banner and summary only when the build fails (scripts/build-api.mjs).
  const built = spawnSync(process.execPath, [build], { cwd: repository, stdio: ['ignore', 2, 2] });
  if (built.status !== 0) {
    process.stderr.write(`admin: the build failed (${built.error?.message ?? `exit ${built.status}`})\n`);
    process.exit(1);
  }
}
await import(pathToFileURL(path.join(here, '../dist/src/admin.js')).href);
