import { expect } from 'chai';
import request from 'supertest';
import { PAYLOAD_MEMBERS } from '../src/schemas.js';
import { type Harness, KINDS, SAMPLES, type SampleKind, sample, startHarness } from './helpers.js';

type Body = ReturnType<typeof sample>;

describe('meal rule validation (400 validation_failed naming the field)', () => {
  let h: Harness;
  let householdId: string;
  let owner: string;

  before(async () => {
    h = await startHarness();
    householdId = h.households.household();
    owner = h.households.member(householdId, 'Owner');
  });
  after(async () => {
    await h.db.destroy();
  });

  async function refuses(body: unknown, field: string, method: 'post' | 'patch' = 'post') {
    const path = `/api/v1/households/${householdId}/rules${method === 'patch' ? `/${ruleId}` : ''}`;
    const res = await request(h.app)
      [method](path)
      .set('X-Test-User', owner)
      .send(body as object);
    expect(res.status, JSON.stringify(res.body)).to.equal(400);
    expect(res.headers['content-type']).to.match(/^application\/problem\+json/);
    expect(res.body.code).to.equal('validation_failed');
    expect(res.body.errors.map((e: { field: string }) => e.field)).to.include(field);
    return res;
  }

  async function accepts(body: unknown) {
    const res = await request(h.app)
      .post(`/api/v1/households/${householdId}/rules`)
      .set('X-Test-User', owner)
      .send(body as object);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res;
  }

  function withPayload(kind: SampleKind, change: (p: Record<string, unknown>) => void): Body {
    const body = sample(kind);
    change(body.payload);
    return body;
  }

  let ruleId: string;
  before(async () => {
    ruleId = (await accepts(SAMPLES.RepeatAfterDays)).body.id;
  });

  describe('shape', () => {
    it('needs the payload', async () => {
      const body = sample('RepeatAfterDays');
      delete (body as Record<string, unknown>).payload;
      await refuses(body, 'payload');
    });

    for (const member of ['strength', 'scope', 'startDate', 'endDate']) {
      it(`needs ${member} (present, even when null)`, async () => {
        const body = sample('RepeatAfterDays');
        delete body[member];
        await refuses(body, member);
      });
    }

    it('needs payload.kind', async () => {
      await refuses(
        withPayload('RepeatAfterDays', (p) => delete p.kind),
        'payload.kind',
      );
    });

    it('refuses an unknown payload.kind', async () => {
      await refuses(
        withPayload('RepeatAfterDays', (p) => (p.kind = 'Pizzaday')),
        'payload.kind',
      );
    });

    for (const kind of KINDS) {
      for (const member of PAYLOAD_MEMBERS[kind]) {
        it(`needs ${kind}.${member}`, async () => {
          await refuses(
            withPayload(kind, (p) => delete p[member]),
            `payload.${member}`,
          );
        });
      }
    }

    it('needs the members of the kind named, not of another (kind CategoryFrequency with RepeatAfterDays members)', async () => {
      await refuses(
        withPayload('RepeatAfterDays', (p) => (p.kind = 'CategoryFrequency')),
        'payload.category',
      );
    });
  });

  describe('enumerations', () => {
    it('refuses an unknown strength', async () => {
      await refuses({ ...sample('RepeatAfterDays'), strength: 'Medium' }, 'strength');
    });
    it('refuses an unknown scope', async () => {
      await refuses({ ...sample('RepeatAfterDays'), scope: 'Forever' }, 'scope');
    });
    it('refuses an unknown category', async () => {
      await refuses(
        withPayload('CategoryFrequency', (p) => (p.category = 'Sushi')),
        'payload.category',
      );
    });
    it('refuses an unknown weekday in a list', async () => {
      await refuses(
        withPayload('CategoryExcludedDays', (p) => (p.excludedWeekdays = ['Monday', 'Funday'])),
        'payload.excludedWeekdays[1]',
      );
    });
    it('refuses an unknown CategoryOnDay weekday', async () => {
      await refuses(
        withPayload('CategoryOnDay', (p) => (p.weekday = 'friday')),
        'payload.weekday',
      );
    });
    it('refuses an unknown price ceiling', async () => {
      await refuses(
        withPayload('PriceClassOnDays', (p) => (p.ceiling = 'Expensive')),
        'payload.ceiling',
      );
    });
    it('refuses null where the member is not nullable', async () => {
      await refuses(
        withPayload('CategoryExcludedDays', (p) => (p.category = null)),
        'payload.category',
      );
    });
  });

  describe('integer ranges', () => {
    const cases: [SampleKind, string, number][] = [
      ['CategoryFrequency', 'minimumPerWeek', -1],
      ['CategoryFrequency', 'maximumPerWeek', 8],
      ['CategoryFrequency', 'minimumPerWeek', 1.5],
      ['MaximumActiveCookingTime', 'minutes', 4],
      ['MaximumActiveCookingTime', 'minutes', 721],
      ['RepeatAfterDays', 'days', 0],
      ['RepeatAfterDays', 'days', 366],
    ];
    for (const [kind, member, value] of cases) {
      it(`refuses ${kind}.${member} = ${value}`, async () => {
        await refuses(
          withPayload(kind, (p) => (p[member] = value)),
          `payload.${member}`,
        );
      });
    }
    it('accepts the edges: 0–7 per week, 5 and 720 minutes, 1 and 365 days', async () => {
      await accepts(withPayload('CategoryFrequency', (p) => Object.assign(p, { minimumPerWeek: 0, maximumPerWeek: 7 })));
      await accepts(withPayload('MaximumActiveCookingTime', (p) => (p.minutes = 5)));
      await accepts(withPayload('MaximumActiveCookingTime', (p) => (p.minutes = 720)));
      await accepts(withPayload('RepeatAfterDays', (p) => (p.days = 1)));
      await accepts(withPayload('RepeatAfterDays', (p) => (p.days = 365)));
    });
    it('refuses a number written as a string', async () => {
      await refuses(
        withPayload('RepeatAfterDays', (p) => (p.days = '14')),
        'payload.days',
      );
    });
  });

  describe('weekday lists', () => {
    it('refuses a day named twice', async () => {
      await refuses(
        withPayload('DinnerTimeOnWeekday', (p) => (p.weekdays = ['Monday', 'Monday'])),
        'payload.weekdays',
      );
    });
    it('refuses an empty list where days must be named (CategoryExcludedDays)', async () => {
      await refuses(
        withPayload('CategoryExcludedDays', (p) => (p.excludedWeekdays = [])),
        'payload.excludedWeekdays',
      );
    });
    it('refuses an empty list where days must be named (DinnerTimeOnWeekday)', async () => {
      await refuses(
        withPayload('DinnerTimeOnWeekday', (p) => (p.weekdays = [])),
        'payload.weekdays',
      );
    });
    it('accepts an empty list meaning every day (MaximumActiveCookingTime, PriceClassOnDays) and all seven days', async () => {
      await accepts(withPayload('MaximumActiveCookingTime', (p) => (p.weekdays = [])));
      await accepts(withPayload('PriceClassOnDays', (p) => (p.weekdays = [])));
      await accepts(
        withPayload('CategoryExcludedDays', (p) => (p.excludedWeekdays = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'])),
      );
    });
  });

  describe('dates and times', () => {
    // Year 0000 is ISO 8601 but not PostgreSQL: it once answered 500.
    for (const date of ['2026-02-30', '2026-2-03', '24.12.2027', '2026-13-01', '0000-01-01']) {
      it(`refuses the date ${date}`, async () => {
        await refuses({ ...sample('RepeatAfterDays'), scope: 'SpecificDate', startDate: date, endDate: date }, 'startDate');
      });
    }
    it('refuses a DateRange starting in year 0000 with 400, not 500', async () => {
      await refuses({ ...sample('RepeatAfterDays'), scope: 'DateRange', startDate: '0000-01-01', endDate: '2027-01-01' }, 'startDate');
    });
    it('refuses a payload date that is not a real date', async () => {
      await refuses(
        {
          payload: { kind: 'CategoryOnDay', category: 'Taco', weekday: null, specificDate: '2027-02-29' },
          strength: 'Hard',
          scope: 'SpecificDate',
          startDate: '2027-02-28',
          endDate: '2027-02-28',
        },
        'payload.specificDate',
      );
    });
    for (const time of ['24:00', '5:30', '17.30', '17:60', '17:30:60', 'half past five']) {
      it(`refuses the time ${time}`, async () => {
        await refuses(
          withPayload('DinnerTimeOnWeekday', (p) => (p.time = time)),
          'payload.time',
        );
      });
    }
    it('accepts 00:00 and 23:59:59', async () => {
      expect((await accepts(withPayload('DinnerTimeOnWeekday', (p) => (p.time = '00:00')))).body.payload.time).to.equal('00:00');
      expect((await accepts(withPayload('DinnerTimeOnWeekday', (p) => (p.time = '23:59:59')))).body.payload.time).to.equal('23:59');
    });
  });

  describe('semantic rules', () => {
    it('refuses minimumPerWeek above maximumPerWeek', async () => {
      await refuses(
        withPayload('CategoryFrequency', (p) => Object.assign(p, { minimumPerWeek: 4, maximumPerWeek: 3 })),
        'payload.minimumPerWeek',
      );
    });
    it('accepts minimumPerWeek equal to maximumPerWeek', async () => {
      await accepts(withPayload('CategoryFrequency', (p) => Object.assign(p, { minimumPerWeek: 2, maximumPerWeek: 2 })));
    });
    it('refuses a Permanent rule with a startDate', async () => {
      await refuses({ ...sample('RepeatAfterDays'), startDate: '2026-12-01' }, 'startDate');
    });
    it('refuses a Permanent rule with an endDate', async () => {
      await refuses({ ...sample('RepeatAfterDays'), endDate: '2026-12-01' }, 'endDate');
    });
    it('refuses a SpecificDate rule without its dates', async () => {
      await refuses({ ...sample('RepeatAfterDays'), scope: 'SpecificDate', startDate: '2026-12-01', endDate: null }, 'endDate');
      await refuses({ ...sample('RepeatAfterDays'), scope: 'SpecificDate', startDate: null, endDate: '2026-12-01' }, 'startDate');
    });
    it('refuses a SpecificDate rule whose dates differ', async () => {
      await refuses({ ...sample('RepeatAfterDays'), scope: 'SpecificDate', startDate: '2026-12-01', endDate: '2026-12-02' }, 'endDate');
    });
    it('refuses a DateRange rule without its dates', async () => {
      await refuses({ ...sample('RepeatAfterDays'), scope: 'DateRange', startDate: null, endDate: '2026-12-01' }, 'startDate');
      await refuses({ ...sample('RepeatAfterDays'), scope: 'DateRange', startDate: '2026-12-01', endDate: null }, 'endDate');
    });
    it('refuses a DateRange that ends before it starts', async () => {
      await refuses({ ...sample('RepeatAfterDays'), scope: 'DateRange', startDate: '2026-12-02', endDate: '2026-12-01' }, 'endDate');
    });
    it('accepts a one-day DateRange', async () => {
      await accepts({ ...sample('RepeatAfterDays'), scope: 'DateRange', startDate: '2026-12-01', endDate: '2026-12-01' });
    });
    it('refuses CategoryOnDay with neither weekday nor specificDate', async () => {
      await refuses(
        withPayload('CategoryOnDay', (p) => (p.weekday = null)),
        'payload.weekday',
      );
    });
    it('refuses CategoryOnDay with both weekday and specificDate', async () => {
      await refuses(
        { ...withPayload('CategoryOnDay', (p) => (p.specificDate = '2027-12-24')), scope: 'SpecificDate', startDate: '2027-12-24', endDate: '2027-12-24' },
        'payload.specificDate',
      );
    });
    it('refuses CategoryOnDay on a date when the scope is not SpecificDate', async () => {
      await refuses(
        withPayload('CategoryOnDay', (p) => Object.assign(p, { weekday: null, specificDate: '2027-12-24' })),
        'scope',
      );
    });
    it('refuses CategoryOnDay on a date other than the scope’s date', async () => {
      await refuses(
        {
          ...withPayload('CategoryOnDay', (p) => Object.assign(p, { weekday: null, specificDate: '2027-12-24' })),
          scope: 'SpecificDate',
          startDate: '2027-12-25',
          endDate: '2027-12-25',
        },
        'payload.specificDate',
      );
    });
    it('refuses MaximumActiveCookingTime on a date with weekdays too, or without scope SpecificDate on that date', async () => {
      await refuses(
        {
          ...withPayload('MaximumActiveCookingTime', (p) => (p.specificDate = '2027-12-24')),
          scope: 'SpecificDate',
          startDate: '2027-12-24',
          endDate: '2027-12-24',
        },
        'payload.weekdays',
      );
      await refuses(
        {
          ...withPayload('MaximumActiveCookingTime', (p) => Object.assign(p, { weekdays: [], specificDate: '2027-12-24' })),
          scope: 'DateRange',
          startDate: '2027-12-01',
          endDate: '2027-12-31',
        },
        'scope',
      );
    });
    it('accepts MaximumActiveCookingTime on one date', async () => {
      await accepts({
        ...withPayload('MaximumActiveCookingTime', (p) => Object.assign(p, { weekdays: [], specificDate: '2027-12-24' })),
        scope: 'SpecificDate',
        startDate: '2027-12-24',
        endDate: '2027-12-24',
      });
    });
    it('applies the same rules to a replacement, and leaves the rule as it was', async () => {
      await refuses(
        withPayload('CategoryFrequency', (p) => Object.assign(p, { minimumPerWeek: 5, maximumPerWeek: 1 })),
        'payload.minimumPerWeek',
        'patch',
      );
      await refuses(
        { payload: { kind: 'CategoryFrequency' }, strength: 'Hard', scope: 'Permanent', startDate: null, endDate: null },
        'payload.category',
        'patch',
      );
      const listed = await request(h.app).get(`/api/v1/households/${householdId}/rules`).set('X-Test-User', owner);
      expect(listed.body.find((r: { id: string }) => r.id === ruleId).payload).to.deep.equal(SAMPLES.RepeatAfterDays.payload);
    });
  });
});
