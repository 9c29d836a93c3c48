/**
 * The system's Chromium for the browser tests (Debian's `chromium`, driven by playwright-core),
 * installed with apt-get when missing. Where it cannot be installed the tests skip with the reason,
 * except under CI (`CI` set), where that is a failure (each suite's `before` decides).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

const CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter((p): p is string => Boolean(p));

const findChromium = () => CANDIDATES.find((p) => fs.existsSync(p));

/** The chromium binary, installed with apt-get when missing; or why it cannot be had. */
export function ensureChromium(): { path: string } | { reason: string } {
  const found = findChromium();
  if (found) return { path: found };
  if (process.getuid?.() !== 0) return { reason: 'chromium is not installed and apt-get needs root' };
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const update = spawnSync('apt-get', ['update'], { encoding: 'utf8', env, timeout: 300_000 });
  if (update.status !== 0) return { reason: `apt-get update failed: ${(update.stderr || update.error?.message || '').trim().split('\n').at(-1)}` };
  const install = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], { encoding: 'utf8', env, timeout: 600_000 });
  const installed = findChromium();
  if (install.status !== 0 || !installed)
    return { reason: `apt-get install chromium failed: ${(install.stderr || install.error?.message || '').trim().split('\n').at(-1)}` };
  return { path: installed };
}

/** The launch flags: headless, nothing phoning home, a profile of its own. */
export const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
