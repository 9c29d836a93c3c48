import { countedWeeks, covers, type Day, type Dish, type Problem, repeatWindow } from './prepare.js';

// The linear model's matrix, its dish classes and how it is built from a problem (model.ts solves it).

/**
 * Dishes no rule, cap or cost can tell apart (the same verdict on every day, category, origin,
 * newness, madeAgain) form one class: the model chooses a class per day and the dishes are dealt
 * afterwards. Only RepeatAfterDays needs a dish's identity; a class the dealing cannot serve
 * without a repeat becomes exact (one class per dish), and so does every dish of a fixed dinner.
 */
export interface DishClass {
  members: Dish[];
  exact: boolean;
  category: string;
  starter: boolean;
  isNew: boolean;
  madeAgain: boolean;
  /** Per day index: null when the class may not be placed there, else its Soft day-rule units. */
  verdict: (number | null)[];
}

export class Lp {
  cost: number[] = [];
  lower: number[] = [];
  upper: number[] = [];
  integer: number[] = [];
  rowLower: number[] = [];
  rowUpper: number[] = [];
  starts: number[] = [0];
  indices: number[] = [];
  values: number[] = [];
  col(cost: number, lower: number, upper: number, integer: boolean): number {
    this.cost.push(cost);
    this.lower.push(lower);
    this.upper.push(upper);
    this.integer.push(integer ? 1 : 0);
    return this.cost.length - 1;
  }
  row(entries: readonly (readonly [number, number])[], lower: number, upper: number): void {
    for (const [c, v] of entries) {
      this.indices.push(c);
      this.values.push(v);
    }
    this.starts.push(this.indices.length);
    this.rowLower.push(lower);
    this.rowUpper.push(upper);
  }
}

/**
 * Objective weights: softCost ≫ preference cost ≫ the service's own choice. The tie-break is at
 * most 2·days − 1 (variety: at most 5 a week; madeAgain: one a day), preference cost at most
 * 2·days (a starter dinner a day, new dishes beyond the limit at most a dinner each).
 */
export function weights(dayCount: number): { A: number; B: number; tieMax: number } {
  const tieMax = 2 * dayCount - 1;
  const B = 2 * (tieMax + 1);
  const A = B * (2 * dayCount + 2);
  return { A, B, tieMax };
}

export type BuiltLp = { lp: Lp; dayCols: Map<number, [number, DishClass][]> };

