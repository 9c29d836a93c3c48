import { TooManyRequestsError } from '@svc/http-kit';
import { expect } from 'chai';
import request from 'supertest';
import type { ParseRulesResponse, RuleParser } from '../src/index.js';
import { createOfflineRuleParser } from '../src/parser/index.js';
import { FakeHouseholds, type Harness, SAMPLES, startHarness } from './helpers.js';

/** Records every call and answers what it was given. */
class SpyParser implements RuleParser {
  readonly name = 'spy';
  calls: { text: string; ctx: { today: string; language?: string } }[] = [];
  constructor(private readonly answer: ParseRulesResponse) {}
  async parse(text: string, ctx: { today: string; language?: string }): Promise<ParseRulesResponse> {
    this.calls.push({ text, ctx });
    return structuredClone(this.answer);
  }
}

const FISH: ParseRulesResponse = {
  proposals: [{ summary: 'Fish twice a week', request: structuredClone(SAMPLES.CategoryFrequency) as never }],
  leftoverDinners: null,
  unheard: [],
};

describe('POST /rules/parse', () => {
  let h: Harness;
  let householdId: string;
  let adult: string;
  let spy: SpyParser;
  let app: Harness['app'];

  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.db.destroy();
  });
  beforeEach(async () => {
    await h.db.truncate();
    h.households.turnsSpent = [];
    h.households.spendCalls = [];
    h.households.turnError = undefined;
    h.clock.set('2026-11-22T09:00:00.000Z');
    householdId = h.households.household({ timeZoneId: 'Europe/Oslo', preferredLanguage: 'nb' });
    adult = h.households.member(householdId, 'Adult');
    spy = new SpyParser(FISH);
    app = h.appWith({ parser: spy });
  });

  const parse = (text: unknown, to = app) =>
    request(to)
      .post(`/api/v1/households/${householdId}/rules/parse`)
      .set('X-Test-User', adult)
      .send(text === undefined ? {} : { text });

  for (const text of ['', '   ', ' \n\t ']) {
    it(`answers an empty result for ${JSON.stringify(text)} and spends no turn`, async () => {
      const res = await parse(text);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ proposals: [], leftoverDinners: null, unheard: [] });
      expect(h.households.turnsSpent).to.deep.equal([]);
      expect(spy.calls).to.have.length(0);
    });
  }

  it('spends exactly one turn for a sentence and answers the parser’s proposals', async () => {
    const res = await parse('fish twice a week');
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.deep.equal(FISH);
    expect(h.households.turnsSpent).to.deep.equal([householdId]);
    expect(spy.calls.map((c) => c.text)).to.deep.equal(['fish twice a week']);
    expect(res.headers['server-timing']).to.match(/(^|, )parse;dur=/);
  });

  it('tells the parser today’s date in the household’s time zone and its language', async () => {
    h.clock.set('2026-11-22T23:30:00.000Z'); // already the 23rd in Oslo
    await parse('fisk to ganger i uka').expect(200);
    expect(spy.calls[0]?.ctx).to.deep.equal({ today: '2026-11-23', language: 'nb' });

    const west = h.households.household({ timeZoneId: 'America/Los_Angeles', preferredLanguage: 'en-US', country: 'US' });
    const westAdult = h.households.member(west, 'Owner');
    h.clock.set('2026-11-22T05:00:00.000Z'); // still the 21st in Los Angeles
    await request(app).post(`/api/v1/households/${west}/rules/parse`).set('X-Test-User', westAdult).send({ text: 'fish twice a week' }).expect(200);
    expect(spy.calls[1]?.ctx).to.deep.equal({ today: '2026-11-21', language: 'en-US' });
  });

  it('lets a 429 quota_exceeded from spendTurn through, without Retry-After, and does not parse', async () => {
    h.households.turnError = FakeHouseholds.quotaExceeded();
    const res = await parse('fish twice a week');
    expect(res.status).to.equal(429);
    expect(res.body.code).to.equal('quota_exceeded');
    expect(res.headers['retry-after']).to.equal(undefined);
    expect(spy.calls).to.have.length(0);
  });

  it('lets a paused answer through with its Retry-After date', async () => {
    const until = new Date('2026-11-23T00:00:00.000Z');
    h.households.turnError = new TooManyRequestsError('quota_exceeded', 'AI paused for this household', until);
    const res = await parse('fish twice a week');
    expect(res.status).to.equal(429);
    expect(res.headers['retry-after']).to.equal(until.toUTCString());
  });

  it('refuses text over 1000 characters with 400 value_too_long and spends nothing', async () => {
    const res = await parse('a'.repeat(1001));
    expect(res.status).to.equal(400);
    expect(res.body.code).to.equal('value_too_long');
    expect(h.households.turnsSpent).to.deep.equal([]);
    await parse('a'.repeat(1000)).expect(200);
    expect(h.households.turnsSpent).to.have.length(1);
  });

  it('refuses a body without text, or with text that is not a string', async () => {
    for (const text of [undefined, null, 42]) {
      const res = await parse(text);
      expect(res.status).to.equal(400);
      expect(res.body.code).to.equal('validation_failed');
      expect(res.body.errors[0].field).to.equal('text');
    }
    expect(h.households.turnsSpent).to.deep.equal([]);
  });

  it('stores nothing', async () => {
    await parse('fish twice a week').expect(200);
    const list = await request(app).get(`/api/v1/households/${householdId}/rules`).set('X-Test-User', adult);
    expect(list.body).to.deep.equal([]);
  });

  it('never offers a proposal that create would refuse: its summary goes to unheard', async () => {
    const broken = new SpyParser({
      proposals: [
        ...FISH.proposals,
        {
          summary: 'Pasta 4–2 times a week',
          request: { ...SAMPLES.CategoryFrequency, payload: { kind: 'CategoryFrequency', category: 'Pasta', minimumPerWeek: 4, maximumPerWeek: 2 } } as never,
        },
        {
          summary: 'Taco on a date',
          request: { ...SAMPLES.CategoryOnDay, payload: { kind: 'CategoryOnDay', category: 'Taco', weekday: null, specificDate: '2027-12-24' } } as never,
        },
      ],
      leftoverDinners: { summary: 'Leftovers welcome', enabled: true, askedEveryDays: null },
      unheard: ['my son hates onions'],
    });
    const res = await parse('anything', h.appWith({ parser: broken }));
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({
      proposals: FISH.proposals,
      leftoverDinners: { summary: 'Leftovers welcome', enabled: true, askedEveryDays: null },
      unheard: ['my son hates onions', 'Pasta 4–2 times a week', 'Taco on a date'],
    });
  });

  describe('when the parser fails', () => {
    const failing: RuleParser = {
      name: 'failing',
      parse: async () => {
        throw new Error('parser bug');
      },
    };

    it('answers 200 with the sentence in unheard, and charges no turn', async () => {
      const res = await parse('  fish twice a week ', h.appWith({ parser: failing }));
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.deep.equal({ proposals: [], leftoverDinners: null, unheard: ['fish twice a week'] });
      expect(h.households.turnsSpent).to.deep.equal([]);
    });

    it('treats an answer that is not a ParseRulesResponse as a failure: 200, the sentence unheard, no turn', async () => {
      for (const garbage of [undefined, null, 'fish', { proposals: 'fish' }, { proposals: [{ summary: 1 }], leftoverDinners: null, unheard: [] }]) {
        const odd: RuleParser = { name: 'odd', parse: async () => garbage as never };
        const res = await parse('fish twice a week', h.appWith({ parser: odd }));
        expect(res.status, JSON.stringify(garbage)).to.equal(200);
        expect(res.body).to.deep.equal({ proposals: [], leftoverDinners: null, unheard: ['fish twice a week'] });
      }
      expect(h.households.turnsSpent).to.deep.equal([]);
    });

    it('charges no turn for any of several parallel failing parses, and one each for parallel good ones', async () => {
      const broken = h.appWith({ parser: failing });
      const answers = await Promise.all([
        ...Array.from({ length: 4 }, () => parse('fish twice a week', broken)),
        ...Array.from({ length: 3 }, () => parse('fish twice a week')),
      ]);
      expect(answers.map((r) => r.status)).to.deep.equal([200, 200, 200, 200, 200, 200, 200]);
      expect(h.households.turnsSpent).to.deep.equal([householdId, householdId, householdId]);
    });
  });

  it('spends the turn inside the transaction that decides the answer', async () => {
    await parse('fish twice a week').expect(200);
    expect(h.households.spendCalls).to.deep.equal([{ householdId, inTransaction: true }]);
  });

  describe('with the offline parser (the default)', () => {
    const sentences = [
      'fish twice a week, no meat on Mondays and tacos on Fridays',
      'Vi vil ha fisk to ganger i uka og taco på fredager',
      'dinner at half past five on weekdays, max 30 min on hverdager',
      'cheap food on weekdays and pizza on Saturdays',
      'helst vegetar minst tre ganger i uka, middag kl 17 i helgen',
      'no more than 2 pasta dinners a week and we like leftovers on Thursdays',
      'taco on 24 December 2027',
      'don’t repeat a dish within 10 days; my son is allergic to nuts',
    ];

    it('answers proposals that create accepts as they are', async () => {
      const real = h.appWith({}); // no parser given: the offline one
      const direct = createOfflineRuleParser();
      let filed = 0;
      for (const text of sentences) {
        const res = await parse(text, real);
        expect(res.status, text).to.equal(200);
        const expected = await direct.parse(text, { today: '2026-11-22', language: 'nb' });
        expect(res.body.proposals.length, `${text}: the route dropped a proposal create would refuse`).to.equal(expected.proposals.length);
        for (const proposal of res.body.proposals) {
          expect(proposal.summary, text).to.be.a('string').and.not.equal('');
          const created = await request(real).post(`/api/v1/households/${householdId}/rules`).set('X-Test-User', adult).send(proposal.request);
          expect(created.status, `${text} → ${JSON.stringify(proposal.request)}: ${JSON.stringify(created.body)}`).to.equal(201);
          expect(created.body.payload).to.deep.equal({
            ...proposal.request.payload,
            ...(proposal.request.payload.time ? { time: proposal.request.payload.time.slice(0, 5) } : {}),
          });
          filed += 1;
        }
      }
      expect(filed, 'the sentences should yield proposals').to.be.greaterThan(sentences.length);
      expect(h.households.turnsSpent).to.have.length(sentences.length);
    });
  });
});
