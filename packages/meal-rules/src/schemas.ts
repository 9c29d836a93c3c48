import { type Infer, multiLine, type TypedSchema } from '@svc/http-kit';

/*
 * The meal-rule shapes of the contract, as JSON Schema written once (`as const satisfies
 * TypedSchema`). The same objects validate requests (through ApiRouter's ajv, which has
 * `discriminator: true`), describe the operations in the OpenAPI document (so every range below is
 * visible to clients), give MealRuleModel its jsonSchema and the model parser its answer schema,
 * and type the code (`Infer<typeof …>`).
 */

export const MEAL_RULE_KINDS = [
  'CategoryFrequency',
  'CategoryExcludedDays',
  'CategoryOnDay',
  'MaximumActiveCookingTime',
  'DinnerTimeOnWeekday',
  'PriceClassOnDays',
  'RepeatAfterDays',
] as const;
export const RULE_STRENGTHS = ['Hard', 'Soft'] as const;
export const RULE_SCOPES = ['Permanent', 'DateRange', 'SpecificDate'] as const;
export const RULE_SOURCES = ['UserDeclared', 'SystemDefault', 'Learned'] as const;
export const MEAL_CATEGORIES = ['Fish', 'Meat', 'Poultry', 'Vegetarian', 'Vegan', 'Soup', 'Pasta', 'Taco', 'Leftovers', 'Other'] as const;
export const PRICE_CEILINGS = ['Cheap', 'CheapOrMid'] as const;
export const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'] as const;

export type MealRuleKind = (typeof MEAL_RULE_KINDS)[number];
export type RuleSource = (typeof RULE_SOURCES)[number];

/** The members of each payload kind, in the order answers list them (after `kind`). */
export const PAYLOAD_MEMBERS: Record<MealRuleKind, readonly string[]> = {
  CategoryFrequency: ['category', 'minimumPerWeek', 'maximumPerWeek'],
  CategoryExcludedDays: ['category', 'excludedWeekdays'],
  CategoryOnDay: ['category', 'weekday', 'specificDate'],
  MaximumActiveCookingTime: ['minutes', 'weekdays', 'specificDate'],
  DinnerTimeOnWeekday: ['time', 'weekdays'],
  PriceClassOnDays: ['ceiling', 'weekdays'],
  RepeatAfterDays: ['days'],
};

/** Limits of the integer members (inclusive). */
export const LIMITS = {
  perWeek: { minimum: 0, maximum: 7 },
  minutes: { minimum: 5, maximum: 720 },
  days: { minimum: 1, maximum: 365 },
} as const;

/** `HH:mm`, or `HH:mm:ss` on input; answers are always `HH:mm`. */
export const TIME_PATTERN = '^([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?$';

const Category = { type: 'string', enum: MEAL_CATEGORIES, description: 'MealCategory' } as const satisfies TypedSchema;
const Weekday = { type: 'string', enum: WEEKDAYS, description: 'Weekday' } as const satisfies TypedSchema;
const NullableDate = { type: ['string', 'null'], format: 'date', description: 'YYYY-MM-DD (a real calendar date), or null' } as const satisfies TypedSchema;
/** A weekday list: unique days, at most all seven (`minItems` is set where the list must name days). */
const WeekdayList = { type: 'array', items: Weekday, uniqueItems: true, maxItems: 7 } as const satisfies TypedSchema;
const PerWeek = { type: 'integer', ...LIMITS.perWeek } as const satisfies TypedSchema;