export function buildLp(
  problem: Problem,
  allClasses: DishClass[],
  counting: boolean,
  windows: ReadonlySet<DishClass>,
  dropped: ReadonlySet<DishClass>,
): BuiltLp | null {
  const classes = allClasses.filter((c) => !dropped.has(c));
  const { input, days } = problem;
  const { A, B } = problem.costs ? weights(days.length) : { A: 0, B: 0 };
  const tie = problem.costs ? 1 : 0;
  const lp = new Lp();
  const dayCols = new Map<number, [number, DishClass][]>();
  const colOf = new Map<DishClass, Map<number, number>>();
  for (const c of classes) colOf.set(c, new Map());

  // Extra objective on an exact dish's day from Soft repeats with a later kept day.
  const extra = new Map<DishClass, Map<number, number>>();
  if (problem.costs) {
    for (const c of classes) {
      if (!c.exact) continue;
      const fixed = problem.fixedByDish.get(c.members[0]!.key);
      if (!fixed) continue;
      const m = new Map<number, number>();
      for (const rep of problem.repeats) {
        if (rep.hard) continue;
        for (const day of days) {
          if (c.verdict[day.index] === null) continue;
          let n = 0;
          for (const f of fixed) {
            if (f > day.dayNum && f - day.dayNum < rep.days && covers(rep, f)) n++;
            if (f < day.dayNum && day.dayNum - f < rep.days && covers(rep, day.dayNum) && !hasPlannedBetween(problem, c, rep.days, day)) n++;
          }
          if (n) m.set(day.index, (m.get(day.index) ?? 0) + n);
        }
      }
      extra.set(c, m);
    }
  }

  for (const day of days) {
    if (!day.planned) continue;
    const cols: [number, DishClass][] = [];
    for (const c of classes) {
      const v = c.verdict[day.index];
      if (v === null || v === undefined) continue;
      const cost = A * (v + (extra.get(c)?.get(day.index) ?? 0)) + B * (c.starter ? 1 : 0) + tie * (input.madeAgainLift && !c.madeAgain ? 1 : 0);
      const col = lp.col(cost, 0, 1, true);
      cols.push([col, c]);
      colOf.get(c)!.set(day.index, col);
    }
    if (cols.length === 0) return null;
    lp.row(
      cols.map(([col]) => [col, 1] as const),
      1,
      1,
    );
    dayCols.set(day.index, cols);
  }

  // CategoryFrequency: the dinners of the category in each counted week (kept days count).
  for (const r of problem.rules) {
    const p = r.rule.payload;
    if (p.kind !== 'CategoryFrequency') continue;
    for (const w of countedWeeks(problem, r)) {
      const entries: [number, number][] = [];
      let fixedCount = 0;
      for (const day of days.slice(w * 7, w * 7 + 7)) {
        if (day.keptKey && problem.dishByKey.get(day.keptKey)!.category === p.category) fixedCount++;
        for (const [col, c] of dayCols.get(day.index) ?? []) if (c.category === p.category) entries.push([col, 1]);
      }
      const lo = p.minimumPerWeek - fixedCount;
      const hi = p.maximumPerWeek - fixedCount;
      if (r.hard) {
        if (entries.length === 0) {
          if (lo > 0 || hi < 0) return null;
          continue;
        }
        if (hi < 0 || lo > entries.length) return null;
        lp.row(entries, lo, hi);
      } else if (entries.length > 0) {
        const under = lp.col(A, 0, Infinity, false);
        const over = lp.col(A, 0, Infinity, false);
        lp.row([...entries, [under, 1]], lo, Infinity);
        lp.row([...entries, [over, -1]], -Infinity, hi);
      }
    }
  }

  // RepeatAfterDays for exact dishes: Hard as pairs, Soft as the pairs ending on each day.
  for (const c of classes) {
    if (!c.exact) continue;
    const cols = colOf.get(c)!;
    const fixed = problem.fixedByDish.get(c.members[0]!.key) ?? [];
    for (const rep of problem.repeats) {
      const pairsAt = new Map<number, number>();
      for (const day of days) {
        const t = cols.get(day.index);
        if (t === undefined || !covers(rep, day.dayNum)) continue;
        const window: number[] = [];
        for (const other of days) {
          if (other.dayNum >= day.dayNum || day.dayNum - other.dayNum >= rep.days) continue;
          const col = cols.get(other.index);
          if (col !== undefined) window.push(col);
        }
        if (window.length === 0) continue;
        if (rep.hard) {
          for (const col of window)
            lp.row(
              [
                [col, 1],
                [t, 1],
              ],
              -Infinity,
              1,
            );
        } else if (problem.costs) {
          const before = fixed.filter((f) => f < day.dayNum && day.dayNum - f < rep.days).length;
          const M = window.length + before;
          const pairs = lp.col(A, 0, Infinity, false);
          lp.row([...window.map((col) => [col, 1] as [number, number]), [t, M], [pairs, -1]], -Infinity, M - before);
          pairsAt.set(day.index, pairs);
        }
      }
      repeatBlockCuts(lp, problem, rep, cols, pairsAt);
    }
  }
  breakSymmetry(lp, problem, classes, colOf);

  // New starter dishes beyond maxNewDishesPerWeek (distinct dishes; a kept new dish counts too).
  if (counting) {
    for (let w = 0; w < problem.weeks; w++) {
      const week = days.slice(w * 7, w * 7 + 7);
      const keptNew = new Set<string>();
      for (const day of week) if (day.keptKey && problem.dishByKey.get(day.keptKey)!.isNew) keptNew.add(day.keptKey);
      const entries: [number, number][] = [];
      for (const c of classes) {
        if (!c.isNew) continue;
        const cols = week.map((d) => colOf.get(c)!.get(d.index)).filter((x): x is number => x !== undefined);
        if (cols.length === 0) continue;
        if (!c.exact) {
          for (const col of cols) entries.push([col, 1]);
        } else if (!keptNew.has(c.members[0]!.key)) {
          const used = lp.col(0, 0, 1, false);
          for (const col of cols)
            lp.row(
              [
                [col, 1],
                [used, -1],
              ],
              -Infinity,
              0,
            );
          entries.push([used, 1]);
        }
      }
      if (entries.length === 0) continue;
      const excess = lp.col(B, 0, Infinity, false);
      lp.row([...entries, [excess, -1]], -Infinity, input.maxNewDishesPerWeek - keptNew.size);
    }
  }
  for (const c of windows) {
    const cols = colOf.get(c)!;
    for (const day of days) {
      const n = repeatWindow(problem, day.dayNum);
      if (n <= 1 || cols.get(day.index) === undefined) continue;
      const entries: [number, number][] = [];
      for (const other of days) {
        const col = cols.get(other.index);
        if (col !== undefined && other.dayNum <= day.dayNum && day.dayNum - other.dayNum < n) entries.push([col, 1]);
      }
      if (entries.length > c.members.length) lp.row(entries, -Infinity, c.members.length);
    }
  }

  // Variety (the service's choice): one unit per dinner beyond two of one category in a week.
  if (problem.costs) {
    for (let w = 0; w < problem.weeks; w++) {
      const week = days.slice(w * 7, w * 7 + 7);
      const byCategory = new Map<string, { entries: [number, number][]; days: Set<number> }>();
      const fixed = new Map<string, number>();
      for (const day of week) {
        if (day.keptKey) {
          const category = problem.dishByKey.get(day.keptKey)!.category;
          fixed.set(category, (fixed.get(category) ?? 0) + 1);
        }
        for (const [col, c] of dayCols.get(day.index) ?? []) {
          let list = byCategory.get(c.category);
          if (!list) {
            list = { entries: [], days: new Set() };
            byCategory.set(c.category, list);
          }
          list.entries.push([col, 1]);
          list.days.add(day.index);
        }
      }
      for (const [category, { entries, days: open }] of byCategory) {
        const already = fixed.get(category) ?? 0;
        if (open.size + already <= 2) continue;
        const beyond = lp.col(tie, 0, Infinity, false);
        lp.row([...entries, [beyond, -1]], -Infinity, 2 - already);
      }
    }
  }
  return { lp, dayCols };
}

