import { buildOpenApiDocument, ManualClock } from '@svc/http-kit';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { createRouter, MealRulesService, ObjectionMealRuleStore } from '../src/index.js';
import { ruleRequestIssues } from '../src/rule-validation.js';
import { RULES_BETWEEN_FIELDS } from '../src/schemas.js';
import { FakeHouseholds, sample } from './helpers.js';

interface Operation {
  description?: string;
  requestBody?: { content: { 'application/json': { schema: { description?: string; $ref?: string } } } };
}

/** Request bodies are named components: the schema a `$ref` points at. */
let components: Record<string, { description?: string }> = {};
const resolved = (schema: { description?: string; $ref?: string } | undefined) =>
  schema?.$ref ? components[schema.$ref.replace('#/components/schemas/', '')] : schema;

function operations(): Record<string, Operation> {
  const households = new FakeHouseholds();
  // Building the document runs no query; the store is never asked.
  const service = new MealRulesService({
    store: new ObjectionMealRuleStore({} as Knex),
    clock: new ManualClock(),
    access: households.access,
    profiles: households.profiles,
    spendTurn: households.spendTurn,
  });
  const router = createRouter({ service });
  const doc = buildOpenApiDocument({ title: 't', version: '1' }, router.operations) as {
    paths: Record<string, Record<string, Operation & { operationId: string }>>;
    components: { schemas: Record<string, { description?: string }> };
  };
  components = doc.components.schemas;
  const byId: Record<string, Operation> = {};
  for (const methods of Object.values(doc.paths)) for (const op of Object.values(methods)) byId[op.operationId] = op;
  return byId;
}

type Body = ReturnType<typeof sample>;
const withChange = (kind: Parameters<typeof sample>[0], change: (b: Body) => void): Body => {
  const body = sample(kind);
  change(body);
  return body;
};

