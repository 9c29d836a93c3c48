/**
 * JSON Schemas of the households operations, each written once: ApiRouter compiles them to
 * validate requests, the same objects document the operations in the OpenAPI document, the models
 * take their row schemas from them, and the TypeScript types are `Infer<typeof Schema>`.
 */
import type { Infer, TypedSchema } from '@svc/http-kit';
import { DRY_GOODS_MEASURES, MEASUREMENT_SYSTEMS, PANTRY_WEIGHTS, TIME_OF_DAY_PATTERN } from './formats.js';

export const HOUSEHOLD_NAME_MAX = 100;
export const MAX_NEW_DISHES_PER_WEEK = 21;
export const LOYALTY_PROGRAMS_MAX = 20;
export const LOYALTY_PROGRAM_NAME_MAX = 100;
export const LANGUAGE_TAG_MAX = 64;
export const ONBOARDING_STEPS = ['Pantry', 'People', 'Allergies', 'Rules'] as const;
export type OnboardingStep = (typeof ONBOARDING_STEPS)[number];
export const ROLES = ['Owner', 'Adult', 'Junior'] as const;
export const INVITABLE_ROLES = ['Adult', 'Junior'] as const;

const NOT_BLANK = '\\S';
const uuid = { type: 'string', format: 'uuid' } as const;
const dateTime = { type: 'string', format: 'date-time' } as const;
const bool = { type: 'boolean' } as const;
const role = { type: 'string', enum: ROLES } as const;

export const HouseholdIdParams = {
  type: 'object',
  required: ['householdId'],
  properties: { householdId: uuid },
} as const satisfies TypedSchema;

export const ConversationParams = {
  type: 'object',
  required: ['householdId', 'conversationId'],
  properties: { householdId: uuid, conversationId: uuid },
} as const satisfies TypedSchema;

export const MemberParams = {
  type: 'object',
  required: ['householdId', 'memberId'],
  properties: { householdId: uuid, memberId: uuid },
} as const satisfies TypedSchema;

export const CreateHouseholdBody = {
  type: 'object',
  examples: [{ name: 'The Lovelaces', timeZoneId: 'Europe/London', defaultDinnerTime: '18:00' }],
  required: ['name', 'timeZoneId', 'defaultDinnerTime'],
  properties: {
    name: {
      type: 'string',
      minLength: 1,
      maxLength: HOUSEHOLD_NAME_MAX,
      pattern: NOT_BLANK,
      description: '1 to 100 characters, not blank; surrounding spaces are trimmed',
    },
    timeZoneId: { type: 'string', description: 'An id of GET /api/v1/time-zones' },
    defaultDinnerTime: { type: 'string', pattern: TIME_OF_DAY_PATTERN, description: 'HH:mm (HH:mm:ss accepted; seconds are dropped)' },
    preferredLanguage: { type: ['string', 'null'], maxLength: LANGUAGE_TAG_MAX, description: 'BCP 47 tag; null or left out: en' },
    inviteCode: { type: ['string', 'null'], description: 'Needed while intake is invite-only; ignored otherwise' },
  },
} as const satisfies TypedSchema;
export type CreateHouseholdRequest = Infer<typeof CreateHouseholdBody>;

const booleanSetting = <D extends string>(description: D) => ({ type: ['boolean', 'null'], description }) as const;

