import type { PersonalDataSources } from '@svc/contracts';
import { expect } from 'chai';
import request from 'supertest';
import { ObjectionMealRuleStore } from '../src/index.js';
import { type Harness, SAMPLES, startHarness } from './helpers.js';

describe('MealRulesService.exportRules (the data export’s rules of a household)', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.db.destroy());
  beforeEach(() => h.db.truncate());

  it('answers the household’s rules exactly as GET …/rules does, and only that household’s', async () => {
    const householdId = h.households.household();
    const other = h.households.household();
    const adult = h.households.member(householdId, 'Adult');
    const otherAdult = h.households.member(other, 'Owner');
    for (const body of [SAMPLES.MaximumActiveCookingTime, SAMPLES.DinnerTimeOnWeekday, SAMPLES.CategoryOnDay]) {
      await request(h.app).post(`/api/v1/households/${householdId}/rules`).set('X-Test-User', adult).send(body).expect(201);
      h.clock.advance(1000);
    }
    await request(h.app).post(`/api/v1/households/${other}/rules`).set('X-Test-User', otherAdult).send(SAMPLES.RepeatAfterDays).expect(201);

    const listed = await request(h.app).get(`/api/v1/households/${householdId}/rules`).set('X-Test-User', adult).expect(200);
    const service = h.serviceWith({});
    // The host hands this to the data export as PersonalDataSources' `rules` (checked by the compiler).
    const rules: PersonalDataSources['rules'] = (id) => service.exportRules(id);
    const exported = await rules(householdId);
    expect(JSON.parse(JSON.stringify(exported))).to.deep.equal(listed.body);
    expect(exported).to.have.length(3);
    expect(exported[0]).to.include({ householdId, startDate: '2026-12-01', endDate: '2027-01-31', createdAt: '2026-11-22T09:00:00.000Z' });
    expect(await rules('00000000-0000-4000-8000-000000000000')).to.deep.equal([]);
  });

  it('the prepared list read answers what the model read in a transaction does, dates and payload order included', async () => {
    const householdId = h.households.household();
    const adult = h.households.member(householdId, 'Adult');
    for (const body of Object.values(SAMPLES)) {
      await request(h.app).post(`/api/v1/households/${householdId}/rules`).set('X-Test-User', adult).send(body).expect(201);
      h.clock.advance(1000);
    }
    const store = new ObjectionMealRuleStore(h.db.knex);
    const prepared = await store.list(householdId);
    expect(prepared).to.have.length(Object.keys(SAMPLES).length);
    expect(JSON.stringify(prepared)).to.equal(JSON.stringify(await store.transaction((trx) => store.list(householdId, trx))));
    expect(await store.list(h.households.household())).to.deep.equal([]);
  });
});
