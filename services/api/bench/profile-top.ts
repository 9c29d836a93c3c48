/**
 * Top self time of a V8 .cpuprofile (as written by `node --cpu-prof`): the sampled time summed per
 * function (name + file:line) and per module (package, or node: internals), idle time left out.
 * run.ts calls it for each profile of `--profile`; it also runs on its own:
 *
 *   node services/api/bench/dist/bench/profile-top.js prof/me.cpuprofile [top=25]
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface SelfTime {
  name: string;
  ms: number;
  /** Share of the busy (non-idle) time. */
  share: number;
}

/** Where a script comes from: an npm package, a workspace package, this service, or node itself. */
function moduleOf(url: string): string {
  if (!url) return '(native / V8)';
  if (url.startsWith('node:')) return 'node: internals';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) {
    const pkg = nm[1]!;
    const ws = /node_modules\/(@svc\/[^/]+)/.exec(url);
    return ws ? ws[1]! : pkg;
  }
  const workspace = /\/packages\/([^/]+)\//.exec(url);
  if (workspace) return `@svc/${workspace[1]}`;
  if (/\/services\/api\//.test(url)) return '@svc/api';
  return url;
}

function shortUrl(url: string): string {
  if (!url) return '';
  const u = url.replace(/^file:\/\//, '');
  const nm = u.lastIndexOf('node_modules/');
  if (nm >= 0) return u.slice(nm + 'node_modules/'.length);
  const m = /\/(packages|services)\/(.*)$/.exec(u);
  return m ? `${m[1]}/${m[2]}` : u;
}

export function summarize(file: string): { busyMs: number; idleMs: number; functions: SelfTime[]; modules: SelfTime[] } {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const fn = new Map<string, number>();
  const mod = new Map<string, number>();
  let busy = 0;
  let idle = 0;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    const node = byId.get(id);
    if (!node) return;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') {
      idle += us;
      return;
    }
    busy += us;
    const key = url ? `${functionName || '(anonymous)'} ${shortUrl(url)}:${lineNumber + 1}` : functionName || '(anonymous)';
    fn.set(key, (fn.get(key) ?? 0) + us);
    const m = functionName.startsWith('(') ? functionName : moduleOf(url);
    mod.set(m, (mod.get(m) ?? 0) + us);
  });
  const list = (m: Map<string, number>) =>
    [...m.entries()].map(([name, us]) => ({ name, ms: us / 1000, share: busy ? us / busy : 0 })).sort((a, b) => b.ms - a.ms);
  return { busyMs: busy / 1000, idleMs: idle / 1000, functions: list(fn), modules: list(mod) };
}

/** Markdown tables of the top functions and modules; `cpuMsPerRequest` turns shares into µs per request. */
export function report(file: string, top = 25, cpuMsPerRequest?: number): string {
  const s = summarize(file);
  const perReq = (share: number) => (cpuMsPerRequest && Number.isFinite(cpuMsPerRequest) ? ` | ${Math.round(share * cpuMsPerRequest * 1000)}` : '');
  const head = cpuMsPerRequest && Number.isFinite(cpuMsPerRequest) ? ' | ≈ µs/request' : '';
  const rule = head ? '|---:' : '';
  const lines = [
    `${path.basename(file)}: ${Math.round(s.busyMs)} ms busy, ${Math.round(s.idleMs)} ms idle (whole process life: start-up, warm-up and every round)`,
    '',
    `| self time by function | ms | share${head} |`,
    `|---|---:|---:${rule}|`,
    ...s.functions.slice(0, top).map((f) => `| \`${f.name}\` | ${Math.round(f.ms)} | ${(f.share * 100).toFixed(1)} %${perReq(f.share)} |`),
    '',
    `| self time by module | ms | share${head} |`,
    `|---|---:|---:${rule}|`,
    ...s.modules.slice(0, 15).map((f) => `| ${f.name} | ${Math.round(f.ms)} | ${(f.share * 100).toFixed(1)} %${perReq(f.share)} |`),
  ];
  return lines.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const [file, top] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('usage: profile-top <file.cpuprofile> [top]\n');
    process.exit(2);
  }
  process.stdout.write(`${report(file, top ? Number(top) : 25)}\n`);
}
