import type { HouseholdProfile, HouseholdRole, Membership } from '@svc/contracts';
import type { Knex } from 'knex';
import type { DryGoodsMeasure, MeasurementSystem, PantryWeight } from './formats.js';

/** HouseholdResponse of the spec, every optional member included (decisions.md §2: always sent). */
export interface HouseholdResponse {
  id: string;
  name: string;
  timeZoneId: string;
  /** `HH:mm`. */
  defaultDinnerTime: string;
  preferredLanguage: string;
  country: string;
  preferOwnRecipes: boolean;
  prefersLeftoverDinners: boolean;
  measurementSystem: MeasurementSystem;
  dryGoodsMeasure: DryGoodsMeasure;
  address: string | null;
  loyaltyPrograms: string[];
  createdAt: string;
  updatedAt: string;
  shareReceiptPrices: boolean;
  onboardingCompletedAt: string | null;
  shareUnitWeights: boolean;
  tailorServingToTastes: boolean;
  showSoftServingAdvice: boolean;
  babyEatsSeparatelyWhenNeeded: boolean;
  maxNewDishesPerWeek: number;
  alwaysNewDishes: boolean;
  pantryWeight: PantryWeight;
  useStarterLibrary: boolean;
  showChildTasks: boolean;
  madeAgainLift: boolean;
}

/** What a new household is made of; every other setting takes its decided default. */
export interface NewHousehold {
  name: string;
  timeZoneId: string;
  defaultDinnerTime: string;
  preferredLanguage: string;
  country: string;
  measurementSystem: MeasurementSystem;
  dryGoodsMeasure: DryGoodsMeasure;
}

/** The settings an Owner may change; values are already validated and normalised. */
export interface HouseholdChanges {
  name?: string;
  timeZoneId?: string;
  defaultDinnerTime?: string;
  preferredLanguage?: string;
  country?: string;
  preferOwnRecipes?: boolean;
  prefersLeftoverDinners?: boolean;
  maxNewDishesPerWeek?: number;
  alwaysNewDishes?: boolean;
  pantryWeight?: PantryWeight;
  /** null clears it. */
  address?: string | null;
  loyaltyPrograms?: string[];
  measurementSystem?: MeasurementSystem;
  dryGoodsMeasure?: DryGoodsMeasure;
  shareReceiptPrices?: boolean;
  shareUnitWeights?: boolean;
  tailorServingToTastes?: boolean;
  showSoftServingAdvice?: boolean;
  babyEatsSeparatelyWhenNeeded?: boolean;
  useStarterLibrary?: boolean;
  showChildTasks?: boolean;
  madeAgainLift?: boolean;
}

/** How a household creation got past intake: the invite code to book, if any. */
export interface IntakeTicket {
  /** Upper case. */
  code: string;
  /** `config`: one of INVITE_CODES (reusable); `database`: an operator's code, spent in the creating transaction. */
  source: 'config' | 'database';
}

/** A member as stored; the display name of an account member comes from accounts. */
export interface MemberRow {
  memberId: string;
  userId: string | null;
  role: HouseholdRole;
  /** Only for a member without an account. */
  displayName: string | null;
}

export interface InvitationResponse {
  code: string;
  role: 'Adult' | 'Junior';
  householdId: string;
  expiresAt: string;
}

export interface MessageResponse {
  id: string;
  kind: string;
  text: string;
  createdAt: string;
}

export interface ConversationResponse {
  id: string;
  householdId: string;
  /** `YYYY-MM-DD` in the household's time zone. */
  date: string;
  messages: MessageResponse[];
}

export interface CompleteOnboardingResponse {
  onboardingCompletedAt: string;
  alreadyCompleted: boolean;
  conversationId: string | null;
}

export type OnboardingStep = 'Pantry' | 'People' | 'Allergies' | 'Rules';

