import { PartValidator } from '@svc/http-kit';
import { FakeChatModel } from '@svc/test-support';
import { expect } from 'chai';
import request from 'supertest';
import { createModelRuleParser, type ParseRulesResponse } from '../src/index.js';
import { MODEL_ANSWER_SCHEMA, type Timers } from '../src/model-parser.js';
import { createOfflineRuleParser } from '../src/parser/index.js';
import { type Harness, SAMPLES, startHarness } from './helpers.js';

/** Timers that fire only when the test says so: the slow case takes no real time. */
class ManualTimers implements Timers {
  readonly pending = new Map<number, { fire: () => void; ms: number }>();
  private next = 1;
  setTimeout(fire: () => void, ms: number): unknown {
    const id = this.next++;
    this.pending.set(id, { fire, ms });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }
  fireAll(): void {
    const due = [...this.pending.values()];
    this.pending.clear();
    for (const t of due) t.fire();
  }
}

const SENTENCE = 'fish twice a week and tacos on Fridays';

const MODEL_ANSWER: ParseRulesResponse = {
  proposals: [
    {
      summary: 'Fish 2–3 times a week',
      request: {
        payload: { kind: 'CategoryFrequency', category: 'Fish', minimumPerWeek: 2, maximumPerWeek: 3 },
        strength: 'Hard',
        scope: 'Permanent',
        startDate: null,
        endDate: null,
      },
    },
    {
      summary: 'Cheap dinners',
      request: { payload: { kind: 'PriceClassOnDays', ceiling: 'Cheap', weekdays: [] }, strength: 'Soft', scope: 'Permanent', startDate: null, endDate: null },
    },
  ],
  leftoverDinners: null,
  unheard: ['the kids hate onions'],
};

