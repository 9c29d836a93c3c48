import type { MealCategory, PriceClass, StarterLanguage } from '@svc/contracts';
import { type Infer, singleLine, type TypedSchema } from '@svc/http-kit';

/*
 * The dish shapes of the contract, as JSON Schema written once (`as const satisfies TypedSchema`):
 * they validate requests, document the operations, give DishModel its jsonSchema and type the code.
 */

/** The meal categories (`MealCategory`), in the contract's order. */
export const MEAL_CATEGORIES = [
  'Fish',
  'Meat',
  'Poultry',
  'Vegetarian',
  'Vegan',
  'Soup',
  'Pasta',
  'Taco',
  'Leftovers',
  'Other',
] as const satisfies readonly MealCategory[];
/** A dish's price classes. */
export const PRICE_CLASSES = ['Cheap', 'Mid', 'Expensive'] as const satisfies readonly PriceClass[];
/** The languages the starter library is written in. */
export const STARTER_LANGUAGES = ['en', 'nb'] as const satisfies readonly StarterLanguage[];

/** The contract's bounds of a dish, and the list's paging. */
export const DISH_LIMITS = {
  name: 100,
  activeMinutes: { minimum: 1, maximum: 600 },
  tags: 20,
  tag: 40,
  /** Dishes one household may keep (409 `limit_reached` beyond). */
  perHousehold: 2000,
  q: 100,
  cursor: 2048,
  pageMax: 100,
  pageDefault: 50,
} as const;

const Uuid = { type: 'string', format: 'uuid' } as const satisfies TypedSchema;
const Timestamp = { type: 'string', format: 'date-time' } as const satisfies TypedSchema;

const Name = {
  type: 'string',
  minLength: 1,
  maxLength: DISH_LIMITS.name,
  ...singleLine,
  description: "The dish's name: 1–100 characters on one line (no control characters)",
} as const satisfies TypedSchema;
const Category = { type: 'string', enum: MEAL_CATEGORIES, description: 'MealCategory' } as const satisfies TypedSchema;
const ActiveMinutes = {
  type: 'integer',
  ...DISH_LIMITS.activeMinutes,
  description: 'Minutes of hands-on cooking (1–600); what cooking-time rules and caps compare',
} as const satisfies TypedSchema;
const Price = { type: 'string', enum: PRICE_CLASSES, description: 'Cheap, Mid or Expensive' } as const satisfies TypedSchema;
const Tags = {
  type: 'array',
  maxItems: DISH_LIMITS.tags,
  items: { type: 'string', minLength: 1, maxLength: DISH_LIMITS.tag, ...singleLine },
  description: 'At most 20 tags, each 1–40 characters on one line',
} as const satisfies TypedSchema;

export const HouseholdParamsSchema = {
  type: 'object',
  required: ['householdId'],
  properties: { householdId: Uuid },
} as const satisfies TypedSchema;

export const DishParamsSchema = {
  type: 'object',
  required: ['householdId', 'dishId'],
  properties: { householdId: Uuid, dishId: Uuid },
} as const satisfies TypedSchema;

/** POST and PUT body: PUT is a full replacement (`tags` and `madeAgain` may be left out: [] and false). */
export const DishRequestSchema = {
  title: 'DishRequest',
  type: 'object',
  examples: [
    {
      name: 'Fish cakes with potatoes and carrots',
      category: 'Fish',
      activeMinutes: 25,
      priceClass: 'Cheap',
      tags: ['classic', 'kid-friendly'],
      madeAgain: true,
    },
  ],
  required: ['name', 'category', 'activeMinutes', 'priceClass'],
  properties: {
    name: Name,
    category: Category,
    activeMinutes: ActiveMinutes,
    priceClass: Price,
    tags: { ...Tags, default: [] },
    madeAgain: { type: 'boolean', default: false, description: 'The household would make it again (the planner leans towards it); false when left out' },
  },
} as const satisfies TypedSchema;
export type DishRequest = Infer<typeof DishRequestSchema>;