export const PAYLOAD_SCHEMAS = {
  CategoryFrequency: {
    type: 'object',
    title: 'CategoryFrequency',
    description: 'How many dinners of a category a week.',
    required: ['kind', 'category', 'minimumPerWeek', 'maximumPerWeek'],
    properties: {
      kind: { type: 'string', const: 'CategoryFrequency' },
      category: Category,
      minimumPerWeek: { ...PerWeek, description: 'Dinners of the category per week, at least (0–7; not above maximumPerWeek)' },
      maximumPerWeek: { ...PerWeek, description: 'Dinners of the category per week, at most (0–7)' },
    },
  },
  CategoryExcludedDays: {
    type: 'object',
    title: 'CategoryExcludedDays',
    description: 'A category is not served on these days.',
    required: ['kind', 'category', 'excludedWeekdays'],
    properties: {
      kind: { type: 'string', const: 'CategoryExcludedDays' },
      category: Category,
      excludedWeekdays: { ...WeekdayList, minItems: 1, description: 'Days on which the category is never served (1–7 unique days)' },
    },
  },
  CategoryOnDay: {
    type: 'object',
    title: 'CategoryOnDay',
    description: 'A category on a weekday, or on one date.',
    required: ['kind', 'category', 'weekday', 'specificDate'],
    properties: {
      kind: { type: 'string', const: 'CategoryOnDay' },
      category: Category,
      weekday: { type: ['string', 'null'], enum: [...WEEKDAYS, null], description: 'Every such weekday; exactly one of weekday and specificDate is set' },
      specificDate: {
        ...NullableDate,
        description: 'One date (then scope is SpecificDate with startDate = endDate = this date); exactly one of weekday and specificDate is set',
      },
    },
  },
  MaximumActiveCookingTime: {
    type: 'object',
    title: 'MaximumActiveCookingTime',
    description: 'A ceiling on active cooking time.',
    required: ['kind', 'minutes', 'weekdays', 'specificDate'],
    properties: {
      kind: { type: 'string', const: 'MaximumActiveCookingTime' },
      minutes: { type: 'integer', ...LIMITS.minutes, description: 'Most minutes of active cooking (5–720)' },
      weekdays: { ...WeekdayList, minItems: 0, description: 'Days it applies to (0–7 unique days; empty: every day)' },
      specificDate: {
        ...NullableDate,
        description: 'One date it applies to instead of weekdays (then weekdays is empty and scope is SpecificDate on this date), or null',
      },
    },
  },
  DinnerTimeOnWeekday: {
    type: 'object',
    title: 'DinnerTimeOnWeekday',
    description: 'Dinner is served at this time on these days.',
    required: ['kind', 'time', 'weekdays'],
    properties: {
      kind: { type: 'string', const: 'DinnerTimeOnWeekday' },
      time: { type: 'string', pattern: TIME_PATTERN, description: 'Time of day, 24-hour HH:mm (HH:mm:ss accepted; answered HH:mm)' },
      weekdays: { ...WeekdayList, minItems: 1, description: 'Days it applies to (1–7 unique days)' },
    },
  },
  PriceClassOnDays: {
    type: 'object',
    title: 'PriceClassOnDays',
    description: 'A price ceiling on these days.',
    required: ['kind', 'ceiling', 'weekdays'],
    properties: {
      kind: { type: 'string', const: 'PriceClassOnDays' },
      ceiling: { type: 'string', enum: PRICE_CEILINGS, description: 'PriceCeiling' },
      weekdays: { ...WeekdayList, minItems: 0, description: 'Days it applies to (0–7 unique days; empty: every day)' },
    },
  },
  RepeatAfterDays: {
    type: 'object',
    title: 'RepeatAfterDays',
    description: 'How long before a dish may be repeated.',
    required: ['kind', 'days'],
    properties: {
      kind: { type: 'string', const: 'RepeatAfterDays' },
      days: { type: 'integer', ...LIMITS.days, description: 'A dish comes back no sooner than this many days (1–365)' },
    },
  },
} as const satisfies Record<MealRuleKind, TypedSchema>;

// ajv's `discriminator` is an OpenAPI keyword json-schema-to-ts does not list; spread in, it leaves the types alone.
const BY_KIND = { discriminator: { propertyName: 'kind' } } as const;

/**
 * MealRulePayloadDto: a union discriminated by `kind`. The `required`/`properties.kind` beside the
 * discriminator make a missing or unknown kind fail as `payload.kind`, not as an anonymous `payload`.
 */
