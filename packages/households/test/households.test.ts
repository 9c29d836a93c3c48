import { BaseModel, compileRead, compileValue, declareLink } from '@svc/db';
import { createLogger, type KernelChecked, newRequestContext, runWithContext } from '@svc/http-kit';
import { expect } from 'chai';
import request from 'supertest';
import { TIME_ZONE_IDS } from '../src/formats.js';
import { CreditLedger, HouseholdsService, type ListedMember, membershipsRead, ObjectionHouseholdStore } from '../src/index.js';
import { createHousehold, defaultConfig, family, OSLO, useHarness } from './helpers.js';

/** An accounts table of the test's own: the display names another package lends (`accountName`). */
class TestAccountName extends BaseModel {
  static override tableName = 'test_account_names';
}

const ALL_FIELDS = [
  'id',
  'name',
  'timeZoneId',
  'defaultDinnerTime',
  'preferredLanguage',
  'country',
  'preferOwnRecipes',
  'prefersLeftoverDinners',
  'measurementSystem',
  'dryGoodsMeasure',
  'address',
  'loyaltyPrograms',
  'createdAt',
  'updatedAt',
  'shareReceiptPrices',
  'onboardingCompletedAt',
  'shareUnitWeights',
  'tailorServingToTastes',
  'showSoftServingAdvice',
  'babyEatsSeparatelyWhenNeeded',
  'maxNewDishesPerWeek',
  'alwaysNewDishes',
  'pantryWeight',
  'useStarterLibrary',
  'showChildTasks',
  'madeAgainLift',
];

