import { randomUUID } from 'node:crypto';
import type { HouseholdRole } from '@svc/contracts';
import { expect } from 'chai';
import request from 'supertest';
import type { ParseRulesResponse, RuleParser } from '../src/index.js';
import { type Harness, SAMPLES, startHarness } from './helpers.js';

/** Answers one fixed proposal, so the role checks do not depend on the real parser. */
const cannedParser: RuleParser = {
  name: 'canned',
  async parse(): Promise<ParseRulesResponse> {
    return { proposals: [{ summary: 'Fish twice a week', request: structuredClone(SAMPLES.CategoryFrequency) as never }], leftoverDinners: null, unheard: [] };
  },
};

type Who = HouseholdRole | 'non-member' | 'signed out';

describe('meal rule roles', () => {
  let h: Harness;
  let app: Harness['app'];
  let householdId: string;
  const users = new Map<Who, string | undefined>();

  before(async () => {
    h = await startHarness();
    app = h.appWith({ parser: cannedParser });
  });
  after(async () => {
    await h.db.destroy();
  });
  beforeEach(async () => {
    await h.db.truncate();
    h.households.turnsSpent = [];
    householdId = h.households.household();
    for (const role of ['Owner', 'Adult', 'Junior'] as const) users.set(role, h.households.member(householdId, role));
    const elsewhere = h.households.household();
    users.set('non-member', h.households.member(elsewhere, 'Owner'));
    users.set('signed out', undefined);
  });

  async function existingRule(): Promise<string> {
    const res = await request(app)
      .post(`/api/v1/households/${householdId}/rules`)
      .set('X-Test-User', users.get('Owner') as string)
      .send(SAMPLES.RepeatAfterDays);
    expect(res.status).to.equal(201);
    return res.body.id;
  }

  const operations: { name: string; call: (ruleId: string) => request.Test; ok: number }[] = [
    { name: 'list', call: () => request(app).get(`/api/v1/households/${householdId}/rules`), ok: 200 },
    { name: 'defaults', call: () => request(app).get(`/api/v1/households/${householdId}/rules/defaults`), ok: 200 },
    { name: 'create', call: () => request(app).post(`/api/v1/households/${householdId}/rules`).send(SAMPLES.CategoryFrequency), ok: 201 },
    { name: 'parse', call: () => request(app).post(`/api/v1/households/${householdId}/rules/parse`).send({ text: 'fish twice a week' }), ok: 200 },
    { name: 'replace', call: (id) => request(app).patch(`/api/v1/households/${householdId}/rules/${id}`).send(SAMPLES.CategoryOnDay), ok: 200 },
    { name: 'delete', call: (id) => request(app).delete(`/api/v1/households/${householdId}/rules/${id}`), ok: 204 },
  ];
  const adultOnly = new Set(['create', 'parse', 'replace', 'delete']);

  const expected = (who: Who, op: string): number => {
    if (who === 'signed out') return 401;
    if (who === 'non-member') return 404;
    if (who === 'Junior' && adultOnly.has(op)) return 403;
    return operations.find((o) => o.name === op)?.ok as number;
  };

  for (const who of ['Owner', 'Adult', 'Junior', 'non-member', 'signed out'] as Who[]) {
    for (const op of operations) {
      const status = expected(who, op.name);
      it(`${op.name}: ${who} gets ${status}`, async () => {
        const ruleId = await existingRule();
        let req = op.call(ruleId);
        const user = users.get(who);
        if (user) req = req.set('X-Test-User', user);
        const res = await req;
        expect(res.status, JSON.stringify(res.body)).to.equal(status);
        const codes: Record<number, string> = { 401: 'unauthenticated', 403: 'forbidden', 404: 'not_found' };
        if (codes[status]) expect(res.body.code).to.equal(codes[status]);
        // A refused write leaves the rules as they were; a refused parse spends no turn.
        if (status >= 400) {
          const rules = await request(app)
            .get(`/api/v1/households/${householdId}/rules`)
            .set('X-Test-User', users.get('Owner') as string);
          expect(rules.body.map((r: { id: string; kind: string }) => [r.id, r.kind])).to.deep.equal([[ruleId, 'RepeatAfterDays']]);
          expect(h.households.turnsSpent).to.deep.equal([]);
        }
      });
    }
  }

  it('a member of another household cannot reach this one even with a real rule id (404, not 403)', async () => {
    const ruleId = await existingRule();
    const res = await request(app)
      .patch(`/api/v1/households/${householdId}/rules/${ruleId}`)
      .set('X-Test-User', users.get('non-member') as string)
      .send(SAMPLES.CategoryOnDay);
    expect(res.status).to.equal(404);
    const unknownHousehold = await request(app)
      .get(`/api/v1/households/${randomUUID()}/rules`)
      .set('X-Test-User', users.get('Owner') as string);
    expect(unknownHousehold.status).to.equal(404);
  });
});
