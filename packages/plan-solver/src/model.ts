import { createRequire } from 'node:module';
import type * as HighsModule from 'highs';
import { PlanSolverTimeout } from './errors.js';
import { evaluate } from './evaluate.js';
import { type BuiltLp, buildLp, type DishClass, weights } from './lp.js';
import { covers, type Dish, dayVerdict, type Problem, repeatWindow } from './prepare.js';

// The package's types describe one loader for both builds; its CommonJS build is loaded as they say.
const loadHighs = createRequire(import.meta.url)('highs') as () => Promise<HighsModule.Highs>;
type Highs = HighsModule.Highs;
let highsPromise: Promise<Highs> | undefined;

/** The HiGHS WebAssembly module, loaded once per thread. */
export function highs(): Promise<Highs> {
  highsPromise ??= loadHighs();
  return highsPromise;
}

export type ModelOutcome = { status: 'infeasible' } | { status: 'optimal'; chosen: (string | null)[]; solves: number; classes: number };

function buildClasses(problem: Problem, exactKeys: ReadonlySet<string>, counting: boolean): DishClass[] {
  const { input, days } = problem;
  const reach = Math.max(0, ...problem.repeats.map((r) => r.days));
  const fixedTouched = (dish: Dish): boolean => {
    const fixed = problem.fixedByDish.get(dish.key);
    return !!fixed && fixed.some((f) => f >= problem.startNum - reach);
  };
  // A starter dish reused in a week costs nothing in softCost where no repeat window spans the
  // week; only then can a class of new dishes not be counted by its dinners.
  let sameWeekCostly = true;
  for (const day of days) if (repeatWindow(problem, day.dayNum) <= day.index % 7) sameWeekCostly = false;

  const byAttributes = new Map<string, Dish[]>();
  const singles: Dish[] = [];
  for (const dish of problem.dishes) {
    if (fixedTouched(dish) || exactKeys.has(dish.key)) {
      singles.push(dish);
      continue;
    }
    const key = `${dish.category}\u0000${dish.activeMinutes}\u0000${dish.priceClass}\u0000${dish.origin}\u0000${dish.isNew}\u0000${dish.madeAgain}`;
    const group = byAttributes.get(key);
    if (group) group.push(dish);
    else byAttributes.set(key, [dish]);
  }
  const verdictOf = (dish: Dish) => days.map((day) => (day.planned ? dayVerdict(problem, day, dish) : null));
  const flags = (dish: Dish) => ({
    starter: input.preferOwnRecipes && dish.origin === 'starter',
    isNew: counting && dish.isNew,
    madeAgain: input.madeAgainLift && dish.madeAgain,
  });
  const classes: DishClass[] = [];
  const bySignature = new Map<string, DishClass>();
  for (const group of byAttributes.values()) {
    const first = group[0]!;
    const verdict = verdictOf(first);
    const f = flags(first);
    const signature = `${first.category}\u0000${f.starter}${f.isNew}${f.madeAgain}\u0000${verdict.join(',')}`;
    const existing = bySignature.get(signature);
    if (existing) existing.members.push(...group);
    else {
      const c: DishClass = { members: [...group], exact: false, category: first.category, ...f, verdict };
      bySignature.set(signature, c);
      classes.push(c);
    }
  }
  for (const c of classes) {
    c.members.sort((a, b) => (a.key < b.key ? -1 : 1));
    if (c.isNew && !sameWeekCostly) {
      for (const dish of c.members) singles.push(dish);
      c.members = [];
    }
  }
  const out = classes.filter((c) => c.members.length > 0);
  singles.sort((a, b) => (a.key < b.key ? -1 : 1));
  for (const dish of singles) out.push({ members: [dish], exact: true, category: dish.category, ...flags(dish), verdict: verdictOf(dish) });
  return out;
}

/** Forbid an exact dish where a Hard repeat rule pairs it with a fixed dinner. */
function forbidFixedRepeats(problem: Problem, c: DishClass): void {
  const fixed = problem.fixedByDish.get(c.members[0]!.key);
  if (!fixed) return;
  for (const rep of problem.repeats) {
    if (!rep.hard) continue;
    for (const day of problem.days) {
      if (c.verdict[day.index] === null) continue;
      for (const f of fixed) {
        const before = f < day.dayNum && day.dayNum - f < rep.days && covers(rep, day.dayNum);
        const after = f > day.dayNum && f - day.dayNum < rep.days && covers(rep, f);
        if (before || after) c.verdict[day.index] = null;
      }
    }
  }
}

