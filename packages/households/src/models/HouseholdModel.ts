import { BaseModel, objection, type Pojo, rowSchema, TimestampSchema } from '@svc/db';
import type { DryGoodsMeasure, MeasurementSystem, PantryWeight } from '../formats.js';
import { toHourMinute } from '../formats.js';
import { type HouseholdResponse, HouseholdSchema, type OnboardingStep } from '../schemas.js';
import { HouseholdMemberModel } from './HouseholdMemberModel.js';

/**
 * One row of `households`: the settings of HouseholdResponse, plus the onboarding state, the AI
 * pause, the creator and who last wrote its name. Everything else of a household hangs on it with ON DELETE CASCADE.
 */
export class HouseholdModel extends BaseModel {
  static override tableName = 'households';
  static override idColumn = 'id';
  static override timestamps = ['createdAt', 'updatedAt', 'onboardingCompletedAt', 'aiPausedUntil'];
  static override jsonSchema = rowSchema(HouseholdSchema, {
    // The API documents it as int32 (a format the model's validator does not know); the row's bounds instead.
    maxNewDishesPerWeek: { type: 'integer', minimum: 0, maximum: 21 },
    onboardingConversationId: { type: ['string', 'null'], format: 'uuid' },
    onboardingSkippedSteps: { type: ['array', 'null'], items: { type: 'string' } },
    aiPausedUntil: { ...TimestampSchema, type: ['string', 'null'] },
    createdBy: { type: ['string', 'null'], format: 'uuid' },
    renamedBy: { type: ['string', 'null'], format: 'uuid' },
  });
  /** `loyalty_programs` and `onboarding_skipped_steps` are PostgreSQL text[] (the driver maps arrays), not JSON. */
  static override jsonAttributes: string[] = [];

  /** The store joins a household with the caller's member row (`getForMember`, one statement). */
  static override relationMappings = () => ({
    members: {
      relation: objection.Model.HasManyRelation,
      modelClass: HouseholdMemberModel,
      join: { from: 'households.id', to: 'household_members.household_id' },
    },
  });

  declare id: string;
  declare name: string;
  declare timeZoneId: string;
  /** HH:mm (the column is time(0); read as HH:mm:ss and cut). */
  declare defaultDinnerTime: string;
  declare preferredLanguage: string;
  declare country: string;
  declare measurementSystem: MeasurementSystem;
  declare dryGoodsMeasure: DryGoodsMeasure;
  declare pantryWeight: PantryWeight;
  declare preferOwnRecipes: boolean;
  declare prefersLeftoverDinners: boolean;
  declare shareReceiptPrices: boolean;
  declare shareUnitWeights: boolean;
  declare tailorServingToTastes: boolean;
  declare showSoftServingAdvice: boolean;
  declare babyEatsSeparatelyWhenNeeded: boolean;
  declare maxNewDishesPerWeek: number;
  declare alwaysNewDishes: boolean;
  declare useStarterLibrary: boolean;
  declare showChildTasks: boolean;
  declare madeAgainLift: boolean;
  declare address: string | null;
  declare loyaltyPrograms: string[];
  declare onboardingCompletedAt: string | null;
  declare onboardingConversationId: string | null;
  declare onboardingSkippedSteps: OnboardingStep[] | null;
  declare aiPausedUntil: string | null;
  /** The creating account (accounts.id; null once that account is deleted). */
  declare createdBy: string | null;
  /** The account whose PATCH last wrote the name (accounts.id; null before any and once that account is deleted): a rename's news names it. */
  declare renamedBy: string | null;
  declare createdAt: string;
  declare updatedAt: string;

  override $parseDatabaseJson(json: Pojo): Pojo {
    const parsed = super.$parseDatabaseJson(json);
    if (typeof parsed.defaultDinnerTime === 'string') parsed.defaultDinnerTime = toHourMinute(parsed.defaultDinnerTime);
    if ('loyaltyPrograms' in parsed && parsed.loyaltyPrograms == null) parsed.loyaltyPrograms = [];
    return parsed;
  }

  /** HouseholdResponse: the settings, in the contract's order, without the bookkeeping columns. */
  toApi(): HouseholdResponse {
    return {
      id: this.id,
      name: this.name,
      timeZoneId: this.timeZoneId,
      defaultDinnerTime: this.defaultDinnerTime,
      preferredLanguage: this.preferredLanguage,
      country: this.country,
      preferOwnRecipes: this.preferOwnRecipes,
      prefersLeftoverDinners: this.prefersLeftoverDinners,
      measurementSystem: this.measurementSystem,
      dryGoodsMeasure: this.dryGoodsMeasure,
      address: this.address,
      loyaltyPrograms: this.loyaltyPrograms ?? [],
      createdAt: this.createdAt,
      updatedAt: this.updatedAt,
      shareReceiptPrices: this.shareReceiptPrices,
      onboardingCompletedAt: this.onboardingCompletedAt,
      shareUnitWeights: this.shareUnitWeights,
      tailorServingToTastes: this.tailorServingToTastes,
      showSoftServingAdvice: this.showSoftServingAdvice,
      babyEatsSeparatelyWhenNeeded: this.babyEatsSeparatelyWhenNeeded,
      maxNewDishesPerWeek: this.maxNewDishesPerWeek,
      alwaysNewDishes: this.alwaysNewDishes,
      pantryWeight: this.pantryWeight,
      useStarterLibrary: this.useStarterLibrary,
      showChildTasks: this.showChildTasks,
      madeAgainLift: this.madeAgainLift,
    };
  }

  override $formatJson(_json: Pojo): Pojo {
    return this.toApi();
  }
}