/** Each rule: how the description says it, a request that breaks it, and the field create names. */
const RULES: { rule: string; says: RegExp; breaking: Body; field: string }[] = [
  {
    rule: 'minimum ≤ maximum per week',
    says: /CategoryFrequency: payload\.minimumPerWeek ≤ payload\.maximumPerWeek/,
    breaking: withChange('CategoryFrequency', (b) => Object.assign(b.payload, { minimumPerWeek: 4, maximumPerWeek: 3 })),
    field: 'payload.minimumPerWeek',
  },
  {
    rule: 'Permanent has no dates',
    says: /Scope Permanent: startDate and endDate are both null/,
    breaking: withChange('CategoryFrequency', (b) => Object.assign(b, { startDate: '2026-12-01' })),
    field: 'startDate',
  },
  {
    rule: 'DateRange needs both dates',
    says: /Scope DateRange: startDate and endDate are both set/,
    breaking: withChange('MaximumActiveCookingTime', (b) => Object.assign(b, { endDate: null })),
    field: 'endDate',
  },
  {
    rule: 'DateRange runs forward',
    says: /Scope DateRange: .*startDate ≤ endDate/,
    breaking: withChange('MaximumActiveCookingTime', (b) => Object.assign(b, { startDate: '2027-02-01', endDate: '2027-01-31' })),
    field: 'endDate',
  },
  {
    rule: 'SpecificDate is one day',
    says: /Scope SpecificDate: startDate and endDate are both set .*and equal/,
    breaking: withChange('RepeatAfterDays', (b) => Object.assign(b, { scope: 'SpecificDate', startDate: '2026-12-24', endDate: '2026-12-25' })),
    field: 'endDate',
  },
  {
    rule: 'CategoryOnDay needs one of weekday and specificDate',
    says: /CategoryOnDay: exactly one of payload\.weekday and payload\.specificDate is set \(neither: `payload\.weekday`/,
    breaking: withChange('CategoryOnDay', (b) => Object.assign(b.payload, { weekday: null })),
    field: 'payload.weekday',
  },
  {
    rule: 'CategoryOnDay takes only one of weekday and specificDate',
    says: /CategoryOnDay: exactly one of payload\.weekday and payload\.specificDate is set \(.*both: `payload\.specificDate`\)/,
    breaking: withChange('CategoryOnDay', (b) => Object.assign(b.payload, { specificDate: '2026-12-24' })),
    field: 'payload.specificDate',
  },
  {
    rule: 'a payload date needs scope SpecificDate',
    says: /A payload\.specificDate .*needs scope SpecificDate \(else `scope`\)/,
    breaking: withChange('CategoryOnDay', (b) => Object.assign(b.payload, { weekday: null, specificDate: '2026-12-24' })),
    field: 'scope',
  },
  {
    rule: 'a payload date is the scope date',
    says: /startDate = endDate = payload\.specificDate \(else `payload\.specificDate`\)/,
    breaking: withChange('CategoryOnDay', (b) => {
      Object.assign(b.payload, { weekday: null, specificDate: '2026-12-24' });
      Object.assign(b, { scope: 'SpecificDate', startDate: '2026-12-25', endDate: '2026-12-25' });
    }),
    field: 'payload.specificDate',
  },
  {
    rule: 'MaximumActiveCookingTime on a date has no weekdays',
    says: /MaximumActiveCookingTime with a payload\.specificDate has an empty payload\.weekdays \(else `payload\.weekdays`\)/,
    breaking: withChange('MaximumActiveCookingTime', (b) => {
      Object.assign(b.payload, { specificDate: '2026-12-24' });
      Object.assign(b, { scope: 'SpecificDate', startDate: '2026-12-24', endDate: '2026-12-24' });
    }),
    field: 'payload.weekdays',
  },
  {
    rule: 'per-week counts are 0–7',
    says: /payload\.minimumPerWeek and payload\.maximumPerWeek: integers 0–7/,
    breaking: withChange('CategoryFrequency', (b) => Object.assign(b.payload, { maximumPerWeek: 8 })),
    field: 'payload.maximumPerWeek',
  },
  {
    rule: 'minutes are 5–720',
    says: /payload\.minutes: integer 5–720/,
    breaking: withChange('MaximumActiveCookingTime', (b) => Object.assign(b.payload, { minutes: 4 })),
    field: 'payload.minutes',
  },
  {
    rule: 'days are 1–365',
    says: /payload\.days: integer 1–365/,
    breaking: withChange('RepeatAfterDays', (b) => Object.assign(b.payload, { days: 366 })),
    field: 'payload.days',
  },
  {
    rule: 'excluded weekdays name 1–7 days',
    says: /payload\.excludedWeekdays and DinnerTimeOnWeekday payload\.weekdays 1–7 days/,
    breaking: withChange('CategoryExcludedDays', (b) => Object.assign(b.payload, { excludedWeekdays: [] })),
    field: 'payload.excludedWeekdays',
  },
];

describe('the OpenAPI document states the rules between fields', () => {
  const ops = operations();
  const texts = {
    'createMealRule description': ops.createMealRule?.description ?? '',
    'replaceMealRule description': ops.replaceMealRule?.description ?? '',
    'request schema description': resolved(ops.createMealRule?.requestBody?.content['application/json'].schema)?.description ?? '',
  };

  for (const { rule, says, breaking, field } of RULES) {
    it(`states "${rule}" as create enforces it, naming ${field}`, () => {
      for (const [where, text] of Object.entries(texts)) {
        expect(text, where).to.match(says);
        expect(text, where).to.contain(field);
      }
      expect(ruleRequestIssues(breaking).map((i) => i.field)).to.deep.equal([field]);
    });
  }

  it('has a test row for every rule it states', () => {
    const untested = RULES_BETWEEN_FIELDS.filter((line) => !RULES.some((r) => r.says.test(line)));
    expect(untested).to.deep.equal([]);
    expect(texts['createMealRule description']).to.contain('validation_failed');
  });
});