export const UpdateHouseholdBody = {
  type: 'object',
  description: 'Every member optional; left out or null leaves the setting as it is',
  properties: {
    name: {
      type: ['string', 'null'],
      minLength: 1,
      maxLength: HOUSEHOLD_NAME_MAX,
      pattern: NOT_BLANK,
      description: '1 to 100 characters, not blank; surrounding spaces are trimmed',
    },
    timeZoneId: { type: ['string', 'null'], description: 'An id of GET /api/v1/time-zones' },
    defaultDinnerTime: { type: ['string', 'null'], pattern: TIME_OF_DAY_PATTERN, description: 'HH:mm (HH:mm:ss accepted)' },
    preferredLanguage: { type: ['string', 'null'], maxLength: LANGUAGE_TAG_MAX, description: 'BCP 47 tag (nb, en-GB); stored in canonical form' },
    country: { type: ['string', 'null'], description: 'ISO 3166-1 alpha-2 (lower case is upper-cased); ZZ for unknown' },
    preferOwnRecipes: booleanSetting('Prefer the household own recipes'),
    prefersLeftoverDinners: booleanSetting('Leftover dinners welcome'),
    maxNewDishesPerWeek: { type: ['integer', 'null'], minimum: 0, maximum: MAX_NEW_DISHES_PER_WEEK, description: '0 to 21' },
    alwaysNewDishes: booleanSetting('Prefer new dishes every time'),
    pantryWeight: { type: ['string', 'null'], enum: [...PANTRY_WEIGHTS, null] },
    address: { type: ['string', 'null'], description: 'Free text; an empty string clears it (null leaves it as it is)' },
    loyaltyPrograms: {
      type: ['array', 'null'],
      maxItems: LOYALTY_PROGRAMS_MAX,
      items: { type: 'string', minLength: 1, maxLength: LOYALTY_PROGRAM_NAME_MAX, pattern: NOT_BLANK },
      description: 'Replaces the whole list; up to 20 names of 1 to 100 characters; [] empties it',
    },
    measurementSystem: { type: ['string', 'null'], enum: [...MEASUREMENT_SYSTEMS, null] },
    dryGoodsMeasure: { type: ['string', 'null'], enum: [...DRY_GOODS_MEASURES, null] },
    shareReceiptPrices: booleanSetting('Share prices read from receipts'),
    shareUnitWeights: booleanSetting('Share unit weights'),
    tailorServingToTastes: booleanSetting('Tailor servings to tastes'),
    showSoftServingAdvice: booleanSetting('Show soft serving advice'),
    babyEatsSeparatelyWhenNeeded: booleanSetting('A baby eats separately when needed'),
    useStarterLibrary: booleanSetting('Plan from the starter library'),
    showChildTasks: booleanSetting('Show tasks for children'),
    madeAgainLift: booleanSetting('Lift dishes marked made-again'),
  },
} as const satisfies TypedSchema;
export type UpdateHouseholdRequest = Infer<typeof UpdateHouseholdBody>;

export const CompleteOnboardingBody = {
  type: 'object',
  properties: {
    skippedSteps: {
      type: ['array', 'null'],
      maxItems: 4,
      items: { type: 'string', enum: ONBOARDING_STEPS },
      description: 'Steps skipped; they are named in the recap',
    },
    defaultDinnerTime: { type: ['string', 'null'], pattern: TIME_OF_DAY_PATTERN, description: 'HH:mm; applied on the completing call only' },
  },
} as const satisfies TypedSchema;
export type CompleteOnboardingRequest = Infer<typeof CompleteOnboardingBody>;

export const CreateInvitationBody = {
  type: 'object',
  required: ['role'],
  properties: { role: { type: 'string', enum: INVITABLE_ROLES } },
} as const satisfies TypedSchema;

export const AcceptInvitationBody = {
  type: 'object',
  required: ['code'],
  properties: { code: { type: 'string', minLength: 1 } },
} as const satisfies TypedSchema;

export const ChangeRoleBody = {
  type: 'object',
  required: ['role'],
  properties: {
    role: { type: 'string', enum: ROLES, description: 'Adult or Junior; Owner is 400 invalid_role (a household is handed over with POST …/owner)' },
  },
} as const satisfies TypedSchema;

export const TransferOwnershipBody = {
  type: 'object',
  required: ['memberId'],
  properties: { memberId: { type: 'string', format: 'uuid', description: 'An Adult member who has an account; becomes the Owner' } },
} as const satisfies TypedSchema;

export const DeleteHouseholdBody = {
  type: 'object',
  required: ['confirmName'],
  properties: { confirmName: { type: 'string', description: "The household's name, exactly as GET answers it" } },
} as const satisfies TypedSchema;

/** HouseholdResponse of the spec; every member is always sent, the optional ones included. */
export const HouseholdSchema = {
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
    measurementSystem: { type: 'string', enum: MEASUREMENT_SYSTEMS },
    dryGoodsMeasure: { type: 'string', enum: DRY_GOODS_MEASURES },
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
    pantryWeight: { type: 'string', enum: PANTRY_WEIGHTS },
    useStarterLibrary: bool,
    showChildTasks: bool,
    madeAgainLift: bool,
  },
} as const satisfies TypedSchema;
export type HouseholdResponse = Infer<typeof HouseholdSchema>;

