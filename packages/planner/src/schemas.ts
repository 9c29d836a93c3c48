import type { Infer, TypedSchema } from '@svc/http-kit';

const uuid = { type: 'string', format: 'uuid' } as const;
const date = { type: 'string', format: 'date', description: 'YYYY-MM-DD' } as const;

/** The statuses of a plan, in the order a run goes through them. */
export const PLAN_STATUSES = ['queued', 'running', 'done', 'infeasible', 'failed', 'replaced'] as const;
export type PlanStatus = (typeof PLAN_STATUSES)[number];

const EXAMPLE_DAY = {
  date: '2026-11-23',
  servingTime: '18:00',
  dinner: true,
  dish: { id: 'starter-fish-tacos', origin: 'starter', name: 'Fish tacos', category: 'Taco', activeMinutes: 25, priceClass: 'Mid' },
  servings: 3,
  locked: false,
  why: [{ ruleId: '0e6b8c4e-8f1a-4f7e-9d55-2b0f1c7a9e11', eventId: null, text: 'No Meat on Monday (CategoryExcludedDays)' }],
};

const EXAMPLE_PLAN = {
  id: '6f1c2a9e-3b7d-4c55-8e0a-1d2f3a4b5c6d',
  householdId: '2b8e1f7a-5c3d-4e9a-b1f0-7d6c5b4a3e2f',
  startDate: '2026-11-23',
  weeks: 1,
  status: 'done',
  createdAt: '2026-11-22T09:00:00.000Z',
  finishedAt: '2026-11-22T09:00:00.412Z',
  softCost: 0,
  days: [EXAMPLE_DAY],
  unmet: [],
  conflicts: [],
};

export const HouseholdParamsSchema = {
  type: 'object',
  required: ['householdId'],
  properties: { householdId: uuid },
} as const satisfies TypedSchema;

export const PlanParamsSchema = {
  type: 'object',
  required: ['householdId', 'planId'],
  properties: { householdId: uuid, planId: uuid },
} as const satisfies TypedSchema;

export const DayParamsSchema = {
  type: 'object',
  required: ['householdId', 'planId', 'date'],
  properties: { householdId: uuid, planId: uuid, date },
} as const satisfies TypedSchema;

export const ListPlansQuerySchema = {
  type: 'object',
  properties: {
    from: { ...date, description: "YYYY-MM-DD; default this week's Monday in the household's zone" },
    to: { ...date, description: 'YYYY-MM-DD; default 83 days after `from` (`from` left out: after this week’s Monday)' },
  },
} as const satisfies TypedSchema;

export const CreatePlanRequestSchema = {
  type: 'object',
  required: ['startDate', 'weeks'],
  additionalProperties: false,
  examples: [{ startDate: '2026-11-23', weeks: 1 }],
  properties: {
    startDate: { ...date, description: "A Monday, from this week's Monday (household's zone) up to 84 days after it" },
    weeks: { type: 'integer', minimum: 1, maximum: 4, description: 'How many weeks (1–4)' },
  },
} as const satisfies TypedSchema;
export type CreatePlanRequest = Infer<typeof CreatePlanRequestSchema>;

const DishRefSchema = {
  type: 'object',
  required: ['id', 'origin'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', minLength: 1, maxLength: 100, description: "An own dish's id or a starter dish's id" },
    origin: { type: 'string', enum: ['own', 'starter'] },
  },
} as const satisfies TypedSchema;

export const SetDayRequestSchema = {
  type: 'object',
  required: ['dish', 'locked'],
  additionalProperties: false,
  examples: [
    { dish: { id: 'starter-fish-tacos', origin: 'starter' }, locked: true },
    { dish: null, locked: true },
  ],
  properties: {
    dish: { anyOf: [DishRefSchema, { type: 'null' }], description: 'The dish by its reference; null: no dinner that day' },
    locked: { type: 'boolean', description: 'A locked day is kept as it is by a replan' },
  },
} as const satisfies TypedSchema;
export type SetDayRequest = Infer<typeof SetDayRequestSchema>;

