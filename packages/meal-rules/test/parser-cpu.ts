// CPU per sentence of the offline parser over the three held-out tables (issues 36 and 45: under 2 ms).
// Run: npm run bench:parse -w @svc/meal-rules (no test times it: the numbers go in the README).
import { HELD_OUT } from './parser-heldout.js';
import { HELD_OUT_2 } from './parser-heldout-2.js';
import { HELD_OUT_3 } from './parser-heldout-3.js';
import { runCase } from './parser-score.js';

const all = [...HELD_OUT, ...HELD_OUT_2, ...HELD_OUT_3];
// the tables are built when the parser module loads: the first parses after the import (ten
// sentences not seen before) cost about what later ones do (issue 45: the first at most 2× the tenth)
const firstTen = all.slice(0, 10).map((c) => {
  const s = process.cpuUsage();
  runCase(c);
  const d = process.cpuUsage(s);
  return d.user + d.system;
});
// one round first, so what is timed below is the warm parser
for (const c of all) runCase(c);
const rounds = Number(process.env.ROUNDS ?? 30);
const best = all.map(() => Number.POSITIVE_INFINITY);
const start = process.cpuUsage();
for (let i = 0; i < rounds; i++) {
  all.forEach((c, k) => {
    const s = process.cpuUsage();
    runCase(c);
    const d = process.cpuUsage(s);
    best[k] = Math.min(best[k] ?? Number.POSITIVE_INFINITY, d.user + d.system);
  });
}
const total = process.cpuUsage(start);
const ms = (us: number) => (us / 1000).toFixed(3);
const slowest = Math.max(...best);
console.log(`${all.length} sentences × ${rounds} rounds: ${ms((total.user + total.system) / (rounds * all.length))} ms of CPU per sentence on average`);
console.log(`first ten parses after the import: ${firstTen.map(ms).join(', ')} ms (first ${ms(firstTen[0] ?? 0)}, tenth ${ms(firstTen[9] ?? 0)})`);
console.log(`slowest sentence (best of its ${rounds} runs): ${ms(slowest)} ms, ${JSON.stringify(all[best.indexOf(slowest)]?.text)}`);