/** What the router and the domain functions need from storage. */
export interface HouseholdStore {
  /** The caller's role; NotFoundError for an unknown household or a non-member. */
  roleOf(userId: string, householdId: string): Promise<HouseholdRole>;
  /** The household and the caller's role in one look-up; NotFoundError as roleOf. */
  getForMember(userId: string, householdId: string): Promise<{ household: HouseholdResponse; role: HouseholdRole }>;
  /** The caller's role and the onboarding state, in one look-up; NotFoundError as roleOf. */
  onboardingState(userId: string, householdId: string): Promise<{ role: HouseholdRole; completedAt: string | null; conversationId: string | null }>;
  memberships(userId: string): Promise<Membership[]>;
  profile(householdId: string): Promise<HouseholdProfile>;
  /**
   * Creates the household, its Owner member, its subscription on the default plan and (for the
   * user's first household) the welcome bundle, and books the invite code, in one transaction.
   * Throws 403 `invite_code_invalid` when a database code is unknown, spent, expired or revoked.
   */
  create(input: { userId: string; household: NewHousehold; intake: IntakeTicket | null; welcomeCredits: number; at: Date }): Promise<HouseholdResponse>;
  /** Applies the changes (none: answers the household as it is, updatedAt untouched). */
  update(householdId: string, changes: HouseholdChanges, at: Date): Promise<HouseholdResponse>;
  members(householdId: string): Promise<MemberRow[]>;
  createInvitation(input: {
    householdId: string;
    role: 'Adult' | 'Junior';
    createdBy: string;
    code: string;
    at: Date;
    expiresAt: Date;
  }): Promise<InvitationResponse>;
  /** 404 `invitation_not_found` (unknown, used, expired), 409 `already_member`. */
  acceptInvitation(input: { userId: string; code: string; at: Date }): Promise<Membership>;
  conversation(householdId: string, conversationId: string): Promise<ConversationResponse>;
  /**
   * Completes onboarding under a row lock on the household: the first call stamps it, applies the
   * dinner time and writes `recap(household)` into the day's thread; later calls write nothing.
   */
  completeOnboarding(input: {
    householdId: string;
    at: Date;
    defaultDinnerTime: string | null;
    skippedSteps: OnboardingStep[];
    recap: (household: HouseholdResponse) => string;
  }): Promise<CompleteOnboardingResponse>;

  /** The household as it is now (no access check); NotFoundError when there is none. */
  get(householdId: string, trx?: Knex.Transaction): Promise<HouseholdResponse>;
  /** Runs `work` in one transaction: everything it writes is kept, or nothing. */
  transaction<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T>;
  /**
   * Locks the household's row (FOR NO KEY UPDATE) until `trx` ends. Every change of a household's
   * members (role, removal, leaving, hand-over, account deletion) takes it first, so they run one
   * at a time and each one reads the members as the previous one left them. Answers the
   * household's name, or undefined when there is no such household.
   */
  lockHousehold(householdId: string, trx: Knex.Transaction): Promise<{ name: string } | undefined>;
  /** The household's member rows of `userId` and of `memberId` (zero, one or two rows). */
  memberRows(householdId: string, who: { userId: string; memberId?: string }, trx?: Knex.Transaction): Promise<MemberRow[]>;
  /** Sets a member's role; false when the household has no such member. */
  setRole(householdId: string, memberId: string, role: HouseholdRole, trx?: Knex.Transaction): Promise<boolean>;
  /** Removes a member (the household's data stays); false when the household has no such member. */
  removeMember(householdId: string, memberId: string, trx?: Knex.Transaction): Promise<boolean>;
  /** Deletes the households; their foreign keys take every row that belongs to them along. */
  deleteHouseholds(householdIds: string[], trx?: Knex.Transaction): Promise<void>;
  /**
   * Every household `userId` belongs to, locked as lockHousehold does (in id order, so two
   * deletions never wait on each other in a circle), with the person's role there and how many
   * other members it has.
   */
  lockMembershipsOf(userId: string, trx: Knex.Transaction): Promise<{ householdId: string; role: HouseholdRole; otherMembers: number }[]>;
  /** Removes every membership of `userId`. */
  removeMemberships(userId: string, trx?: Knex.Transaction): Promise<void>;
}
