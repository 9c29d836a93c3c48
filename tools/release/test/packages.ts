import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** The packages that are released on their own (not private): directory and package.json. */
export function publishable(): { dir: string; name: string; version: string; json: Record<string, unknown> }[] {
  const base = path.join(ROOT, 'packages');
  return fs
    .readdirSync(base)
    .map((dir) => ({ dir, json: JSON.parse(fs.readFileSync(path.join(base, dir, 'package.json'), 'utf8')) as Record<string, unknown> }))
    .filter(({ json }) => json.private !== true)
    .map(({ dir, json }) => ({ dir: path.join(base, dir), name: String(json.name), version: String(json.version), json }));
}

/** What `npm pack` would put in the tarball (paths inside `package/`). */
export function packList(dir: string): string[] {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const [info] = JSON.parse(out) as { files: { path: string }[] }[];
  return info!.files.map((f) => f.path).sort();
}

/** Packs the package into `dest` and answers the tarball's path. */
export function pack(dir: string, dest: string): string {
  const out = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dest], {
    cwd: dir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const [info] = JSON.parse(out) as { filename: string }[];
  return path.join(dest, info!.filename);
}