/**
 * Solves the plan's integer program, with the weighted lexicographic objective (softCost, then
 * preference cost, then the service's own tie-breaks). Answers the dish key of each planned day.
 */
export async function solveModel(problem: Problem, deadline: number): Promise<ModelOutcome> {
  const h = await highs();
  const { input } = problem;
  const counting = problem.costs && !input.alwaysNewDishes && input.maxNewDishesPerWeek < 7;
  const exactKeys = new Set<string>();
  let solves = 0;
  const run = (lp: BuiltLp | null, incumbent = false): Solved => {
    if (!lp) return { status: 'infeasible' };
    solves++;
    return runLp(h, problem, lp, deadline, incumbent);
  };
  for (;;) {
    const classes = buildClasses(problem, exactKeys, counting);
    for (const c of classes) if (c.exact) forbidFixedRepeats(problem, c);
    // The relaxation: a class's dishes may repeat among themselves for free (so a class another
    // one beats is never needed).
    const beaten = dominated(classes, () => true);
    const relaxed = run(buildLp(problem, classes, counting, new Set(), new Set(beaten.keys())), problem.costs);
    if (relaxed.status === 'infeasible') return { status: 'infeasible' };
    const first = deal(problem, classes, relaxed.chosenClass);
    if (first.failed.length === 0) return { status: 'optimal', chosen: first.chosen, solves, classes: classes.length };
    const repaired = repair(problem, classes, relaxed.chosenClass);
    if (repaired) return { status: 'optimal', chosen: repaired.chosen, solves, classes: classes.length };
    // Out of time: the plan the solve found, dealt, when it holds every Hard rule (a Soft repeat may break), else the timeout.
    const lastPlan = (solved: Solved & { status: 'optimal' }): ModelOutcome => {
      const chosen = repair(problem, classes, solved.chosenClass)?.chosen ?? deal(problem, classes, solved.chosenClass).chosen;
      if (evaluate(problem, chosen).hardBroken.length > 0) throw new PlanSolverTimeout(0);
      return { status: 'optimal', chosen, solves, classes: classes.length };
    };
    if (relaxed.timedOut) return lastPlan(relaxed);
    // Restrictions: no class chosen more often than it has dishes in any repeat window, which the
    // dealing always serves; any set of classes may be offered. When one costs what the
    // relaxation costs, it is a least plan. First the classes that ran out (with the classes they
    // beat back in), added as they run out; then every class.
    const longest = Math.max(0, ...problem.repeats.map((r) => r.days));
    const small = classes.filter((c) => !c.exact && c.members.length < longest);
    // A class that runs out sends the plan to its group's next class: window the whole group.
    const group = (c: DishClass) => `${c.category}\u0000${c.starter}${c.isNew}${c.madeAgain}`;
    const windowed = new Set<DishClass>();
    const windowGroups = (failed: DishClass[]) => {
      const keys = new Set(failed.map(group));
      for (const c of small) if (keys.has(group(c))) windowed.add(c);
      for (const c of failed) windowed.add(c);
    };
    windowGroups(first.failed);
    const matches = (x: Solved): x is Solved & { status: 'optimal' } =>
      x.status === 'optimal' && x.objective.softCost === relaxed.objective.softCost && x.objective.preference === relaxed.objective.preference;
    for (let round = 0; round < 6; round++) {
      const left = new Set<DishClass>();
      for (const [b] of beaten) {
        let a: DishClass | undefined = b;
        let back = false;
        while (a) {
          if (windowed.has(a)) back = true;
          a = beaten.get(a);
        }
        if (!back) left.add(b);
      }
      const restricted = run(buildLp(problem, classes, counting, windowed, left), problem.costs);
      if (restricted.status === 'optimal' && restricted.timedOut) return lastPlan(restricted);
      if (!matches(restricted)) break;
      const next = deal(problem, classes, restricted.chosenClass);
      if (next.failed.length === 0) return { status: 'optimal', chosen: next.chosen, solves, classes: classes.length };
      const mended = repair(problem, classes, restricted.chosenClass);
      if (mended) return { status: 'optimal', chosen: mended.chosen, solves, classes: classes.length };
      windowGroups(next.failed);
    }
    const restricted = run(buildLp(problem, classes, counting, new Set(small), new Set()), problem.costs);
    if (restricted.status === 'optimal' && restricted.timedOut) return lastPlan(restricted);
    if (matches(restricted)) {
      const next = deal(problem, classes, restricted.chosenClass);
      if (next.failed.length === 0) return { status: 'optimal', chosen: next.chosen, solves, classes: classes.length };
    }
    for (const c of first.failed) for (const dish of c.members) exactKeys.add(dish.key);
  }
}

