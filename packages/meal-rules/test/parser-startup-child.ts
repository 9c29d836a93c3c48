// Run by parser-startup.test.ts in a fresh process: imports the parser, reports whether its tables
// were built by the import, and the CPU of the first ten parses (each a sentence not seen before).
import { lexiconsCompiled } from '../src/parser/annotate.js';
import { parseRulesOffline } from '../src/parser/index.js';
import { tablesBuilt } from '../src/parser/tolerant.js';

const builtAtImport = tablesBuilt() && lexiconsCompiled();
const cpuMs: number[] = [];
for (let i = 0; i < 10; i++) {
  const text = `fisk ${(i % 3) + 1} ganger i uka, ikke kjøtt på mandgr, middag kl 17.${10 + i} på hverdagr og ingen sopp`;
  const start = process.cpuUsage();
  parseRulesOffline(text, { today: '2026-11-22' });
  const d = process.cpuUsage(start);
  cpuMs.push((d.user + d.system) / 1000);
}
process.stdout.write(`${JSON.stringify({ builtAtImport, cpuMs })}\n`);
