/**
 * JSON Schemas of the households operations: ApiRouter compiles them once to validate requests,
 * and the same objects document the operations in the OpenAPI document.
 */
import type { JsonSchema } from '@svc/http-kit';
import { DRY_GOODS_MEASURES, MEASUREMENT_SYSTEMS, PANTRY_WEIGHTS, TIME_OF_DAY_PATTERN } from './formats.js';

export const HOUSEHOLD_NAME_MAX = 100;
export const MAX_NEW_DISHES_PER_WEEK = 21;
export const LOYALTY_PROGRAMS_MAX = 20;
export const LOYALTY_PROGRAM_NAME_MAX = 100;
export const LANGUAGE_TAG_MAX = 64;
export const ONBOARDING_STEPS = ['Pantry', 'People', 'Allergies', 'Rules'] as const;
export const INVITABLE_ROLES = ['Adult', 'Junior'] as const;

const NOT_BLANK = '\\S';
const uuid = { type: 'string', format: 'uuid' };
const dateTime = { type: 'string', format: 'date-time' };
const role = { type: 'string', enum: ['Owner', 'Adult', 'Junior'] };
const timeOfDay = (description: string) => ({ type: 'string', pattern: TIME_OF_DAY_PATTERN, description });
const nullable = (schema: JsonSchema): JsonSchema => {
  const type = schema.type as string;
  const out: JsonSchema = { ...schema, type: [type, 'null'] };
  if (Array.isArray(schema.enum)) out.enum = [...(schema.enum as unknown[]), null];
  return out;
};

export const householdIdParams: JsonSchema = { type: 'object', required: ['householdId'], properties: { householdId: uuid } };
export const conversationParams: JsonSchema = {
  type: 'object',
  required: ['householdId', 'conversationId'],
  properties: { householdId: uuid, conversationId: uuid },
};

const name = {
  type: 'string',
  minLength: 1,
  maxLength: HOUSEHOLD_NAME_MAX,
  pattern: NOT_BLANK,
  description: '1 to 100 characters, not blank; surrounding spaces are trimmed',
};
const timeZoneId = { type: 'string', description: 'An id of GET /api/v1/time-zones' };
const preferredLanguage = { type: 'string', maxLength: LANGUAGE_TAG_MAX, description: 'BCP 47 tag (nb, en-GB); stored in canonical form' };

export const createHouseholdBody: JsonSchema = {
  type: 'object',
  examples: [{ name: 'The Lovelaces', timeZoneId: 'Europe/London', defaultDinnerTime: '18:00' }],
  required: ['name', 'timeZoneId', 'defaultDinnerTime'],
  properties: {
    name,
    timeZoneId,
    defaultDinnerTime: timeOfDay('HH:mm (HH:mm:ss accepted; seconds are dropped)'),
    preferredLanguage: nullable({ ...preferredLanguage, description: 'BCP 47 tag; null or left out: en' }),
    inviteCode: nullable({ type: 'string', description: 'Needed while intake is invite-only; ignored otherwise' }),
  },
};

const booleanSetting = (description: string) => ({ type: ['boolean', 'null'], description });

export const updateHouseholdBody: JsonSchema = {
  type: 'object',
  description: 'Every member optional; left out or null leaves the setting as it is',
  properties: {
    name: nullable(name),
    timeZoneId: nullable(timeZoneId),
    defaultDinnerTime: nullable(timeOfDay('HH:mm (HH:mm:ss accepted)')),
    preferredLanguage: nullable(preferredLanguage),
    country: nullable({ type: 'string', description: 'ISO 3166-1 alpha-2 (lower case is upper-cased); ZZ for unknown' }),
    preferOwnRecipes: booleanSetting('Prefer the household own recipes'),
    prefersLeftoverDinners: booleanSetting('Leftover dinners welcome'),
    maxNewDishesPerWeek: { type: ['integer', 'null'], minimum: 0, maximum: MAX_NEW_DISHES_PER_WEEK, description: '0 to 21' },
    alwaysNewDishes: booleanSetting('Prefer new dishes every time'),
    pantryWeight: nullable({ type: 'string', enum: [...PANTRY_WEIGHTS] }),
    address: nullable({ type: 'string', description: 'Free text; an empty string clears it (null leaves it as it is)' }),
    loyaltyPrograms: {
      type: ['array', 'null'],
      maxItems: LOYALTY_PROGRAMS_MAX,
      items: { type: 'string', minLength: 1, maxLength: LOYALTY_PROGRAM_NAME_MAX, pattern: NOT_BLANK },
      description: 'Replaces the whole list; up to 20 names of 1 to 100 characters; [] empties it',
    },
    measurementSystem: nullable({ type: 'string', enum: [...MEASUREMENT_SYSTEMS] }),
    dryGoodsMeasure: nullable({ type: 'string', enum: [...DRY_GOODS_MEASURES] }),
    shareReceiptPrices: booleanSetting('Share prices read from receipts'),
    shareUnitWeights: booleanSetting('Share unit weights'),
    tailorServingToTastes: booleanSetting('Tailor servings to tastes'),
    showSoftServingAdvice: booleanSetting('Show soft serving advice'),
    babyEatsSeparatelyWhenNeeded: booleanSetting('A baby eats separately when needed'),
    useStarterLibrary: booleanSetting('Plan from the starter library'),
    showChildTasks: booleanSetting('Show tasks for children'),
    madeAgainLift: booleanSetting('Lift dishes marked made-again'),
  },
};

