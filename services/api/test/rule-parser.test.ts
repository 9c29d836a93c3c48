/**
 * POST …/rules/parse through the composed service with the real credit ledger of @svc/households
 * and RULE_PARSER_URL pointing at a local fake language model: a turn is charged only for a
 * reading that succeeded, in the transaction that decides the answer, also under parallel requests.
 */
import { FakeChatModel } from '@svc/test-support';
import { expect } from 'chai';
import type request from 'supertest';
import { type Harness, signUp, startHarness } from './harness.js';

const FISH = {
  summary: 'Fish 2–3 times a week',
  request: {
    payload: { kind: 'CategoryFrequency', category: 'Fish', minimumPerWeek: 2, maximumPerWeek: 3 },
    strength: 'Hard',
    scope: 'Permanent',
    startDate: null,
    endDate: null,
  },
};

describe('rule parsing with a language model and the real credit ledger', function () {
  this.timeout(60_000);
  const model = new FakeChatModel();
  let h: Harness;
  let owner: request.Agent;
  let n = 0;

  before(async () => {
    await model.start();
    h = await startHarness({ RULE_PARSER_URL: model.url, RULE_PARSER_MODEL: 'tiny-llm', AI_TURNS_PER_MONTH: '3', WELCOME_CREDITS: '0' });
    owner = await signUp(h.app, 'parser-owner@example.com');
  });
  after(async () => {
    await h.close();
    await model.stop();
  });
  beforeEach(() => {
    model.requests.length = 0;
    model.answerWith({ proposals: [FISH], leftoverDinners: null, unheard: [] });
  });

  async function household(): Promise<string> {
    const created = await owner.post('/api/v1/households').send({ name: `Parsers ${++n}`, timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    return created.body.id as string;
  }
  const parse = (id: string, text = 'fish twice a week') => owner.post(`/api/v1/households/${id}/rules/parse`).send({ text });
  const spent = async (id: string) => (await h.service.households.admin.creditBalance(id)).allowance.spent;

  it("charges one turn for the model's answer, and none when the model fails (the offline answer comes free)", async () => {
    const id = await household();
    const answered = await parse(id);
    expect(answered.status, JSON.stringify(answered.body)).to.equal(200);
    expect(answered.body.proposals[0]).to.deep.equal(FISH);
    expect(await spent(id)).to.equal(1);

    model.behaviour = { status: 500 };
    const fallback = await parse(id);
    expect(fallback.status).to.equal(200);
    expect(fallback.body.proposals.map((p: { request: { payload: { category: string } } }) => p.request.payload.category)).to.deep.equal(['Fish']);
    model.behaviour = { answer: 'not json' };
    expect((await parse(id)).status).to.equal(200);
    expect(await spent(id), 'failed readings are rolled back with their turn').to.equal(1);
  });

  it('with 3 turns, 6 parallel parses: 3 answered and charged, 3 refused with 429 before the model is asked', async () => {
    const id = await household();
    const answers = await Promise.all(Array.from({ length: 6 }, () => parse(id)));
    expect(answers.map((r) => r.status).sort()).to.deep.equal([200, 200, 200, 429, 429, 429]);
    expect(answers.filter((r) => r.status === 429).map((r) => r.body.code)).to.deep.equal(['quota_exceeded', 'quota_exceeded', 'quota_exceeded']);
    expect(await spent(id)).to.equal(3);
    expect(model.requests).to.have.length(3);
  });

  it('with 3 turns and a failing model, 6 parallel parses are all answered and none is charged', async () => {
    const id = await household();
    model.behaviour = { status: 503 };
    const answers = await Promise.all(Array.from({ length: 6 }, () => parse(id)));
    expect(answers.map((r) => r.status)).to.deep.equal([200, 200, 200, 200, 200, 200]);
    expect(await spent(id)).to.equal(0);
    model.answerWith({ proposals: [FISH], leftoverDinners: null, unheard: [] });
    expect((await parse(id)).status).to.equal(200);
    expect(await spent(id), 'the turns are still there').to.equal(1);
  });

  it('migrates meal_rules.household_id → households ON DELETE CASCADE', async () => {
    const fk = await h.db.knex.raw(
      `select confdeltype, confrelid::regclass::text as target from pg_constraint where conname = 'meal_rules_household_fk' and conrelid = 'meal_rules'::regclass`,
    );
    expect(fk.rows).to.deep.equal([{ confdeltype: 'c', target: 'households' }]);
  });
});