/** Whether a Soft pair with a fixed dinner before `day` is already counted by the day's pair row (planned days in its window). */
function hasPlannedBetween(problem: Problem, c: DishClass, n: number, day: Day): boolean {
  for (const other of problem.days) {
    if (other.dayNum < day.dayNum && day.dayNum - other.dayNum < n && c.verdict[other.index] !== null && other.planned) return true;
  }
  return false;
}

/**
 * Cuts that hold for every integer plan and tighten the linear relaxation of the exact dishes'
 * repeats (without them a few dishes over weeks leave HiGHS branching for minutes). In a block of
 * consecutive days shorter than the repeat window (its later days covered by the rule), any two
 * dinners of one dish are a pair too close: Hard, at most one dinner in it; Soft, the pairs ending in
 * the block number at least C(n, 2) for its n dinners, as the tangents k·n − k(k+1)/2.
 */
function repeatBlockCuts(
  lp: Lp,
  problem: Problem,
  rep: Problem['repeats'][number],
  cols: ReadonlyMap<number, number>,
  pairsAt: ReadonlyMap<number, number>,
): void {
  const { days } = problem;
  const length = Math.min(rep.days, days.length);
  if (length < 2) return;
  for (let start = 0; start + length <= days.length; start++) {
    const block = days.slice(start, start + length);
    if (!block.slice(1).every((d) => covers(rep, d.dayNum))) continue;
    const xs = block.map((d) => cols.get(d.index)).filter((x): x is number => x !== undefined);
    if (xs.length < 2) continue;
    if (rep.hard) {
      lp.row(
        xs.map((x) => [x, 1] as const),
        -Infinity,
        1,
      );
      continue;
    }
    const pairs = block.map((d) => pairsAt.get(d.index)).filter((x): x is number => x !== undefined);
    if (pairs.length === 0) continue;
    for (let k = 1; k < xs.length; k++)
      lp.row([...pairs.map((p) => [p, 1] as [number, number]), ...xs.map((x) => [x, -k] as [number, number])], (-k * (k + 1)) / 2, Infinity);
  }
}

/**
 * Exact dishes that nothing tells apart (no dinner of theirs before the plan or kept in it, the same
 * category, marks and day verdicts) can trade places in any plan at the same cost; of each such
 * group the plan uses them in order of first use (dish k+1 only after dish k has had a day), which
 * every optimum satisfies after renaming and spares HiGHS the mirror images.
 */
function breakSymmetry(lp: Lp, problem: Problem, classes: readonly DishClass[], colOf: ReadonlyMap<DishClass, Map<number, number>>): void {
  const groups = new Map<string, DishClass[]>();
  for (const c of classes) {
    if (!c.exact || problem.fixedByDish.has(c.members[0]!.key)) continue;
    const key = `${c.category}\u0000${c.starter}${c.isNew}${c.madeAgain}\u0000${c.verdict.join(',')}`;
    const g = groups.get(key);
    if (g) g.push(c);
    else groups.set(key, [c]);
  }
  for (const g of groups.values()) {
    for (let i = 1; i < g.length; i++) {
      const earlier = colOf.get(g[i - 1]!)!;
      const later = colOf.get(g[i]!)!;
      const before: number[] = [];
      for (const day of problem.days) {
        const x = later.get(day.index);
        if (x !== undefined) lp.row([[x, 1], ...before.map((b) => [b, -1] as [number, number])], -Infinity, 0);
        const y = earlier.get(day.index);
        if (y !== undefined) before.push(y);
      }
    }
  }
}
