import { expect } from 'chai';
import request from 'supertest';
import { GUIDELINE_COUNTRIES, GUIDELINES_REVIEWED_AT } from '../src/defaults.js';
import { type Harness, SAMPLES, startHarness } from './helpers.js';

describe('guideline default rules', () => {
  let h: Harness;

  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.db.destroy();
  });
  beforeEach(async () => {
    await h.db.truncate();
  });

  async function defaultsOf(country: string) {
    const householdId = h.households.household({ country });
    const owner = h.households.member(householdId, 'Owner');
    const res = await request(h.app).get(`/api/v1/households/${householdId}/rules/defaults`).set('X-Test-User', owner);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return { householdId, owner, body: res.body };
  }

  const frequencies = (body: { rules: { payload: { category: string; minimumPerWeek: number; maximumPerWeek: number } }[] }) =>
    body.rules.map((r) => [r.payload.category, r.payload.minimumPerWeek, r.payload.maximumPerWeek]);

  it('gives Norway Helsedirektoratet’s advice: fish 2–3 dinners, red meat at most 2', async () => {
    const { householdId, body } = await defaultsOf('NO');
    expect(body.active).to.equal(true);
    expect(body.source).to.equal('Helsedirektoratet');
    expect(frequencies(body)).to.deep.equal([
      ['Fish', 2, 3],
      ['Meat', 0, 2],
    ]);
    for (const rule of body.rules) {
      expect(rule).to.include({
        householdId,
        kind: 'CategoryFrequency',
        strength: 'Soft',
        scope: 'Permanent',
        startDate: null,
        endDate: null,
        source: 'SystemDefault',
      });
      expect(rule).to.include({ createdAt: GUIDELINES_REVIEWED_AT, updatedAt: GUIDELINES_REVIEWED_AT });
      expect(rule.payload.kind).to.equal('CategoryFrequency');
      expect(rule.id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
  });

  it('gives the US the USDA seafood advice (at least 2 a week) and no meat ceiling', async () => {
    const { body } = await defaultsOf('US');
    expect(body.source).to.equal('USDA');
    expect(frequencies(body)).to.deep.equal([['Fish', 2, 7]]);
  });

  it('falls back to WHO for a country without its own guideline, and for ZZ', async () => {
    for (const country of ['FR', 'ZZ']) {
      const { body } = await defaultsOf(country);
      expect(body.source).to.equal('WHO');
      expect(frequencies(body)).to.deep.equal([
        ['Fish', 1, 2],
        ['Meat', 0, 3],
      ]);
    }
  });

  it('names the authority of every listed country', async () => {
    const expected: Record<string, string> = {
      NO: 'Helsedirektoratet',
      SE: 'Livsmedelsverket',
      DK: 'Fødevarestyrelsen',
      FI: 'Ruokavirasto',
      DE: 'DGE',
      GB: 'NHS',
      US: 'USDA',
    };
    expect([...GUIDELINE_COUNTRIES].sort()).to.deep.equal(Object.keys(expected).sort());
    for (const [country, authority] of Object.entries(expected)) {
      const { body } = await defaultsOf(country);
      expect(body.source, country).to.equal(authority);
      expect(body.rules.length, country).to.be.greaterThan(0);
      for (const rule of body.rules) expect(rule.payload.minimumPerWeek).to.be.at.most(rule.payload.maximumPerWeek);
    }
  });

  it('keeps ids stable: the same in every household of a country and on every call, different across countries', async () => {
    const a = await defaultsOf('SE');
    const b = await defaultsOf('SE');
    const again = await request(h.app).get(`/api/v1/households/${a.householdId}/rules/defaults`).set('X-Test-User', a.owner);
    const ids = (body: { rules: { id: string }[] }) => body.rules.map((r) => r.id);
    expect(ids(a.body)).to.deep.equal(ids(b.body));
    expect(ids(again.body)).to.deep.equal(ids(a.body));
    expect(new Set(ids(a.body)).size).to.equal(a.body.rules.length);
    const dk = await defaultsOf('DK');
    expect(ids(dk.body)).to.not.include.members(ids(a.body));
  });

  it('is never stored: the household’s own list stays empty', async () => {
    const { householdId, owner } = await defaultsOf('NO');
    const list = await request(h.app).get(`/api/v1/households/${householdId}/rules`).set('X-Test-User', owner);
    expect(list.body).to.deep.equal([]);
  });

  it('turns inactive once the household has a CategoryFrequency rule of its own, and active again when it is gone', async () => {
    const { householdId, owner } = await defaultsOf('NO');
    const rules = `/api/v1/households/${householdId}/rules`;
    const get = async () => (await request(h.app).get(`${rules}/defaults`).set('X-Test-User', owner)).body.active;

    const other = await request(h.app).post(rules).set('X-Test-User', owner).send(SAMPLES.CategoryExcludedDays);
    expect(await get(), 'another kind does not count').to.equal(true);

    const own = await request(h.app).post(rules).set('X-Test-User', owner).send(SAMPLES.CategoryFrequency);
    expect(await get()).to.equal(false);

    await request(h.app).patch(`${rules}/${own.body.id}`).set('X-Test-User', owner).send(SAMPLES.RepeatAfterDays).expect(200);
    expect(await get(), 'replaced by another kind').to.equal(true);

    await request(h.app).patch(`${rules}/${other.body.id}`).set('X-Test-User', owner).send(SAMPLES.CategoryFrequency).expect(200);
    expect(await get()).to.equal(false);
    await request(h.app).delete(`${rules}/${other.body.id}`).set('X-Test-User', owner).expect(204);
    expect(await get()).to.equal(true);
  });

  it('a CategoryFrequency rule of another household does not count', async () => {
    const mine = await defaultsOf('NO');
    const theirs = await defaultsOf('NO');
    await request(h.app).post(`/api/v1/households/${theirs.householdId}/rules`).set('X-Test-User', theirs.owner).send(SAMPLES.CategoryFrequency).expect(201);
    const res = await request(h.app).get(`/api/v1/households/${mine.householdId}/rules/defaults`).set('X-Test-User', mine.owner);
    expect(res.body.active).to.equal(true);
  });

  it('HEAD of the defaults answers the GET headers without a body', async () => {
    const { householdId, owner } = await defaultsOf('NO');
    const get = await request(h.app).get(`/api/v1/households/${householdId}/rules/defaults`).set('X-Test-User', owner);
    const head = await request(h.app).head(`/api/v1/households/${householdId}/rules/defaults`).set('X-Test-User', owner);
    expect(head.status).to.equal(200);
    expect(head.headers['content-type']).to.equal('application/json; charset=utf-8');
    expect(head.headers['content-length']).to.equal(get.headers['content-length']);
    expect(head.text ?? '').to.equal('');
  });
});