describe('households: create, read, update', () => {
  const h = useHarness();

  describe('GET /api/v1/time-zones', () => {
    it('lists every id of the server time-zone database with private one-day caching', async () => {
      const res = await request(h.app).get('/api/v1/time-zones').set('X-Test-User', h.accounts.user('Tia'));
      expect(res.status).to.equal(200);
      expect(res.headers['cache-control']).to.equal('private, max-age=86400');
      expect(res.body.ids).to.have.members([...TIME_ZONE_IDS]);
      expect(res.body.ids).to.include.members(Intl.supportedValuesOf('timeZone'));
      // Current IANA names that Node's canonical list spells the old way are there too.
      expect(res.body.ids).to.include.members(['Europe/Oslo', 'America/New_York', 'Asia/Kolkata', 'Europe/Kyiv', 'UTC']);
      expect(new Set(res.body.ids).size).to.equal(res.body.ids.length);
    });

    it('answers 401 without a session', async () => {
      const res = await request(h.app).get('/api/v1/time-zones');
      expect(res.status).to.equal(401);
      expect(res.body.code).to.equal('unauthenticated');
    });

    it('lists exactly the ids the update accepts', async () => {
      const owner = h.accounts.user('Olga');
      const household = await createHousehold(h.app, owner);
      for (const id of [TIME_ZONE_IDS[0]!, TIME_ZONE_IDS[TIME_ZONE_IDS.length - 1]!, 'Asia/Kathmandu', 'Asia/Katmandu', 'UTC']) {
        const ok = await request(h.app).patch(`/api/v1/households/${household.id}`).set('X-Test-User', owner).send({ timeZoneId: id });
        expect(ok.status, id).to.equal(200);
      }
      const notListed = ['Mars/Olympus_Mons', 'europe/oslo', 'GMT+1'].filter((id) => !TIME_ZONE_IDS.includes(id));
      expect(notListed).to.have.length(3);
      for (const id of notListed) {
        const bad = await request(h.app).patch(`/api/v1/households/${household.id}`).set('X-Test-User', owner).send({ timeZoneId: id });
        expect(bad.status, id).to.equal(400);
        expect(bad.body.code).to.equal('validation_failed');
      }
    });
  });

  describe('POST /api/v1/households', () => {
    it('creates a household in Oslo with the decided defaults and every field', async () => {
      const owner = h.accounts.user('Olga');
      const res = await request(h.app).post('/api/v1/households').set('X-Test-User', owner).send(OSLO);
      expect(res.status).to.equal(201);
      expect(res.headers.location).to.equal(`/api/v1/households/${res.body.id}`);
      expect(Object.keys(res.body)).to.have.members(ALL_FIELDS);
      expect(res.body).to.deep.include({
        name: 'Nordmann',
        timeZoneId: 'Europe/Oslo',
        defaultDinnerTime: '17:30',
        preferredLanguage: 'en',
        country: 'NO',
        measurementSystem: 'Metric',
        dryGoodsMeasure: 'Weight',
        pantryWeight: 'Normal',
        preferOwnRecipes: false,
        prefersLeftoverDinners: false,
        shareReceiptPrices: false,
        shareUnitWeights: true,
        tailorServingToTastes: true,
        showSoftServingAdvice: true,
        babyEatsSeparatelyWhenNeeded: false,
        maxNewDishesPerWeek: 3,
        alwaysNewDishes: false,
        useStarterLibrary: true,
        showChildTasks: true,
        madeAgainLift: true,
        address: null,
        onboardingCompletedAt: null,
      });
      expect(res.body.loyaltyPrograms).to.deep.equal([]);
      expect(res.body.createdAt).to.equal('2026-11-22T09:00:00.000Z');
      expect(res.body.updatedAt).to.equal('2026-11-22T09:00:00.000Z');
    });

    it('gives New York US, UsCustomary and Volume', async () => {
      const res = await request(h.app)
        .post('/api/v1/households')
        .set('X-Test-User', h.accounts.user('Nina'))
        .send({ name: 'Smiths', timeZoneId: 'America/New_York', defaultDinnerTime: '18:00:00', preferredLanguage: 'en-us' });
      expect(res.status).to.equal(201);
      expect(res.body).to.deep.include({
        country: 'US',
        measurementSystem: 'UsCustomary',
        dryGoodsMeasure: 'Volume',
        defaultDinnerTime: '18:00',
        preferredLanguage: 'en-US',
      });
    });

    it('gives ZZ and Metric for a zone of no country', async () => {
      const res = await request(h.app)
        .post('/api/v1/households')
        .set('X-Test-User', h.accounts.user('Zed'))
        .send({ name: 'Z', timeZoneId: 'Etc/GMT+5', defaultDinnerTime: '19:00' });
      expect(res.status).to.equal(201);
      expect(res.body).to.deep.include({ country: 'ZZ', measurementSystem: 'Metric', dryGoodsMeasure: 'Weight' });
    });

    it('makes the creator the Owner member', async () => {
      const owner = h.accounts.user('Olga');
      const household = await createHousehold(h.app, owner);
      expect(await h.households.access.roleOf({ userId: owner }, household.id)).to.equal('Owner');
      expect(await h.households.memberships(owner)).to.deep.equal([
        { householdId: household.id, householdName: 'Nordmann', role: 'Owner', memberId: (await h.db.knex('householdMembers').first()).id },
      ]);
    });

    it('trims the name and drops seconds from the dinner time', async () => {
      const res = await request(h.app)
        .post('/api/v1/households')
        .set('X-Test-User', h.accounts.user('Olga'))
        .send({ name: '  Hjemme  ', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:45:59', preferredLanguage: null, inviteCode: null });
      expect(res.status).to.equal(201);
      expect(res.body).to.deep.include({ name: 'Hjemme', defaultDinnerTime: '17:45' });
    });

    const bad: [string, Record<string, unknown>, string, string][] = [
      ['a missing name', { timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:00' }, 'validation_failed', 'name'],
      ['a blank name', { ...OSLO, name: '   ' }, 'validation_failed', 'name'],
      ['a name over 100 characters', { ...OSLO, name: 'x'.repeat(101) }, 'value_too_long', 'name'],
      ['an unknown time zone', { ...OSLO, timeZoneId: 'Europe/Atlantis' }, 'validation_failed', 'timeZoneId'],
      ['a missing time zone', { name: 'A', defaultDinnerTime: '17:00' }, 'validation_failed', 'timeZoneId'],
      ['a bad time of day', { ...OSLO, defaultDinnerTime: '25:00' }, 'validation_failed', 'defaultDinnerTime'],
      ['a time without leading zero', { ...OSLO, defaultDinnerTime: '5:30' }, 'validation_failed', 'defaultDinnerTime'],
      ['a null dinner time', { ...OSLO, defaultDinnerTime: null }, 'validation_failed', 'defaultDinnerTime'],
      ['a language that is no BCP 47 tag', { ...OSLO, preferredLanguage: 'en_US!' }, 'validation_failed', 'preferredLanguage'],
    ];
    for (const [what, body, code, field] of bad) {
      it(`answers 400 ${code} for ${what} and writes nothing`, async () => {
        const res = await request(h.app).post('/api/v1/households').set('X-Test-User', h.accounts.user('Olga')).send(body);
        expect(res.status).to.equal(400);
        expect(res.body.code).to.equal(code);
        expect(res.body.errors.map((e: { field: string }) => e.field)).to.include(field);
        expect(await h.db.knex('households').count({ n: '*' }).first()).to.deep.equal({ n: '0' });
      });
    }

    it('answers 401 without a session', async () => {
      const res = await request(h.app).post('/api/v1/households').send(OSLO);
      expect(res.status).to.equal(401);
    });
  });

  describe('GET /api/v1/households/{householdId}', () => {
    it('answers the household to every member and 404 to anyone else', async () => {
      const { owner, adult, junior, outsider, household } = await family(h);
      for (const who of [owner, adult, junior]) {
        const res = await request(h.app).get(`/api/v1/households/${household.id}`).set('X-Test-User', who);
        expect(res.status).to.equal(200);
        expect(res.body).to.deep.equal(household);
        expect(res.headers['cache-control']).to.equal('no-store');
      }
      const res = await request(h.app).get(`/api/v1/households/${household.id}`).set('X-Test-User', outsider);
      expect(res.status).to.equal(404);
      expect(res.body.code).to.equal('not_found');
    });

    it('answers 404 for a household that does not exist and 400 for an id that is no uuid', async () => {
      const who = h.accounts.user('Olga');
      const missing = await request(h.app).get('/api/v1/households/6b1d1f4e-8a7c-4c33-9d1e-5c0a1b2c3d4e').set('X-Test-User', who);
      expect(missing.status).to.equal(404);
      const garbled = await request(h.app).get('/api/v1/households/not-a-uuid').set('X-Test-User', who);
      expect(garbled.status).to.equal(400);
      expect(garbled.body.code).to.equal('validation_failed');
    });
  });

  describe('PATCH /api/v1/households/{householdId}', () => {
    it('changes only what was sent, leaves null members alone and moves updatedAt', async () => {
      const owner = h.accounts.user('Olga');
      const before = await createHousehold(h.app, owner);
      h.clock.advanceSeconds(60);
      const res = await request(h.app)
        .patch(`/api/v1/households/${before.id}`)
        .set('X-Test-User', owner)
        .send({ prefersLeftoverDinners: true, name: null, address: null, measurementSystem: null });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ ...before, prefersLeftoverDinners: true, updatedAt: '2026-11-22T09:01:00.000Z' });
      const read = await request(h.app).get(`/api/v1/households/${before.id}`).set('X-Test-User', owner);
      expect(read.body).to.deep.equal(res.body);
    });

    it('writes every setting it is given, normalised', async () => {
      const owner = h.accounts.user('Olga');
      const household = await createHousehold(h.app, owner);
      const changes = {
        name: ' Hytta ',
        timeZoneId: 'America/New_York',
        defaultDinnerTime: '18:15:30',
        preferredLanguage: 'nb-no',
        country: 'se',
        preferOwnRecipes: true,
        prefersLeftoverDinners: true,
        maxNewDishesPerWeek: 21,
        alwaysNewDishes: true,
        pantryWeight: 'High',
        address: ' Storgata 1, Oslo ',
        loyaltyPrograms: ['Trumf', ' Coop '],
        measurementSystem: 'Imperial',
        dryGoodsMeasure: 'Volume',
        shareReceiptPrices: true,
        shareUnitWeights: false,
        tailorServingToTastes: false,
        showSoftServingAdvice: false,
        babyEatsSeparatelyWhenNeeded: true,
        useStarterLibrary: false,
        showChildTasks: false,
        madeAgainLift: false,
      };
      const res = await request(h.app).patch(`/api/v1/households/${household.id}`).set('X-Test-User', owner).send(changes);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({
        ...household,
        ...changes,
        name: 'Hytta',
        defaultDinnerTime: '18:15',
        preferredLanguage: 'nb-NO',
        country: 'SE',
        address: 'Storgata 1, Oslo',
        loyaltyPrograms: ['Trumf', 'Coop'],
      });
    });

    it('clears the address with an empty string and empties loyalty programmes with []', async () => {
      const owner = h.accounts.user('Olga');
      const household = await createHousehold(h.app, owner);
      await request(h.app)
        .patch(`/api/v1/households/${household.id}`)
        .set('X-Test-User', owner)
        .send({ address: 'Somewhere', loyaltyPrograms: ['Trumf'] });
      const res = await request(h.app).patch(`/api/v1/households/${household.id}`).set('X-Test-User', owner).send({ address: '', loyaltyPrograms: [] });
      expect(res.status).to.equal(200);
      expect(res.body.address).to.equal(null);
      expect(res.body.loyaltyPrograms).to.deep.equal([]);
    });

    it('leaves updatedAt alone for an empty body', async () => {
      const owner = h.accounts.user('Olga');
      const household = await createHousehold(h.app, owner);
      h.clock.advanceSeconds(60);
      const res = await request(h.app).patch(`/api/v1/households/${household.id}`).set('X-Test-User', owner).send({});
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal(household);
    });

    it('is for the Owner only: Adult and Junior get 403 forbidden, a non-member 404', async () => {
      const { adult, junior, outsider, household } = await family(h);
      for (const who of [adult, junior]) {
        const res = await request(h.app).patch(`/api/v1/households/${household.id}`).set('X-Test-User', who).send({ name: 'Mine' });
        expect(res.status).to.equal(403);
        expect(res.body.code).to.equal('forbidden');
      }
      const res = await request(h.app).patch(`/api/v1/households/${household.id}`).set('X-Test-User', outsider).send({ name: 'Mine' });
      expect(res.status).to.equal(404);
      expect(res.body.code).to.equal('not_found');
      const unchanged = await h.db.knex('households').where({ id: household.id }).first();
      expect(unchanged.name).to.equal('Nordmann');
    });

    const bad: [string, Record<string, unknown>, string, string][] = [
      ['a blank name', { name: ' \t ' }, 'validation_failed', 'name'],
      ['an empty name', { name: '' }, 'validation_failed', 'name'],
      ['a name over 100 characters', { name: 'n'.repeat(101) }, 'value_too_long', 'name'],
      ['an unknown time zone', { timeZoneId: 'Not/AZone' }, 'validation_failed', 'timeZoneId'],
      ['an unknown measurementSystem', { measurementSystem: 'Metrick' }, 'validation_failed', 'measurementSystem'],
      ['an unknown dryGoodsMeasure', { dryGoodsMeasure: 'Mass' }, 'validation_failed', 'dryGoodsMeasure'],
      ['an unknown pantryWeight', { pantryWeight: 'Heavy' }, 'validation_failed', 'pantryWeight'],
      ['a bad time of day', { defaultDinnerTime: '18:60' }, 'validation_failed', 'defaultDinnerTime'],
      ['a time of day with text', { defaultDinnerTime: 'six' }, 'validation_failed', 'defaultDinnerTime'],
      ['a country that does not exist', { country: 'XX' }, 'validation_failed', 'country'],
      ['a country name', { country: 'Norway' }, 'validation_failed', 'country'],
      ['a language that is no BCP 47 tag', { preferredLanguage: 'x' }, 'validation_failed', 'preferredLanguage'],
      ['too many new dishes', { maxNewDishesPerWeek: 22 }, 'validation_failed', 'maxNewDishesPerWeek'],
      ['negative new dishes', { maxNewDishesPerWeek: -1 }, 'validation_failed', 'maxNewDishesPerWeek'],
      ['a fractional number of dishes', { maxNewDishesPerWeek: 2.5 }, 'validation_failed', 'maxNewDishesPerWeek'],
      ['a boolean given as a string', { showChildTasks: 'yes' }, 'validation_failed', 'showChildTasks'],
      ['loyalty programmes that are no strings', { loyaltyPrograms: [1] }, 'validation_failed', 'loyaltyPrograms[0]'],
      ['more than 20 loyalty programmes', { loyaltyPrograms: Array.from({ length: 21 }, (_, i) => `P${i}`) }, 'validation_failed', 'loyaltyPrograms'],
      ['an address over 200 characters', { address: 'a'.repeat(201) }, 'value_too_long', 'address'],
    ];
    for (const [what, body, code, field] of bad) {
      it(`answers 400 ${code} for ${what} and changes nothing`, async () => {
        const owner = h.accounts.user('Olga');
        const household = await createHousehold(h.app, owner);
        h.clock.advanceSeconds(5);
        const res = await request(h.app)
          .patch(`/api/v1/households/${household.id}`)
          .set('X-Test-User', owner)
          .send({ showChildTasks: false, ...body });
        expect(res.status).to.equal(400);
        expect(res.body.code).to.equal(code);
        expect(res.body.errors.map((e: { field: string }) => e.field)).to.include(field);
        const read = await request(h.app).get(`/api/v1/households/${household.id}`).set('X-Test-User', owner);
        expect(read.body).to.deep.equal(household);
      });
    }

    it('accepts ZZ as the country, so a client can send back what it read', async () => {
      const owner = h.accounts.user('Olga');
      const household = await createHousehold(h.app, owner);
      const res = await request(h.app).patch(`/api/v1/households/${household.id}`).set('X-Test-User', owner).send({ country: 'zz' });
      expect(res.status).to.equal(200);
      expect(res.body.country).to.equal('ZZ');
    });
  });

  describe('the router', () => {
    it('declares every households operation for the OpenAPI document, all behind a session', () => {
      const ops = h.router.operations;
      expect(ops.map((o) => `${o.method.toUpperCase()} ${o.path}`)).to.have.members([
        'GET /api/v1/time-zones',
        'POST /api/v1/households',
        'GET /api/v1/households/{householdId}',
        'PATCH /api/v1/households/{householdId}',
        'POST /api/v1/households/{householdId}/onboarding/complete',
        'GET /api/v1/households/{householdId}/invitations',
        'DELETE /api/v1/households/{householdId}/invitations/{code}',
        'POST /api/v1/households/{householdId}/invitations',
        'POST /api/v1/invitations/accept',
        'GET /api/v1/households/{householdId}/members',
        'GET /api/v1/households/{householdId}/conversations/{conversationId}',
        'PATCH /api/v1/households/{householdId}/members/{memberId}',
        'DELETE /api/v1/households/{householdId}/members/{memberId}',
        'POST /api/v1/households/{householdId}/owner',
        'DELETE /api/v1/households/{householdId}',
      ]);
      expect(ops.every((o) => o.auth === true)).to.equal(true);
    });

    it('answers 401 on every operation without a session', async () => {
      const id = '6b1d1f4e-8a7c-4c33-9d1e-5c0a1b2c3d4e';
      for (const o of h.router.operations) {
        const path = o.path.replace('{householdId}', id).replace('{conversationId}', id).replace('{memberId}', id);
        const res = await request(h.app)[o.method](path).send({});
        expect(res.status, `${o.method} ${path}`).to.equal(401);
        expect(res.body.code).to.equal('unauthenticated');
      }
    });
  });

  describe('services for other packages', () => {
    it('profiles answers country, time zone and language, and 404 for an unknown household', async () => {
      const household = await createHousehold(h.app, h.accounts.user('Olga'), { ...OSLO, preferredLanguage: 'nb' });
      expect(await h.households.profiles(household.id)).to.deep.equal({ id: household.id, country: 'NO', timeZoneId: 'Europe/Oslo', preferredLanguage: 'nb' });
      try {
        await h.households.profiles('6b1d1f4e-8a7c-4c33-9d1e-5c0a1b2c3d4e');
        expect.fail('should throw');
      } catch (err) {
        expect((err as { status: number }).status).to.equal(404);
      }
    });

    it('access.roleOf answers each role and 404 for a non-member, an unknown household and a malformed id', async () => {
      const { owner, adult, junior, outsider, household } = await family(h);
      expect(await h.households.access.roleOf({ userId: owner }, household.id)).to.equal('Owner');
      expect(await h.households.access.roleOf({ userId: adult }, household.id)).to.equal('Adult');
      expect(await h.households.access.roleOf({ userId: junior }, household.id)).to.equal('Junior');
      for (const [user, id] of [
        [outsider, household.id],
        [owner, '6b1d1f4e-8a7c-4c33-9d1e-5c0a1b2c3d4e'],
        [owner, 'nope'],
      ] as const) {
        try {
          await h.households.access.roleOf({ userId: user }, id);
          expect.fail('should throw');
        } catch (err) {
          expect((err as { status: number; code: string }).status).to.equal(404);
          expect((err as { code: string }).code).to.equal('not_found');
        }
      }
    });

    it('memberships lists every household of a user with role and member id, and none for a stranger', async () => {
      const { owner, junior, outsider, household } = await family(h);
      h.clock.advanceSeconds(1);
      const second = await createHousehold(h.app, junior, { name: 'Hybel', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '19:00' });
      const mine = await h.households.memberships(junior);
      expect(mine.map((m) => [m.householdId, m.householdName, m.role])).to.deep.equal([
        [household.id, 'Nordmann', 'Junior'],
        [second.id, 'Hybel', 'Owner'],
      ]);
      expect(mine.every((m) => typeof m.memberId === 'string')).to.equal(true);
      expect(await h.households.memberships(owner)).to.have.length(1);
      expect(await h.households.memberships(outsider)).to.deep.equal([]);
    });

    it('membershipsRead, as the read kernel compiles it, answers exactly what memberships lists (rows, fields, order)', async () => {
      const { owner, junior, outsider } = await family(h);
      h.clock.advanceSeconds(1);
      await createHousehold(h.app, junior, { name: 'Hybel', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '19:00' });
      h.clock.advanceSeconds(1);
      await createHousehold(h.app, junior, { name: 'Annen', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '19:00' });
      for (const user of [owner, junior, outsider]) {
        const read = compileRead(membershipsRead, { account: '?::uuid', household: 'null', arg: 'null', known: 'null' });
        const { rows } = await h.db.knex.raw(`select ${read} as m`, [user]);
        expect(rows[0].m, user).to.deep.equal(await h.households.memberships(user));
      }
    });

    it('the household read outside the kernel answers what the declared read loads (in and out of a transaction)', async () => {
      const { owner, household } = await family(h);
      const patched = await request(h.app)
        .patch(`/api/v1/households/${household.id}`)
        .set('X-Test-User', owner)
        .send({ address: 'Storgata 1', loyaltyPrograms: ['Trumf'], defaultDinnerTime: '18:15' });
      expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
      const store = new ObjectionHouseholdStore(h.db.knex);
      const prepared = await store.get(household.id);
      expect(prepared).to.deep.equal(patched.body);
      expect(await h.db.knex.transaction((trx) => store.get(household.id, trx))).to.deep.equal(prepared);
      const missing = await store.get('00000000-0000-4000-8000-000000000000').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((missing as { code: string }).code).to.equal('not_found');
    });

    it('GET …/members without the kernel runs membersRead as a statement of its own: what the kernel loads, and what the directory names', async () => {
      const { owner, adult, junior, household } = await family(h);
      // A member without an account keeps its own name; an account the directory no longer knows has none.
      // It joins a second after the Junior (the same instant would leave their order to their ids).
      h.clock.advanceSeconds(1);
      await h.db
        .knex('householdMembers')
        .insert({ householdId: household.id, userId: null, displayName: 'Bestemor', role: 'Junior', createdAt: h.clock.now() });
      h.accounts.names.delete(junior);
      await h.db.knex.raw('create table test_account_names (id uuid primary key, display_name text not null)');
      try {
        await h.db.knex('testAccountNames').insert([...h.accounts.names].map(([id, displayName]) => ({ id, displayName })));
        const { aiTurnsPerMonth, ...config } = defaultConfig;
        const named = new HouseholdsService({
          store: new ObjectionHouseholdStore(h.db.knex),
          ledger: new CreditLedger(h.db.knex, h.clock, aiTurnsPerMonth),
          clock: h.clock,
          accounts: h.accounts,
          accountName: declareLink({ model: TestAccountName, key: 'id', field: 'displayName' }),
          logger: createLogger({ level: 'silent' }),
          config,
        });
        const read = named.membersRead!;
        const { rows } = await h.db.knex.raw(`select ${compileValue(read, { account: 'null', household: '?::uuid', arg: 'null', known: 'null' })} as v`, [
          household.id,
        ]);
        const loaded = await named.listMembers({ userId: adult }, household.id, rows[0].v as KernelChecked<ListedMember[]>);
        expect(loaded.map((m) => [m.displayName, m.role])).to.deep.equal([
          ['Olga', 'Owner'],
          ['Arne', 'Adult'],
          ['Former member', 'Junior'],
          ['Bestemor', 'Junior'],
        ]);

        const profileCalls = h.accounts.profileCalls;
        const ctx = newRequestContext('trace');
        const own = await runWithContext(ctx, () => named.listMembers({ userId: adult }, household.id));
        // The caller's role (a caller without memberships: looked up), then the read itself; the directory is not asked.
        expect(ctx.db.queries).to.equal(2);
        expect(h.accounts.profileCalls).to.equal(profileCalls);
        expect(own).to.deep.equal(loaded);
        // A host that lends no display name: the rows named through the directory, the same answer.
        expect(await h.households.listMembers({ userId: owner }, household.id)).to.deep.equal(loaded);
        expect((await request(h.app).get(`/api/v1/households/${household.id}/members`).set('X-Test-User', junior)).body).to.deep.equal(loaded);
        // A non-member is refused before the read runs.
        const err = await named.listMembers({ userId: h.accounts.user('Ute') }, household.id).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect((err as { code: string }).code).to.equal('not_found');
      } finally {
        await h.db.knex.raw('drop table test_account_names');
      }
    });

    it('access.roleOf takes the role from the memberships the caller carries, and queries for a caller without them', async () => {
      const { owner, junior, household } = await family(h);
      const other = await createHousehold(h.app, junior, { name: 'Hybel', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '19:00' });
      // What the principal's statement loaded (deliberately not what the table says, to see which answers).
      const carried = { userId: junior, memberships: [{ householdId: household.id, householdName: 'Nordmann', role: 'Adult' as const, memberId: null }] };
      const ctx = newRequestContext('trace');
      await runWithContext(ctx, async () => {
        expect(await h.households.access.roleOf(carried, household.id)).to.equal('Adult');
        expect(await h.households.access.roleOf(carried, household.id.toUpperCase())).to.equal('Adult');
        // Not among the carried memberships: 404 without asking the database.
        const err = await h.households.access.roleOf(carried, other.id).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect((err as { code: string }).code).to.equal('not_found');
        // A caller without memberships: the database answers.
        expect(await h.households.access.roleOf({ userId: owner }, household.id)).to.equal('Owner');
      });
      // One statement in all: the owner's look-up; the junior's answers came from what it carried.
      expect(ctx.db.queries).to.equal(1);
      expect(await h.households.access.roleOf({ userId: junior }, household.id)).to.equal('Junior');
      expect(await h.households.access.roleOf({ userId: junior }, other.id)).to.equal('Owner');
    });
  });
});