export const MealRulePayloadSchema = {
  type: 'object',
  description: 'MealRulePayloadDto: `kind` selects the type; every member of that type is required.',
  required: ['kind'],
  properties: { kind: { type: 'string', enum: MEAL_RULE_KINDS, description: 'MealRuleKind' } },
  ...BY_KIND,
  oneOf: [
    PAYLOAD_SCHEMAS.CategoryFrequency,
    PAYLOAD_SCHEMAS.CategoryExcludedDays,
    PAYLOAD_SCHEMAS.CategoryOnDay,
    PAYLOAD_SCHEMAS.MaximumActiveCookingTime,
    PAYLOAD_SCHEMAS.DinnerTimeOnWeekday,
    PAYLOAD_SCHEMAS.PriceClassOnDays,
    PAYLOAD_SCHEMAS.RepeatAfterDays,
  ],
} as const satisfies TypedSchema;

const range = (r: { minimum: number; maximum: number }) => `${r.minimum}–${r.maximum}`;

/**
 * The rules between fields that src/rule-validation.ts (`semanticIssues`) enforces, one line each,
 * with the field a failure names; then the ranges the schema holds. Clients read them in the
 * OpenAPI document (create, replace, and the request schema). Change both together.
 */
export const RULES_BETWEEN_FIELDS: readonly string[] = [
  'CategoryFrequency: payload.minimumPerWeek ≤ payload.maximumPerWeek (else `payload.minimumPerWeek`).',
  'Scope Permanent: startDate and endDate are both null (else `startDate` / `endDate`).',
  'Scope DateRange: startDate and endDate are both set (else the missing one), and startDate ≤ endDate; a one-day range is fine (else `endDate`).',
  'Scope SpecificDate: startDate and endDate are both set (else the missing one) and equal (else `endDate`).',
  'CategoryOnDay: exactly one of payload.weekday and payload.specificDate is set (neither: `payload.weekday`; both: `payload.specificDate`).',
  'A payload.specificDate (CategoryOnDay, MaximumActiveCookingTime) needs scope SpecificDate (else `scope`) on that same date: startDate = endDate = payload.specificDate (else `payload.specificDate`).',
  'MaximumActiveCookingTime with a payload.specificDate has an empty payload.weekdays (else `payload.weekdays`).',
];

/** The ranges of single fields (the schema's own checks), as the description states them. */
export const FIELD_RANGES: readonly string[] = [
  `payload.minimumPerWeek and payload.maximumPerWeek: integers ${range(LIMITS.perWeek)}.`,
  `payload.minutes: integer ${range(LIMITS.minutes)}.`,
  `payload.days: integer ${range(LIMITS.days)}.`,
  'Weekday lists hold unique days: payload.excludedWeekdays and DinnerTimeOnWeekday payload.weekdays 1–7 days; MaximumActiveCookingTime and PriceClassOnDays payload.weekdays 0–7 (empty: every day).',
  'startDate, endDate, payload.specificDate: YYYY-MM-DD, real calendar dates, or null. payload.time: HH:mm, 24-hour (HH:mm:ss accepted).',
];

/** RULES_BETWEEN_FIELDS and FIELD_RANGES as Markdown, for the operations' and the schema's description. */
export const RULE_REQUEST_RULES_TEXT = [
  'Rules between fields, checked after the shape, the membership (404) and the role (403); each failure is 400 `validation_failed` and names its field in `errors[].field`:',
  ...RULES_BETWEEN_FIELDS.map((r) => `- ${r}`),
  '',
  'Ranges (400 `validation_failed` naming the field):',
  ...FIELD_RANGES.map((r) => `- ${r}`),
].join('\n');

/** CreateMealRuleRequest and UpdateMealRuleRequest (the same five required members). */
export const MealRuleRequestSchema = {
  title: 'MealRuleRequest',
  type: 'object',
  required: ['payload', 'strength', 'scope', 'startDate', 'endDate'],
  description: `CreateMealRuleRequest / UpdateMealRuleRequest. ${RULE_REQUEST_RULES_TEXT}`,
  properties: {
    payload: MealRulePayloadSchema,
    strength: { type: 'string', enum: RULE_STRENGTHS, description: 'RuleStrength' },
    scope: { type: 'string', enum: RULE_SCOPES, description: 'RuleScope' },
    startDate: NullableDate,
    endDate: NullableDate,
  },
} as const satisfies TypedSchema;
/** A create or replace body in the documented shape (the rules between fields are checked apart). */
export type MealRuleRequest = Infer<typeof MealRuleRequestSchema>;