export const TimeZonesSchema = {
  type: 'object',
  required: ['ids'],
  properties: { ids: { type: 'array', items: { type: 'string' }, description: 'Every IANA id of the server time-zone database, unsorted' } },
} as const satisfies TypedSchema;

export const CompleteOnboardingSchema = {
  type: 'object',
  required: ['onboardingCompletedAt', 'alreadyCompleted', 'conversationId'],
  properties: {
    onboardingCompletedAt: dateTime,
    alreadyCompleted: bool,
    conversationId: { type: ['string', 'null'], format: 'uuid', description: "The day's thread that received the recap" },
  },
} as const satisfies TypedSchema;
export type CompleteOnboardingResponse = Infer<typeof CompleteOnboardingSchema>;

export const InvitationSchema = {
  title: 'InvitationResponse',
  type: 'object',
  required: ['code', 'role', 'householdId', 'expiresAt'],
  properties: { code: { type: 'string' }, role: { type: 'string', enum: INVITABLE_ROLES }, householdId: uuid, expiresAt: dateTime },
} as const satisfies TypedSchema;
export type InvitationResponse = Infer<typeof InvitationSchema>;

/** An outstanding invitation as GET …/invitations lists it. */
export const OutstandingInvitationSchema = {
  title: 'OutstandingInvitation',
  type: 'object',
  required: ['code', 'role', 'householdId', 'expiresAt', 'createdAt', 'createdBy'],
  properties: {
    code: {
      type: ['string', 'null'],
      description:
        'The code, to hand on again or to revoke with DELETE …/invitations/{code}; null for a code minted before codes were kept sealed, or sealed under a secret since rotated (it still works until it expires)',
    },
    role: { type: 'string', enum: INVITABLE_ROLES },
    householdId: uuid,
    expiresAt: dateTime,
    createdAt: dateTime,
    createdBy: { type: ['string', 'null'], format: 'uuid', description: 'memberId of the member who minted it' },
  },
} as const satisfies TypedSchema;
export type OutstandingInvitation = Infer<typeof OutstandingInvitationSchema>;

export const OutstandingInvitationsSchema = {
  type: 'object',
  required: ['items'],
  properties: { items: { type: 'array', items: OutstandingInvitationSchema, description: 'Unused and unexpired codes, newest first' } },
} as const satisfies TypedSchema;
export type OutstandingInvitations = Infer<typeof OutstandingInvitationsSchema>;

export const InvitationParams = {
  type: 'object',
  required: ['householdId', 'code'],
  properties: { householdId: uuid, code: { type: 'string', minLength: 1, maxLength: 200, description: 'The invitation code' } },
} as const satisfies TypedSchema;

export const MembershipSchema = {
  title: 'MembershipResponse',
  type: 'object',
  required: ['householdId', 'householdName', 'role', 'memberId'],
  properties: { householdId: uuid, householdName: { type: 'string' }, role, memberId: { type: ['string', 'null'], format: 'uuid' } },
} as const satisfies TypedSchema;

/** A member as GET …/members lists it. */
export const MemberSchema = {
  type: 'object',
  required: ['memberId', 'displayName', 'role', 'userId'],
  properties: { memberId: uuid, displayName: { type: 'string' }, role, userId: { type: ['string', 'null'], format: 'uuid' } },
} as const satisfies TypedSchema;
export type MemberResponse = Infer<typeof MemberSchema>;

export const MembersSchema = { type: 'array', items: MemberSchema } as const satisfies TypedSchema;

export const MessageSchema = {
  type: 'object',
  required: ['id', 'kind', 'text', 'createdAt'],
  properties: {
    id: uuid,
    kind: { type: 'string', description: 'onboarding_recap for the onboarding recap' },
    text: { type: 'string' },
    createdAt: dateTime,
  },
} as const satisfies TypedSchema;
export type MessageResponse = Infer<typeof MessageSchema>;

export const ConversationSchema = {
  title: 'ConversationResponse',
  type: 'object',
  required: ['id', 'householdId', 'date', 'messages'],
  properties: {
    id: uuid,
    householdId: uuid,
    date: { type: 'string', format: 'date', description: "Calendar date in the household's time zone" },
    messages: { type: 'array', items: MessageSchema },
  },
} as const satisfies TypedSchema;
export type ConversationResponse = Infer<typeof ConversationSchema>;