/** A dish of the household, as every answer holds it. */
export const DishSchema = {
  title: 'Dish',
  type: 'object',
  examples: [
    {
      id: '5d0f3c1e-8b7a-4c2e-9f61-2a4b6c8d0e12',
      householdId: '0b9e6f5c-3d2a-4e8b-9c71-6a5f4e3d2c1b',
      name: 'Fish cakes with potatoes and carrots',
      category: 'Fish',
      activeMinutes: 25,
      priceClass: 'Cheap',
      tags: ['classic', 'kid-friendly'],
      madeAgain: true,
      createdAt: '2026-12-01T17:02:11.482Z',
      updatedAt: '2026-12-01T17:02:11.482Z',
    },
  ],
  required: ['id', 'householdId', 'name', 'category', 'activeMinutes', 'priceClass', 'tags', 'madeAgain', 'createdAt', 'updatedAt'],
  properties: {
    id: Uuid,
    householdId: Uuid,
    name: Name,
    category: Category,
    activeMinutes: ActiveMinutes,
    priceClass: Price,
    tags: Tags,
    madeAgain: { type: 'boolean' },
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
} as const satisfies TypedSchema;
export type Dish = Infer<typeof DishSchema>;

export const DishListQuerySchema = {
  type: 'object',
  properties: {
    category: { ...Category, description: 'Only dishes of this MealCategory' },
    q: {
      type: 'string',
      minLength: 1,
      maxLength: DISH_LIMITS.q,
      description: 'Only dishes whose name holds this text, ignoring letter case (taken literally: `%` and `_` are no wildcards)',
    },
    cursor: {
      type: 'string',
      minLength: 1,
      maxLength: DISH_LIMITS.cursor,
      description:
        "`nextCursor` of the previous page. It keeps that page's category and q: send them again unchanged or leave them out; different ones (or a cursor of another household's list) answer 400 invalid_cursor.",
    },
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: DISH_LIMITS.pageMax,
      default: DISH_LIMITS.pageDefault,
      description: '1 to 100, default 50; outside: 400 validation_failed',
    },
  },
} as const satisfies TypedSchema;
export type DishListQuery = Infer<typeof DishListQuerySchema>;

export const DishPageSchema = {
  title: 'DishPage',
  type: 'object',
  examples: [
    {
      items: [
        {
          id: '5d0f3c1e-8b7a-4c2e-9f61-2a4b6c8d0e12',
          householdId: '0b9e6f5c-3d2a-4e8b-9c71-6a5f4e3d2c1b',
          name: 'Fish cakes with potatoes and carrots',
          category: 'Fish',
          activeMinutes: 25,
          priceClass: 'Cheap',
          tags: ['classic', 'kid-friendly'],
          madeAgain: true,
          createdAt: '2026-12-01T17:02:11.482Z',
          updatedAt: '2026-12-01T17:02:11.482Z',
        },
      ],
      nextCursor: null,
    },
  ],
  required: ['items', 'nextCursor'],
  properties: {
    items: { type: 'array', items: DishSchema, description: 'By name ignoring letter case, then id' },
    nextCursor: { type: ['string', 'null'], description: 'Pass back as `cursor` for the next page; null on the last page' },
  },
} as const satisfies TypedSchema;
export type DishPage = Infer<typeof DishPageSchema>;

export const StarterQuerySchema = {
  type: 'object',
  properties: {
    language: {
      type: 'string',
      enum: STARTER_LANGUAGES,
      description: 'en or nb; left out: from Accept-Language (nb, nn or no preferred over English: nb), else en. Anything else: 400 validation_failed.',
    },
  },
} as const satisfies TypedSchema;

/** A dish of the starter library: the same `id`, category, minutes and price class in every language. */
export const StarterDishSchema = {
  title: 'StarterDish',
  type: 'object',
  required: ['id', 'name', 'category', 'activeMinutes', 'priceClass', 'tags'],
  properties: {
    id: { ...Uuid, description: 'The same in every language' },
    name: Name,
    category: Category,
    activeMinutes: ActiveMinutes,
    priceClass: Price,
    tags: Tags,
  },
} as const satisfies TypedSchema;
export type StarterDish = Infer<typeof StarterDishSchema>;

export const StarterDishListSchema = {
  title: 'StarterDishList',
  type: 'object',
  examples: [
    {
      items: [
        {
          id: '3f6c2a9e-1b4d-4e7f-8a2c-5d9e0b1f3a64',
          name: 'Fiskekaker med potet og gulrot',
          category: 'Fish',
          activeMinutes: 25,
          priceClass: 'Cheap',
          tags: ['klassiker', 'norsk', 'barnevennlig'],
        },
      ],
    },
  ],
  required: ['items'],
  properties: { items: { type: 'array', items: StarterDishSchema, description: 'The whole library in the language asked for, by name' } },
} as const satisfies TypedSchema;
