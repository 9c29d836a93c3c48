#!/usr/bin/env node
// Fails when a package's public surface changed without a changeset that says so.
//
// Each publishable package keeps its API Extractor report (`report.api.md`, written by
// `npm run api:update`, checked by `npm run api:check`). `.api-baseline/<dir>.api.md` is
// the report as it stood at the last release (`npm run release:version` refreshes it after
// `changeset version` has consumed the pending changesets). When a report differs from its
// baseline, a pending changeset must name the package; when a declaration of the baseline is gone
// or changed (a breaking change for consumers), that changeset must be a `major` one.
//
//   node scripts/check-changesets.mjs            check (CI)
//   node scripts/check-changesets.mjs --accept   the current reports become the baseline (release)
//   node scripts/check-changesets.mjs --root DIR check another checkout (tests)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const rootArg = args.indexOf('--root');
const root = rootArg >= 0 ? path.resolve(args[rootArg + 1]) : path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const accept = args.includes('--accept');
const baselineDir = path.join(root, '.api-baseline');

/** Packages with an API report: { dir, name, report }. */
function packages() {
  const base = path.join(root, 'packages');
  return fs
    .readdirSync(base)
    .filter((dir) => fs.existsSync(path.join(base, dir, 'report.api.md')))
    .map((dir) => ({
      dir,
      name: JSON.parse(fs.readFileSync(path.join(base, dir, 'package.json'), 'utf8')).name,
      report: fs.readFileSync(path.join(base, dir, 'report.api.md'), 'utf8'),
    }));
}

/** Pending changesets: package name → the strongest bump they ask for. */
export function pendingBumps(changesetDir) {
  const rank = { patch: 1, minor: 2, major: 3 };
  const bumps = new Map();
  if (!fs.existsSync(changesetDir)) return bumps;
  for (const file of fs.readdirSync(changesetDir)) {
    if (!file.endsWith('.md') || file === 'README.md') continue;
    const text = fs.readFileSync(path.join(changesetDir, file), 'utf8');
    const front = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text);
    if (!front) continue;
    for (const line of front[1].split(/\r?\n/)) {
      const m = /^\s*["']?([^"':]+)["']?\s*:\s*(patch|minor|major)\s*$/.exec(line);
      if (!m) continue;
      const [, name, bump] = m;
      if (!bumps.has(name) || rank[bump] > rank[bumps.get(name)]) bumps.set(name, bump);
    }
  }
  return bumps;
}

/** The declaration lines of a report (comments, imports and blank lines carry no surface). */
function declarations(report) {
  return report
    .split('\n')
    .map((line) => line.trimEnd())
    .filter(
      (line) =>
        line.trim() &&
        !line.trim().startsWith('//') &&
        !line.startsWith('import ') &&
        !line.startsWith('```') &&
        !line.startsWith('>') &&
        !line.startsWith('## '),
    );
}

const found = packages();
if (accept) {
  fs.mkdirSync(baselineDir, { recursive: true });
  for (const pkg of found) fs.writeFileSync(path.join(baselineDir, `${pkg.dir}.api.md`), pkg.report);
  console.log(`api baseline: ${found.length} reports accepted`);
  process.exit(0);
}

const bumps = pendingBumps(path.join(root, '.changeset'));
const problems = [];
for (const pkg of found) {
  const file = path.join(baselineDir, `${pkg.dir}.api.md`);
  if (!fs.existsSync(file)) {
    problems.push(`${pkg.name}: no API baseline (.api-baseline/${pkg.dir}.api.md); add a changeset and run npm run release:version`);
    continue;
  }
  const baseline = fs.readFileSync(file, 'utf8');
  if (baseline === pkg.report) continue;
  const now = new Set(declarations(pkg.report));
  const gone = declarations(baseline).filter((line) => !now.has(line));
  const bump = bumps.get(pkg.name);
  if (!bump) {
    problems.push(`${pkg.name}: its public API changed since the last release but no changeset names it (npm run changeset)`);
  } else if (gone.length && bump !== 'major') {
    problems.push(
      `${pkg.name}: a declaration was removed or changed (a breaking change), so its changeset must be major, not ${bump}:\n    ${gone.slice(0, 5).join('\n    ')}`,
    );
  }
}
if (problems.length) {
  console.error(`API reports and changesets disagree:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`api reports: ${found.length} packages match their baseline or carry a changeset`);