/** Branch-and-bound nodes a solve may take before it answers the best plan it found: a limit of work, not of time, so the same input still gives the same plan. */
const MAX_NODES = 1000;

type Solved =
  | { status: 'infeasible' }
  | { status: 'optimal'; chosenClass: (DishClass | null)[]; objective: { softCost: number; preference: number }; timedOut?: boolean };

/**
 * One solve. `incumbent`: at the time limit, a solve that has found a plan holding every Hard rule
 * answers it (`timedOut`) instead of throwing: a few dishes over weeks can keep HiGHS proving the
 * least softCost past any limit long after it found it, and a plan is better than a failed run.
 */
function runLp(h: Highs, problem: Problem, built: BuiltLp, deadline: number, incumbent = false): Solved {
  const { lp, dayCols } = built;
  const remaining = deadline - performance.now();
  if (remaining <= 0) throw new PlanSolverTimeout(0);
  const model = h.createModel({
    numCols: lp.cost.length,
    numRows: lp.rowLower.length,
    colCost: lp.cost,
    colLower: lp.lower,
    colUpper: lp.upper,
    rowLower: lp.rowLower,
    rowUpper: lp.rowUpper,
    matrix: { format: 'csr', numRows: lp.rowLower.length, numCols: lp.cost.length, starts: lp.starts, indices: lp.indices, values: lp.values },
    integrality: Int32Array.from(lp.integer),
  });
  const { A, B, tieMax } = weights(problem.days.length);
  try {
    model.options.set({
      output_flag: false,
      mip_rel_gap: 0,
      // Below the weight of one preference unit: softCost and preference cost are proven least.
      mip_abs_gap: problem.costs ? tieMax + 1 : 0.5,
      time_limit: Math.min(remaining, 1e9) / 1000,
      random_seed: 0,
      ...(incumbent ? { mip_max_nodes: MAX_NODES } : {}),
    });
    const codes = h.constants.modelStatus;
    let timedOut = false;
    const check = () => {
      const status = model.getModelStatus();
      if (status === codes.timeLimit || status === codes.solutionLimit) {
        // 2: a feasible primal solution (HiGHS' kSolutionStatusFeasible).
        if (incumbent && Number(model.info.get('primal_solution_status')) === 2) {
          timedOut = true;
          return true;
        }
        throw new PlanSolverTimeout(Math.round(remaining));
      }
      if (status !== codes.optimal && status !== codes.infeasible) throw new Error(`plan-solver: HiGHS ended with model status ${status}`);
      return status === codes.optimal;
    };
    const run = () => {
      model.run();
      // The node limit reached before any plan was found: go on until the time limit.
      if (model.getModelStatus() === codes.solutionLimit && Number(model.info.get('primal_solution_status')) !== 2) {
        model.options.set({ mip_max_nodes: 2 ** 31 - 1 });
        model.run();
      }
    };
    // The linear relaxation first: these models are near assignment problems and their LP optimum
    // is often integral, which makes it the integer optimum without the MIP's root work.
    model.options.set({ solver: 'simplex' });
    run();
    if (!check()) return { status: 'infeasible' };
    let values = model.getSolution().colValue;
    const integral = lp.integer.every((isInteger, j) => isInteger === 0 || Math.abs(values[j]! - Math.round(values[j]!)) < 1e-9);
    if (!integral) {
      model.options.set({ solver: 'choose' });
      run();
      if (!check()) return { status: 'infeasible' };
      values = model.getSolution().colValue;
    }
    const chosenClass: (DishClass | null)[] = problem.days.map(() => null);
    for (const [dayIndex, cols] of dayCols) for (const [col, c] of cols) if (values[col]! > 0.5) chosenClass[dayIndex] = c;
    const objective = Math.round(model.getObjectiveValue());
    const softCost = problem.costs ? Math.floor(objective / A) : 0;
    const preference = problem.costs ? Math.floor((objective - softCost * A) / B) : 0;
    return { status: 'optimal', chosenClass, objective: { softCost, preference }, ...(timedOut ? { timedOut } : {}) };
  } finally {
    model.dispose();
  }
}