describe('POST /rules/parse with a language model (RULE_PARSER_URL)', () => {
  let h: Harness;
  let model: FakeChatModel;
  let timers: ManualTimers;
  let householdId: string;
  let adult: string;
  let app: Harness['app'];
  let offline: ParseRulesResponse;

  before(async () => {
    h = await startHarness();
    model = new FakeChatModel();
    await model.start();
  });
  after(async () => {
    await model.stop();
    await h.db.destroy();
  });
  beforeEach(async () => {
    await h.db.truncate();
    h.households.turnsSpent = [];
    h.households.spendCalls = [];
    h.households.turnError = undefined;
    model.requests.length = 0;
    model.answerWith(MODEL_ANSWER);
    timers = new ManualTimers();
    householdId = h.households.household({ timeZoneId: 'Europe/Oslo', preferredLanguage: 'en' });
    adult = h.households.member(householdId, 'Owner');
    app = h.appWith({ modelParser: createModelRuleParser({ url: model.url, model: 'tiny-llm', apiKey: 'sk-test', timers }) });
    offline = await createOfflineRuleParser().parse(SENTENCE, { today: '2026-11-22', language: 'en' });
  });

  const parse = (to = app, text = SENTENCE) => request(to).post(`/api/v1/households/${householdId}/rules/parse`).set('X-Test-User', adult).send({ text });

  /** What the household gets when the model fails: the offline parser's answer, free. */
  async function expectOfflineFallback(res: request.Response): Promise<void> {
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.deep.equal(offline);
    expect(h.households.turnsSpent, 'a failed model costs no turn').to.deep.equal([]);
  }

  it('asks the endpoint with structured output (the seven kinds), the model name and the key', async () => {
    await parse().expect(200);
    expect(model.requests).to.have.length(1);
    const [sent] = model.requests;
    expect(sent!.path).to.equal('/v1/chat/completions');
    expect(sent!.headers.authorization).to.equal('Bearer sk-test');
    expect(sent!.body.model).to.equal('tiny-llm');
    expect(sent!.body.response_format).to.deep.equal({ type: 'json_schema', json_schema: { name: 'meal_rules', strict: true, schema: MODEL_ANSWER_SCHEMA } });
    const messages = sent!.body.messages as { role: string; content: string }[];
    expect(messages.map((m) => m.role)).to.deep.equal(['system', 'user']);
    expect(messages[1]!.content).to.equal(SENTENCE);
    expect(messages[0]!.content).to.include('Today is 2026-11-22 (a Sunday).');
  });

  it("merges a valid answer with the offline parser's: the model wins on the same subject, the offline parser fills in; one turn", async () => {
    const offlineFish = offline.proposals.filter((p) => p.request.payload.kind === 'CategoryFrequency' && p.request.payload.category === 'Fish');
    const offlineOthers = offline.proposals.filter((p) => !offlineFish.includes(p));
    expect(offlineFish, 'precondition: the offline parser hears the fish rule').to.have.length(1);
    expect(
      offlineOthers.map((p) => p.request.payload.kind),
      'precondition: and the tacos',
    ).to.include('CategoryOnDay');

    const res = await parse();
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.deep.equal({ proposals: [...MODEL_ANSWER.proposals, ...offlineOthers], leftoverDinners: null, unheard: MODEL_ANSWER.unheard });
    expect(h.households.turnsSpent).to.deep.equal([householdId]);
  });

  it('drops a proposal of the model that create would refuse (its summary to unheard), and still charges the turn', async () => {
    model.answerWith({
      ...MODEL_ANSWER,
      proposals: [
        MODEL_ANSWER.proposals[0],
        {
          summary: 'Pasta 4–2 times',
          request: { ...SAMPLES.CategoryFrequency, payload: { kind: 'CategoryFrequency', category: 'Pasta', minimumPerWeek: 4, maximumPerWeek: 2 } },
        },
        {
          summary: 'Fish on 30 February',
          request: { ...SAMPLES.CategoryOnDay, payload: { kind: 'CategoryOnDay', category: 'Fish', weekday: null, specificDate: '2027-02-30' } },
        },
        { summary: 'Dessert daily', request: { ...SAMPLES.RepeatAfterDays, payload: { kind: 'Dessert' } } },
      ],
    });
    const res = await parse();
    expect(res.status).to.equal(200);
    expect(res.body.proposals[0]).to.deep.equal(MODEL_ANSWER.proposals[0]);
    expect(res.body.proposals.map((p: { summary: string }) => p.summary)).to.not.include.members(['Pasta 4–2 times', 'Fish on 30 February', 'Dessert daily']);
    expect(res.body.unheard).to.deep.equal([...MODEL_ANSWER.unheard, 'Pasta 4–2 times', 'Fish on 30 February', 'Dessert daily']);
    expect(h.households.turnsSpent).to.deep.equal([householdId]);
  });

  const invalid: [string, string][] = [
    ['content that is not JSON', 'Sure! Here are your rules: fish twice a week'],
    ['JSON of another shape', JSON.stringify({ rules: [] })],
    ['a proposal without its request', JSON.stringify({ proposals: [{ summary: 'x' }], leftoverDinners: null, unheard: [] })],
    ['a request that is not an object', JSON.stringify({ ...MODEL_ANSWER, proposals: [{ summary: 'x', request: 'fish' }] })],
    ['proposals that are not a list', JSON.stringify({ ...MODEL_ANSWER, proposals: MODEL_ANSWER.proposals[0] })],
    ['a string where a number belongs', JSON.stringify({ ...MODEL_ANSWER, leftoverDinners: { summary: 'x', enabled: true, askedEveryDays: 'weekly' } })],
  ];
  for (const [what, content] of invalid) {
    it(`falls back to the offline parser on ${what}, free`, async () => {
      model.behaviour = { answer: content };
      await expectOfflineFallback(await parse());
      expect(model.requests).to.have.length(1);
    });
  }

  for (const status of [500, 503, 429, 401, 404]) {
    it(`falls back to the offline parser when the endpoint answers ${status} (no retry), free`, async () => {
      model.behaviour = { status };
      await expectOfflineFallback(await parse());
      expect(model.requests, 'one attempt only').to.have.length(1);
    });
  }

  it('falls back to the offline parser when the endpoint cannot be reached, free', async () => {
    const gone = new FakeChatModel();
    await gone.start();
    await gone.stop(); // a port nobody listens on now
    const unreachable = h.appWith({ modelParser: createModelRuleParser({ url: gone.url, model: 'tiny-llm', timers }) });
    await expectOfflineFallback(await parse(unreachable));
  });

  it('falls back to the offline parser when the model does not answer within the deadline (2 s by default), free', async () => {
    model.behaviour = { hang: true };
    const arrived = model.nextRequest();
    const pending = parse().then((res) => res);
    await arrived;
    expect([...timers.pending.values()].map((t) => t.ms)).to.deep.equal([2000]);
    timers.fireAll();
    await expectOfflineFallback(await pending);
  });

  it('logs why it fell back, without the sentence or the key', async () => {
    const lines: { obj: Record<string, unknown>; msg: string }[] = [];
    const logger = { warn: (obj: object, msg: string) => lines.push({ obj: obj as Record<string, unknown>, msg }) };
    const logged = h.appWith({ modelParser: createModelRuleParser({ url: model.url, model: 'tiny-llm', apiKey: 'sk-secret', timers }), logger });
    model.behaviour = { answer: 'not json' };
    await parse(logged).expect(200);
    model.behaviour = { status: 500 };
    await parse(logged).expect(200);
    expect(lines.map((l) => [l.msg, l.obj.reason])).to.deep.equal([
      ['rule parser failed; falling back', 'invalid'],
      ['rule parser failed; falling back', 'unavailable'],
    ]);
    const text = JSON.stringify(lines);
    expect(text).to.not.include('fish');
    expect(text).to.not.include('sk-secret');
  });

  it('takes RULE_PARSER_TIMEOUT_MS as the deadline, and clears the timer when the answer comes in time', async () => {
    const quick = h.appWith({ modelParser: createModelRuleParser({ url: model.url, model: 'tiny-llm', timeoutMs: 750, timers }) });
    model.behaviour = { hang: true };
    const arrived = model.nextRequest();
    const pending = parse(quick).then((res) => res);
    await arrived;
    expect([...timers.pending.values()].map((t) => t.ms)).to.deep.equal([750]);
    timers.fireAll();
    await expectOfflineFallback(await pending);

    model.answerWith(MODEL_ANSWER);
    await parse(quick).expect(200);
    expect(timers.pending.size, 'no timer left behind').to.equal(0);
  });

  it('accepts a URL that names the chat-completions endpoint itself', async () => {
    const full = h.appWith({ modelParser: createModelRuleParser({ url: `${model.url}/chat/completions`, model: 'tiny-llm', timers }) });
    await parse(full).expect(200);
    expect(model.requests.map((r: { path: string }) => r.path)).to.deep.equal(['/v1/chat/completions']);
    expect(h.households.turnsSpent).to.deep.equal([householdId]);
  });

  it('never asks the model when the household has no turn left (429 first)', async () => {
    h.households.turnError = new (await import('@svc/http-kit')).TooManyRequestsError('quota_exceeded', 'used up');
    const res = await parse();
    expect(res.status).to.equal(429);
    expect(model.requests).to.have.length(0);
  });

  it('charges one turn per parallel parse the model answered, none for those it failed', async () => {
    const broken = new FakeChatModel();
    await broken.start();
    broken.behaviour = { status: 500 };
    try {
      const failing = h.appWith({ modelParser: createModelRuleParser({ url: broken.url, model: 'tiny-llm', timers }) });
      const answers = await Promise.all([...Array.from({ length: 4 }, () => parse()), ...Array.from({ length: 3 }, () => parse(failing))]);
      expect(answers.map((r) => r.status)).to.deep.equal([200, 200, 200, 200, 200, 200, 200]);
      expect(h.households.turnsSpent).to.have.length(4);
      expect(broken.requests).to.have.length(3);
    } finally {
      await broken.stop();
    }
  });

  it('asks for an answer schema every structured-output server takes, and a valid answer meets it', () => {
    const keywords = new Set<string>();
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) {
        for (const item of node) walk(item);
        return;
      }
      if (!node || typeof node !== 'object') return;
      const o = node as Record<string, unknown>;
      for (const k of Object.keys(o)) if (k !== 'properties') keywords.add(k);
      if (o.type === 'object' && o.properties) {
        expect(o.additionalProperties, 'closed objects').to.equal(false);
        expect(o.required, 'every member required').to.deep.equal(Object.keys(o.properties));
      }
      for (const [k, v] of Object.entries(o))
        if (k === 'properties') Object.values(v as object).forEach(walk);
        else walk(v);
    };
    walk(MODEL_ANSWER_SCHEMA);
    for (const unsupported of ['oneOf', 'const', 'format', 'discriminator', 'uniqueItems']) expect(keywords, unsupported).to.not.include(unsupported);
    const strict = new PartValidator(MODEL_ANSWER_SCHEMA, 'body');
    expect(() => strict.check(MODEL_ANSWER)).to.not.throw();
    expect(() => strict.check({ ...MODEL_ANSWER, extra: 1 })).to.throw();
  });
});
