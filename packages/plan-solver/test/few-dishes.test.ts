import { expect } from 'chai';
import { solvePlan } from '../src/index.js';
import { dish, input, rule } from './fixtures.js';

/*
 * A few own dishes over several weeks make many pairs too close unavoidable; proving the least
 * softCost of such a plan can outlast any time limit, and the run used to end `failed`. The solver
 * now answers the best plan it found by then (every Hard rule holding), and its cuts prove the
 * small cases outright.
 */
describe('a plan from a few dishes over weeks', function () {
  this.timeout(60_000);

  it('three dishes over four weeks: a plan with a dinner every day, not a timeout', async () => {
    const candidates = [dish('a', 'Fish'), dish('b', 'Meat'), dish('c', 'Pasta')];
    const result = await solvePlan(input({ weeks: 4, candidates }), { timeLimitMs: 5000 });
    expect(result.status).to.equal('done');
    expect(result.days).to.have.length(28);
    for (const d of result.days) expect(d.dish, d.date).to.not.equal(null);
    expect(result.softCost).to.equal(result.unmet.reduce((s, u) => s + u.cost, 0));
    expect(result.unmet.map((u) => u.ruleId)).to.deep.equal([null]);
  });

  it('a Hard RepeatAfterDays still holds in a plan answered at the limit', async () => {
    const candidates = Array.from({ length: 8 }, (_, i) => dish(`d${i}`, i % 2 ? 'Fish' : 'Meat'));
    const repeat = rule({ kind: 'RepeatAfterDays', days: 5 });
    const soft = rule({ kind: 'RepeatAfterDays', days: 14 }, { strength: 'Soft' });
    const result = await solvePlan(input({ weeks: 4, candidates, rules: [repeat, soft] }), { timeLimitMs: 5000 });
    expect(result.status).to.equal('done');
    const last = new Map<string, number>();
    result.days.forEach((d, i) => {
      const seen = last.get(d.dish!.id);
      if (seen !== undefined) expect(i - seen, `${d.dish!.id} on ${d.date}`).to.be.at.least(5);
      last.set(d.dish!.id, i);
    });
  });

  it('three dishes over one week: the least softCost, proven (5 pairs too close)', async () => {
    const candidates = [dish('a', 'Fish'), dish('b', 'Meat'), dish('c', 'Pasta')];
    const result = await solvePlan(input({ weeks: 1, candidates }), { timeLimitMs: 20_000 });
    expect(result.status).to.equal('done');
    expect(result.softCost).to.equal(5);
  });
});