export const DayDishSchema = {
  type: 'object',
  title: 'PlanDayDish',
  description: 'A snapshot of the dish: editing or deleting the dish later does not change the plan',
  required: ['id', 'origin', 'name', 'category', 'activeMinutes', 'priceClass'],
  properties: {
    id: { type: 'string' },
    origin: { type: 'string', enum: ['own', 'starter'] },
    name: { type: 'string' },
    category: { type: 'string', description: 'MealCategory' },
    activeMinutes: { type: 'integer' },
    priceClass: { type: 'string', enum: ['Cheap', 'Mid', 'Expensive'] },
  },
} as const satisfies TypedSchema;

const WhySchema = {
  type: 'object',
  required: ['ruleId', 'eventId', 'text'],
  properties: {
    ruleId: { type: ['string', 'null'], description: 'A rule this day follows or names; null when none' },
    eventId: { type: ['string', 'null'], description: 'An event on this date; null when none' },
    text: { type: 'string', description: "In the household's preferred language" },
  },
} as const satisfies TypedSchema;

export const PlanDaySchema = {
  type: 'object',
  title: 'PlanDayResponse',
  examples: [EXAMPLE_DAY],
  required: ['date', 'servingTime', 'dinner', 'dish', 'servings', 'locked', 'why'],
  properties: {
    date,
    servingTime: { type: 'string', description: 'HH:mm' },
    dinner: { type: 'boolean' },
    dish: { anyOf: [DayDishSchema, { type: 'null' }] },
    servings: { type: 'integer' },
    locked: { type: 'boolean' },
    why: { type: 'array', items: WhySchema },
  },
} as const satisfies TypedSchema;
export type PlanDay = Infer<typeof PlanDaySchema>;

const UnmetSchema = {
  type: 'object',
  required: ['ruleId', 'dates', 'cost', 'text'],
  properties: {
    ruleId: { type: ['string', 'null'], description: 'null for the built-in RepeatAfterDays of 7 days' },
    dates: { type: 'array', items: date },
    cost: { type: 'integer' },
    text: { type: 'string' },
  },
} as const satisfies TypedSchema;

const ConflictSchema = {
  type: 'object',
  required: ['ruleIds', 'eventIds', 'dates', 'text'],
  properties: {
    ruleIds: { type: 'array', items: { type: 'string' } },
    eventIds: { type: 'array', items: { type: 'string' } },
    dates: { type: 'array', items: date },
    text: { type: 'string' },
  },
} as const satisfies TypedSchema;

export const PlanSchema = {
  type: 'object',
  title: 'PlanResponse',
  examples: [EXAMPLE_PLAN],
  required: ['id', 'householdId', 'startDate', 'weeks', 'status', 'createdAt', 'finishedAt', 'softCost', 'days', 'unmet', 'conflicts'],
  properties: {
    id: uuid,
    householdId: uuid,
    startDate: date,
    weeks: { type: 'integer' },
    status: { type: 'string', enum: PLAN_STATUSES },
    createdAt: { type: 'string', format: 'date-time' },
    finishedAt: { type: ['string', 'null'], format: 'date-time' },
    softCost: { type: ['integer', 'null'], description: 'null unless the run ended done (a replaced plan keeps its own)' },
    days: { type: 'array', items: PlanDaySchema, description: '[] unless done or replaced' },
    unmet: { type: 'array', items: UnmetSchema, description: 'One item per Soft rule the plan breaks; [] unless done or replaced' },
    conflicts: { type: 'array', items: ConflictSchema, description: 'Hard rules and events that cannot hold together; [] unless infeasible' },
  },
} as const satisfies TypedSchema;
export type Plan = Infer<typeof PlanSchema>;

export const PlanListSchema = {
  type: 'object',
  title: 'PlanListResponse',
  examples: [{ items: [EXAMPLE_PLAN] }],
  required: ['items'],
  properties: { items: { type: 'array', items: PlanSchema } },
} as const satisfies TypedSchema;