export const completeOnboardingBody: JsonSchema = {
  type: 'object',
  properties: {
    skippedSteps: {
      type: ['array', 'null'],
      maxItems: 4,
      items: { type: 'string', enum: [...ONBOARDING_STEPS] },
      description: 'Steps skipped; they are named in the recap',
    },
    defaultDinnerTime: nullable(timeOfDay('HH:mm; applied on the completing call only')),
  },
};

export const createInvitationBody: JsonSchema = {
  type: 'object',
  required: ['role'],
  properties: { role: { type: 'string', enum: [...INVITABLE_ROLES] } },
};

export const acceptInvitationBody: JsonSchema = {
  type: 'object',
  required: ['code'],
  properties: { code: { type: 'string', minLength: 1 } },
};

const bool = { type: 'boolean' };

export const householdResponse: JsonSchema = {
  title: 'HouseholdResponse',
  type: 'object',
  description: 'Every member is always sent, the ones the spec marks optional included',
  required: [
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
  ],
  properties: {
    id: uuid,
    name: { type: 'string' },
    timeZoneId: { type: 'string' },
    defaultDinnerTime: { type: 'string', description: 'HH:mm' },
    preferredLanguage: { type: 'string', description: 'BCP 47' },
    country: { type: 'string', description: 'ISO 3166-1 alpha-2, upper case; ZZ when unknown' },
    preferOwnRecipes: bool,
    prefersLeftoverDinners: bool,
    measurementSystem: { type: 'string', enum: [...MEASUREMENT_SYSTEMS] },
    dryGoodsMeasure: { type: 'string', enum: [...DRY_GOODS_MEASURES] },
    address: { type: ['string', 'null'] },
    loyaltyPrograms: { type: 'array', items: { type: 'string' } },
    createdAt: dateTime,
    updatedAt: dateTime,
    shareReceiptPrices: bool,
    onboardingCompletedAt: { type: ['string', 'null'], format: 'date-time' },
    shareUnitWeights: bool,
    tailorServingToTastes: bool,
    showSoftServingAdvice: bool,
    babyEatsSeparatelyWhenNeeded: bool,
    maxNewDishesPerWeek: { type: 'integer', format: 'int32' },
    alwaysNewDishes: bool,
    pantryWeight: { type: 'string', enum: [...PANTRY_WEIGHTS] },
    useStarterLibrary: bool,
    showChildTasks: bool,
    madeAgainLift: bool,
  },
};

export const timeZonesResponse: JsonSchema = {
  type: 'object',
  required: ['ids'],
  properties: { ids: { type: 'array', items: { type: 'string' }, description: 'Every IANA id of the server time-zone database, unsorted' } },
};

export const completeOnboardingResponse: JsonSchema = {
  type: 'object',
  required: ['onboardingCompletedAt', 'alreadyCompleted', 'conversationId'],
  properties: {
    onboardingCompletedAt: dateTime,
    alreadyCompleted: bool,
    conversationId: { type: ['string', 'null'], format: 'uuid', description: "The day's thread that received the recap" },
  },
};

export const invitationResponse: JsonSchema = {
  title: 'InvitationResponse',
  type: 'object',
  required: ['code', 'role', 'householdId', 'expiresAt'],
  properties: { code: { type: 'string' }, role: { type: 'string', enum: [...INVITABLE_ROLES] }, householdId: uuid, expiresAt: dateTime },
};

export const membershipResponse: JsonSchema = {
  title: 'MembershipResponse',
  type: 'object',
  required: ['householdId', 'householdName', 'role', 'memberId'],
  properties: { householdId: uuid, householdName: { type: 'string' }, role, memberId: { type: ['string', 'null'], format: 'uuid' } },
};

export const membersResponse: JsonSchema = {
  type: 'array',
  items: {
    type: 'object',
    required: ['memberId', 'displayName', 'role', 'userId'],
    properties: { memberId: uuid, displayName: { type: 'string' }, role, userId: { type: ['string', 'null'], format: 'uuid' } },
  },
};

export const conversationResponse: JsonSchema = {
  title: 'ConversationResponse',
  type: 'object',
  required: ['id', 'householdId', 'date', 'messages'],
  properties: {
    id: uuid,
    householdId: uuid,
    date: { type: 'string', format: 'date', description: "Calendar date in the household's time zone" },
    messages: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'kind', 'text', 'createdAt'],
        properties: {
          id: uuid,
          kind: { type: 'string', description: 'onboarding_recap for the onboarding recap' },
          text: { type: 'string' },
          createdAt: dateTime,
        },
      },
    },
  },
};