export const MealRuleResponseSchema = {
  title: 'MealRuleResponse',
  type: 'object',
  required: ['id', 'householdId', 'kind', 'strength', 'scope', 'startDate', 'endDate', 'source', 'payload', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    householdId: { type: 'string', format: 'uuid' },
    kind: { type: 'string', enum: MEAL_RULE_KINDS, description: 'Same as payload.kind' },
    strength: { type: 'string', enum: RULE_STRENGTHS },
    scope: { type: 'string', enum: RULE_SCOPES },
    startDate: NullableDate,
    endDate: NullableDate,
    source: { type: 'string', enum: RULE_SOURCES },
    payload: { ...MealRulePayloadSchema, description: 'MealRulePayloadDto' },
    createdAt: { type: 'string', format: 'date-time', description: 'ISO 8601 UTC with milliseconds' },
    updatedAt: { type: 'string', format: 'date-time', description: 'ISO 8601 UTC with milliseconds' },
  },
} as const satisfies TypedSchema;
/** MealRuleResponse of the contract (every member always present). */
export type MealRule = Infer<typeof MealRuleResponseSchema>;

export const MealRuleListSchema = {
  type: 'array',
  items: MealRuleResponseSchema,
  description: 'Oldest first: createdAt, then id.',
} as const satisfies TypedSchema;

export const DefaultRulesResponseSchema = {
  type: 'object',
  required: ['active', 'source', 'rules'],
  properties: {
    active: { type: 'boolean', description: 'True while the household has no CategoryFrequency rule of its own' },
    source: { type: 'string', description: 'The guideline authority (Helsedirektoratet, Livsmedelsverket, …; WHO for other countries)' },
    rules: {
      type: 'array',
      items: MealRuleResponseSchema,
      description: 'Synthetic, never stored: stable ids, source SystemDefault, strength Soft, scope Permanent',
    },
  },
} as const satisfies TypedSchema;
export type DefaultRules = Infer<typeof DefaultRulesResponseSchema>;

export const ParseRulesRequestSchema = {
  type: 'object',
  required: ['text'],
  properties: { text: { type: 'string', maxLength: 1000, ...multiLine, description: 'The sentence, up to 1000 characters (longer: 400 value_too_long)' } },
} as const satisfies TypedSchema;
export type ParseRulesRequest = Infer<typeof ParseRulesRequestSchema>;

export const ParsedLeftoverDinnersSchema = {
  type: ['object', 'null'],
  required: ['summary', 'enabled', 'askedEveryDays'],
  properties: {
    summary: { type: 'string' },
    enabled: { type: 'boolean' },
    askedEveryDays: { type: ['integer', 'null'] },
  },
} as const satisfies TypedSchema;

export const ParseRulesResponseSchema = {
  type: 'object',
  required: ['proposals', 'leftoverDinners', 'unheard'],
  properties: {
    proposals: {
      type: 'array',
      items: {
        type: 'object',
        required: ['summary', 'request'],
        properties: {
          summary: { type: 'string', description: "One line in the sentence's language" },
          request: { ...MealRuleRequestSchema, description: 'CreateMealRuleRequest; POST it as-is to file the rule' },
        },
      },
    },
    leftoverDinners: ParsedLeftoverDinnersSchema,
    unheard: { type: 'array', items: { type: 'string' }, description: 'Each clause no rule kind could hold' },
  },
} as const satisfies TypedSchema;

export const HouseholdParamsSchema = {
  type: 'object',
  required: ['householdId'],
  properties: { householdId: { type: 'string', format: 'uuid' } },
} as const satisfies TypedSchema;

export const RuleParamsSchema = {
  type: 'object',
  required: ['householdId', 'ruleId'],
  properties: { householdId: { type: 'string', format: 'uuid' }, ruleId: { type: 'string', format: 'uuid' } },
} as const satisfies TypedSchema;
