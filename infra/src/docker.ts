/** Reading infra/Dockerfile and the root .dockerignore without a Docker engine. */
import fs from 'node:fs';
import path from 'node:path';

export interface Instruction {
  keyword: string;
  /** Everything after the keyword, continuation lines joined. */
  args: string;
  line: number;
}

export interface Stage {
  /** FROM argument: an image, or the name of an earlier stage. */
  from: string;
  name?: string;
  instructions: Instruction[];
}

/** Instructions of a Dockerfile, grouped by stage (comments and parser directives dropped). */
export function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const start = i;
    let line = lines[i]!;
    if (/^\s*(#|$)/.test(line)) continue;
    while (/\\\s*$/.test(line) && i + 1 < lines.length) {
      i++;
      const next = lines[i]!;
      if (/^\s*#/.test(next)) continue; // a comment inside a continued instruction is dropped
      line = `${line.replace(/\\\s*$/, '')} ${next.trim()}`;
    }
    const m = /^\s*(\w+)\s+(.*)$/.exec(line);
    if (!m) throw new Error(`Dockerfile line ${start + 1}: not an instruction: ${line}`);
    const keyword = m[1]!.toUpperCase();
    const args = m[2]!.trim();
    if (keyword === 'FROM') {
      const from = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
      if (!from) throw new Error(`Dockerfile line ${start + 1}: cannot read FROM ${args}`);
      stages.push({ from: from[1]!, name: from[2], instructions: [] });
    } else {
      const stage = stages.at(-1);
      if (!stage) throw new Error(`Dockerfile line ${start + 1}: ${keyword} before FROM`);
      stage.instructions.push({ keyword, args, line: start + 1 });
    }
  }
  return stages;
}

/** The stages from the external image down to `stage` (FROM <earlier stage> followed). */
export function stageChain(stages: Stage[], stage: Stage): Stage[] {
  const chain = [stage];
  for (let s = stage; ; ) {
    const parent = stages.find((x) => x.name !== undefined && x.name === s.from);
    if (!parent) return chain;
    chain.unshift(parent);
    s = parent;
  }
}

/** A .dockerignore as Docker reads it: anchored at the context root, `**` for any depth, `!` re-includes, last match wins. */
export class DockerIgnore {
  private readonly rules: { negate: boolean; re: RegExp }[] = [];

  constructor(text: string) {
    for (let raw of text.split('\n')) {
      raw = raw.trim();
      if (raw === '' || raw.startsWith('#')) continue;
      const negate = raw.startsWith('!');
      const pattern = path.posix.normalize((negate ? raw.slice(1) : raw).trim().replace(/^\/+/, '')).replace(/\/+$/, '');
      this.rules.push({ negate, re: DockerIgnore.toRegExp(pattern) });
    }
  }

  private static toRegExp(pattern: string): RegExp {
    let re = '';
    for (let i = 0; i < pattern.length; i++) {
      const c = pattern[i]!;
      if (c === '*' && pattern[i + 1] === '*') {
        // `**/` matches any number of directories, a trailing `**` anything
        if (pattern[i + 2] === '/') {
          re += '(?:.*/)?';
          i += 2;
        } else {
          re += '.*';
          i += 1;
        }
      } else if (c === '*') re += '[^/]*';
      else if (c === '?') re += '[^/]';
      else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
    }
    return new RegExp(`^${re}$`);
  }

  get hasExceptions(): boolean {
    return this.rules.some((r) => r.negate);
  }

  /** Whether a path (relative, with /) is left out of the context: it or a parent directory matches. */
  excludes(file: string): boolean {
    const parts = file.split('/');
    let excluded = false;
    for (let n = 1; n <= parts.length; n++) {
      const prefix = parts.slice(0, n).join('/');
      for (const rule of this.rules) if (rule.re.test(prefix)) excluded = !rule.negate;
    }
    return excluded;
  }
}

/** Every file under root that a `docker build` with this .dockerignore would send. */
export function buildContext(root: string, ignore: DockerIgnore): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      // An excluded directory is skipped whole unless some `!` rule might re-include below it.
      if (entry.isDirectory()) {
        if (!ignore.hasExceptions && ignore.excludes(child)) continue;
        walk(child);
      } else if (!ignore.excludes(child)) out.push(child);
    }
  };
  walk('');
  return out.sort();
}