/**
 * Classes another class beats on every day (allowed wherever it is, no more Soft units, the same
 * category and costs): a plan never needs them unless the better class runs out of dishes, so
 * they are left out where `unlimited` says the better class cannot run out.
 */
function dominated(classes: readonly DishClass[], unlimited: (c: DishClass) => boolean): Map<DishClass, DishClass> {
  const out = new Map<DishClass, DishClass>();
  const groups = new Map<string, DishClass[]>();
  for (const c of classes) {
    if (c.exact) continue;
    const key = `${c.category}\u0000${c.starter}${c.isNew}${c.madeAgain}`;
    const g = groups.get(key);
    if (g) g.push(c);
    else groups.set(key, [c]);
  }
  const beats = (a: DishClass, b: DishClass) => a.verdict.every((v, i) => b.verdict[i] === null || (v !== null && v <= b.verdict[i]!));
  for (const g of groups.values()) {
    for (const b of g) {
      for (const a of g) {
        if (a === b || out.has(a) || !unlimited(a) || !beats(a, b)) continue;
        // Of two equal classes keep the first.
        if (beats(b, a) && g.indexOf(b) < g.indexOf(a)) continue;
        out.set(b, a);
        break;
      }
    }
  }
  return out;
}

/** Deals each class's days to its dishes, least recently used first; a class whose dealing repeats a dish inside a repeat window fails. */
function deal(
  problem: Problem,
  classes: DishClass[],
  chosenClass: (DishClass | null)[],
): { chosen: (string | null)[]; failed: DishClass[]; failedDays: number[] } {
  const chosen: (string | null)[] = problem.days.map(() => null);
  const failed = new Set<DishClass>();
  const failedDays: number[] = [];
  const lastUse = new Map<DishClass, number[]>();
  for (const c of classes)
    lastUse.set(
      c,
      c.members.map(() => -Infinity),
    );
  for (const day of problem.days) {
    const c = chosenClass[day.index];
    const uses = c && lastUse.get(c);
    if (!c || !uses) continue;
    let best = 0;
    for (let i = 1; i < uses.length; i++) if (uses[i]! < uses[best]!) best = i;
    if (!c.exact && day.dayNum - uses[best]! < repeatWindow(problem, day.dayNum)) {
      failed.add(c);
      failedDays.push(day.index);
    }
    uses[best] = day.dayNum;
    chosen[day.index] = c.members[best]!.key;
  }
  return { chosen, failed: [...failed], failedDays };
}

/**
 * Moves a day whose dealing repeats a dish to another class that costs exactly the same there
 * (same category, marks and day verdict), as long as that class deals without a repeat. The plan
 * keeps every cost of the relaxation's, so when the dealing then succeeds it is a least plan.
 */
function repair(problem: Problem, classes: DishClass[], relaxedChoice: (DishClass | null)[]): { chosen: (string | null)[] } | null {
  const chosenClass = [...relaxedChoice];
  const same = (a: DishClass, b: DishClass) => a.category === b.category && a.starter === b.starter && a.isNew === b.isNew && a.madeAgain === b.madeAgain;
  for (let step = 0; step < problem.days.length * 2; step++) {
    const dealt = deal(problem, classes, chosenClass);
    if (dealt.failed.length === 0) return { chosen: dealt.chosen };
    const t = dealt.failedDays[0]!;
    const from = chosenClass[t]!;
    let moved = false;
    for (const to of classes) {
      if (to === from || to.exact || !same(from, to) || to.verdict[t] !== from.verdict[t]) continue;
      chosenClass[t] = to;
      if (!deal(problem, [to], chosenClass).failed.includes(to)) {
        moved = true;
        break;
      }
      chosenClass[t] = from;
    }
    if (!moved) return null;
  }
  return null;
}
