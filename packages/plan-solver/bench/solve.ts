/**
 * The solver alone, in this thread: CPU ms per plan (p50/p95) for issue 46's three cases, and a
 * greedy baseline's softCost beside the plan's. `npm run bench -w @svc/plan-solver [-- --runs N]`.
 */

import { solvePlan } from '../src/index.js';
import { highs } from '../src/model.js';
import { type HouseholdShape, household } from '../src/testing.js';
import { greedy } from './greedy.js';

const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 5;
const only = process.argv.indexOf('--case') > 0 ? process.argv[process.argv.indexOf('--case') + 1] : undefined;

const cases: { name: string; shape: Omit<HouseholdShape, 'seed'> }[] = [
  { name: '1 week / 50 dishes / 10 rules', shape: { weeks: 1, ownDishes: 50, starterDishes: 0, rules: 10 } },
  { name: '4 weeks / 300 dishes / 30 rules', shape: { weeks: 4, ownDishes: 300, starterDishes: 0, rules: 30 } },
  { name: '4 weeks / 2,000 own + 130 starter / 50 rules', shape: { weeks: 4, ownDishes: 2000, starterDishes: 130, rules: 50 } },
];

const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
};

await highs();
// Warm the WebAssembly code (V8 tiers it up in the background after the first runs).
for (let i = 0; i < 3; i++) await solvePlan(household({ ...cases[0]!.shape, seed: 1000 + i }));

console.log(`| case | runs | CPU ms p50 | CPU ms p95 | wall ms p50 | softCost (plan) | softCost (greedy) | infeasible |`);
console.log(`|---|---|---|---|---|---|---|---|`);
for (const c of cases) {
  if (only && !c.name.startsWith(only)) continue;
  const cpu: number[] = [];
  const wall: number[] = [];
  let planCost = 0;
  let greedyCost = 0;
  let infeasible = 0;
  for (let seed = 1; seed <= RUNS; seed++) {
    const input = household({ ...c.shape, seed });
    const before = process.cpuUsage();
    const t = performance.now();
    const result = await solvePlan(input);
    wall.push(performance.now() - t);
    cpu.push(cpuMs(process.cpuUsage(before)));
    if (result.status === 'done') {
      planCost += result.softCost;
      const g = greedy(input);
      greedyCost += g.softCost + (g.hardBroken ? 0 : 0);
    } else infeasible++;
  }
  const f = (x: number) => x.toFixed(0);
  console.log(
    `| ${c.name} | ${RUNS} | ${f(quantile(cpu, 0.5))} | ${f(quantile(cpu, 0.95))} | ${f(quantile(wall, 0.5))} | ${planCost} | ${greedyCost} | ${infeasible} |`,
  );
}
