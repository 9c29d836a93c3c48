import type { HouseholdProfile, HouseholdRole, Membership } from '@svc/contracts';
import { apiColumnsSql, isPgError, objection, PG } from '@svc/db';
import { ConflictError, isUuid, NotAllowedError, NotFoundError, preparedQuery } from '@svc/http-kit';
import type { Knex } from 'knex';
import { openPlan } from './CreditLedger.js';
import { calendarDateIn, type DryGoodsMeasure, type MeasurementSystem, type PantryWeight } from './formats.js';
import {
  HouseholdConversationModel,
  HouseholdDepartureModel,
  HouseholdInvitationModel,
  HouseholdMemberModel,
  HouseholdMessageModel,
  HouseholdModel,
  IntakeCodeRedemptionModel,
  type IntakeInviteCode,
  IntakeInviteCodeModel,
  invitationCodeHash,
  type MemberRow,
} from './models/index.js';
import {
  type CompleteOnboardingResponse,
  type ConversationResponse,
  type HouseholdResponse,
  HouseholdSchema,
  type InvitationResponse,
  type OnboardingStep,
} from './schemas.js';

/** An unused, unexpired invitation as stored (its code sealed, its creator an account id). */
export interface StoredInvitation {
  householdId: string;
  role: 'Adult' | 'Junior';
  sealedCode: Buffer | null;
  createdAt: string;
  expiresAt: string;
  /** The member id of the account that minted it, while that account is a member. */
  createdByMemberId: string | null;
}

/** A member who left or was removed, as recorded in `household_departures`. */
export interface Departure {
  householdId: string;
  userId: string;
  memberId: string;
  role: HouseholdRole;
  reason: 'left' | 'removed';
  at: Date;
}

/** The columns of a HouseholdResponse (every one is a column of `households`). */
const HOUSEHOLD_API_COLUMNS = Object.keys(HouseholdSchema.properties);

/**
 * The answer's columns by name (never `*`: a migration that adds a column must not break a
 * prepared statement on live connections), aliased to the model's camelCase names, timestamps
 * formatted by PostgreSQL as the API writes them: the same text in the statement below and in the
 * declared read, so both give the model the same values.
 */
const HOUSEHOLD_READ_COLUMNS = apiColumnsSql('h', HOUSEHOLD_API_COLUMNS, HouseholdModel.timestamps);

/**
 * GET of a household outside a transaction, the hot read when the session read did not lend it:
 * one prepared statement of HOUSEHOLD_READ_COLUMNS, so the row becomes the model (and its answer)
 * without knex building, compiling and mapping a query each time.
 */
const HOUSEHOLD_READ = {
  name: 'households_read',
  text: `select ${HOUSEHOLD_READ_COLUMNS} from households h where h.id = $1`,
};

const { raw } = objection;

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

export type { MemberRow };

/**
 * What the households service needs from storage. Time comes in as `at`; the store holds no
 * clock. A method that can join a transaction takes it as its last, optional argument.
 */
export interface HouseholdStore {
  /** Runs `work` in one transaction: everything it writes is kept, or nothing. */
  transaction<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T>;
  /** The caller's role; NotFoundError for an unknown household or a non-member. */
  roleOf(userId: string, householdId: string, trx?: Knex.Transaction): Promise<HouseholdRole>;
  /** The household and the caller's role in one look-up; NotFoundError as roleOf. */
  getForMember(userId: string, householdId: string): Promise<{ household: HouseholdResponse; role: HouseholdRole }>;
  /**
   * The household as it is now (no access check); NotFoundError when there is none. `loaded`: the
   * row of `householdRead` as the read kernel loaded it, made into the answer by the model.
   */
  get(householdId: string, trx?: Knex.Transaction, loaded?: unknown): Promise<HouseholdResponse>;
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
  /**
   * `update` by the household's Owner, in ONE statement (inside `trx` when given): the Owner check
   * and the change. A change of the name records `userId` as `renamed_by`, and the statement itself
   * enqueues the rename's news when the name really changed (this package's `jobSources`).
   * Undefined when `userId` is not the Owner of an existing household (the caller asks roleOf why).
   * `changes` must not be empty.
   */
  updateAsOwner(userId: string, householdId: string, changes: HouseholdChanges, at: Date, trx?: Knex.Transaction): Promise<HouseholdResponse | undefined>;
  /** The members: the Owner first, then in the order they joined. */
  members(householdId: string, trx?: Knex.Transaction): Promise<MemberRow[]>;
  /** The household's member ids, their rows locked FOR KEY SHARE until `trx` ends (a removal waits for it). */
  lockMemberIds(householdId: string, trx: Knex.Transaction): Promise<string[]>;
  createInvitation(input: {
    householdId: string;
    role: 'Adult' | 'Junior';
    createdBy: string;
    code: string;
    /** The code sealed for listing (null: not kept). */
    sealedCode: Buffer | null;
    at: Date;
    expiresAt: Date;
  }): Promise<InvitationResponse>;
  /**
   * Spends the code under a row lock: 404 `invitation_not_found` (unknown, used, expired, or minted
   * at or before the caller's removal from the household), 409 `already_member`. An account that
   * left the household (or was demoted, then left) after the code was minted gets at most the role
   * it left with.
   */
  acceptInvitation(input: {
    userId: string;
    code: string;
    at: Date;
    joined?: (membership: Membership, trx: Knex.Transaction) => Promise<void>;
  }): Promise<Membership>;
  /** The household's unused, unexpired invitations at `at`, newest first. */
  outstandingInvitations(householdId: string, at: Date): Promise<StoredInvitation[]>;
  /**
   * Revokes (deletes) the household's invitation with this code if it is still unused and
   * unexpired at `at`: one conditional statement, so racing an acceptance exactly one of the two
   * wins. False when there was no such invitation.
   */
  revokeInvitation(householdId: string, code: string, at: Date): Promise<boolean>;
  /** Revokes every unused invitation `userId` minted (in `householdId`, or everywhere when null). */
  revokeInvitationsBy(householdId: string | null, userId: string, trx?: Knex.Transaction): Promise<void>;
  /** Records that an account left or was removed (refuses or caps older codes; found again by an account deletion). */
  recordDeparture(departure: Departure, trx?: Knex.Transaction): Promise<void>;
  /** The member ids `userId` held in households it left or was removed from. */
  formerMemberships(userId: string, trx?: Knex.Transaction): Promise<{ householdId: string; memberId: string }[]>;
  /** Deletes the departures of `userId` (the account is being deleted). */
  deleteDepartures(userId: string, trx?: Knex.Transaction): Promise<void>;
  /** The onboarding recaps of these households, for `rewrite` to change (a changed text is written back). */
  rewriteRecaps(householdIds: string[], rewrite: (text: string) => string, trx?: Knex.Transaction): Promise<void>;
  conversation(householdId: string, conversationId: string): Promise<ConversationResponse>;
  /**
   * Completes onboarding under a row lock on the household: the first call stamps it, applies the
   * dinner time and writes `recap(household)` into the day's thread; later calls write nothing.
   * 409 `onboarding_in_progress` when the lock is not had within the lock timeout.
   */
  completeOnboarding(input: {
    householdId: string;
    at: Date;
    defaultDinnerTime: string | null;
    skippedSteps: OnboardingStep[];
    recap: (household: HouseholdResponse) => string;
  }): Promise<CompleteOnboardingResponse>;
  /**
   * Locks the household's row (FOR NO KEY UPDATE) until `trx` ends. Every change of a household's
   * members (role, removal, leaving, hand-over, account deletion) takes it first, so they run one
   * at a time and each reads the members as the previous one left them. Answers the household's
   * name, or undefined when there is no such household.
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
  lockMembershipsOf(userId: string, trx: Knex.Transaction): Promise<{ householdId: string; memberId: string; role: HouseholdRole; otherMembers: number }[]>;
  /** Removes every membership of `userId`. */
  removeMemberships(userId: string, trx?: Knex.Transaction): Promise<void>;
  /** Stores an operator's invite code (already normalised and checked). */
  createInviteCode(values: { code: string; maxUses: number; note: string | null; expiresAt: Date | null }, at: Date): Promise<IntakeInviteCode>;
  /** The operator's codes, oldest first. */
  listInviteCodes(): Promise<IntakeInviteCode[]>;
  /** Refuses the code from now on; false when there is no such code in force. */
  revokeInviteCode(code: string, at: Date): Promise<boolean>;
}

/** Lock waits longer than this on one household's onboarding answer 409 instead of piling up. */
export const ONBOARDING_LOCK_TIMEOUT_MS = 5000;

const householdNotFound = () => new NotFoundError('not_found', 'No such household');
const invitationNotFound = () => new NotFoundError('invitation_not_found', 'No such invitation, or it was used or has expired');

/** HouseholdStore on Objection: the package's models bound to the knex the host hands in. */
export class ObjectionHouseholdStore implements HouseholdStore {
  private readonly knex: Knex;
  private readonly lockTimeoutMs: number;
  private readonly Household: typeof HouseholdModel;
  private readonly Member: typeof HouseholdMemberModel;
  private readonly Invitation: typeof HouseholdInvitationModel;
  private readonly Departure: typeof HouseholdDepartureModel;
  private readonly Conversation: typeof HouseholdConversationModel;
  private readonly Message: typeof HouseholdMessageModel;
  private readonly InviteCode: typeof IntakeInviteCodeModel;
  private readonly Redemption: typeof IntakeCodeRedemptionModel;

  constructor(knex: Knex, options: { onboardingLockTimeoutMs?: number } = {}) {
    this.knex = knex;
    this.lockTimeoutMs = Math.max(1, Math.floor(options.onboardingLockTimeoutMs ?? ONBOARDING_LOCK_TIMEOUT_MS));
    this.Household = HouseholdModel.bindKnex(knex);
    this.Member = HouseholdMemberModel.bindKnex(knex);
    this.Invitation = HouseholdInvitationModel.bindKnex(knex);
    this.Departure = HouseholdDepartureModel.bindKnex(knex);
    this.Conversation = HouseholdConversationModel.bindKnex(knex);
    this.Message = HouseholdMessageModel.bindKnex(knex);
    this.InviteCode = IntakeInviteCodeModel.bindKnex(knex);
    this.Redemption = IntakeCodeRedemptionModel.bindKnex(knex);
  }

  /**
   * Runs `work` in one transaction, again (up to 5 times) when PostgreSQL chose it as a deadlock's
   * victim: a member or settings change locks the household's row, and every write of the household
   * also takes its changes-feed counter (@svc/changes' trigger), while parallel event writes hold
   * key-share locks on the same row through their foreign keys; PostgreSQL's tuple-lock queue can
   * close a cycle among three such writers. The work is all in the transaction, so a rerun is safe.
   */
  async transaction<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.knex.transaction(work);
      } catch (err) {
        if (!isPgError(err, PG.deadlockDetected) || attempt >= 5) throw err;
      }
    }
  }

  async roleOf(userId: string, householdId: string, trx?: Knex.Transaction): Promise<HouseholdRole> {
    if (!isUuid(householdId) || !isUuid(userId)) throw householdNotFound();
    const member = await this.Member.query(trx).select('role').where({ householdId, userId }).first();
    if (!member) throw householdNotFound();
    return member.role;
  }

  /** The household joined with the caller's member row: one statement for the read path. */
  private forMember(userId: string, householdId: string) {
    return this.Household.query().joinRelated('members', { alias: 'm' }).where({ 'households.id': householdId, 'm.userId': userId }).first();
  }

  async getForMember(userId: string, householdId: string): Promise<{ household: HouseholdResponse; role: HouseholdRole }> {
    if (!isUuid(householdId) || !isUuid(userId)) throw householdNotFound();
    const row = (await this.forMember(userId, householdId).select('households.*', 'm.role')) as (HouseholdModel & { role: HouseholdRole }) | undefined;
    if (!row) throw householdNotFound();
    return { household: row.toApi(), role: row.role };
  }

  async get(householdId: string, trx?: Knex.Transaction, loaded?: unknown): Promise<HouseholdResponse> {
    if (loaded) return this.Household.fromDatabaseJson(loaded as objection.Pojo).toApi();
    if (!isUuid(householdId)) throw householdNotFound();
    if (!trx) return this.readHousehold(householdId);
    const row = await this.Household.query(trx).select(HOUSEHOLD_API_COLUMNS).findById(householdId);
    if (!row) throw householdNotFound();
    return row.toApi();
  }

  /** The household by its prepared statement (nothing lent). */
  private async readHousehold(householdId: string): Promise<HouseholdResponse> {
    const found = (await preparedQuery<objection.Pojo>(this.knex, { ...HOUSEHOLD_READ, values: [householdId] }))[0];
    if (!found) throw householdNotFound();
    return this.Household.fromDatabaseJson(found).toApi();
  }

  async onboardingState(userId: string, householdId: string): Promise<{ role: HouseholdRole; completedAt: string | null; conversationId: string | null }> {
    if (!isUuid(householdId) || !isUuid(userId)) throw householdNotFound();
    const row = (await this.forMember(userId, householdId).select('m.role', 'households.onboardingCompletedAt', 'households.onboardingConversationId')) as
      | (HouseholdModel & { role: HouseholdRole })
      | undefined;
    if (!row) throw householdNotFound();
    return { role: row.role, completedAt: row.onboardingCompletedAt ?? null, conversationId: row.onboardingConversationId ?? null };
  }

  async memberships(userId: string): Promise<Membership[]> {
    if (!isUuid(userId)) return [];
    const rows = (await this.Member.query()
      .joinRelated('household', { alias: 'h' })
      .select('h.id as householdId', 'h.name as householdName', 'household_members.role', 'household_members.id')
      .where('household_members.userId', userId)
      .orderBy([{ column: 'household_members.createdAt' }, { column: 'h.id' }])) as (HouseholdMemberModel & { householdName: string })[];
    return rows.map((r) => ({ householdId: r.householdId, householdName: r.householdName, role: r.role, memberId: r.id }));
  }

  async profile(householdId: string): Promise<HouseholdProfile> {
    if (!isUuid(householdId)) throw householdNotFound();
    const row = await this.Household.query().select('id', 'country', 'timeZoneId', 'preferredLanguage').findById(householdId);
    if (!row) throw householdNotFound();
    return { id: row.id, country: row.country, timeZoneId: row.timeZoneId, preferredLanguage: row.preferredLanguage };
  }

  async create(input: { userId: string; household: NewHousehold; intake: IntakeTicket | null; welcomeCredits: number; at: Date }): Promise<HouseholdResponse> {
    const { userId, household, intake, welcomeCredits } = input;
    const at = input.at.toISOString();
    return this.knex.transaction(async (trx) => {
      if (intake?.source === 'database') {
        // One conditional update both checks and spends the code, so two creators cannot share a single use.
        const spent = await this.InviteCode.query(trx)
          .patch({ uses: raw('?? + 1', ['uses']) as unknown as number })
          .where({ code: intake.code })
          .whereNull('revokedAt')
          .whereRaw('?? < ??', ['uses', 'maxUses'])
          .where((q) => q.whereNull('expiresAt').orWhere('expiresAt', '>', at));
        if (spent === 0) throw new NotAllowedError('invite_code_invalid', 'The invite code is not valid');
      }
      const row = await this.Household.query(trx)
        .insert({ ...household, createdBy: userId, createdAt: at, updatedAt: at })
        .returning('*');
      await this.Member.query(trx).insert({ householdId: row.id, userId, role: 'Owner', createdAt: at });
      await openPlan(trx, { householdId: row.id, userId, welcomeCredits, at: input.at });
      if (intake) await this.Redemption.query(trx).insert({ code: intake.code, userId, householdId: row.id, redeemedAt: at });
      return row.toApi();
    });
  }

  async update(householdId: string, changes: HouseholdChanges, at: Date): Promise<HouseholdResponse> {
    const [row] =
      Object.keys(changes).length === 0
        ? await this.Household.query().where({ id: householdId })
        : await this.Household.query()
            .patch({ ...changes, updatedAt: at.toISOString() })
            .where({ id: householdId })
            .returning('*');
    if (!row) throw householdNotFound();
    return row.toApi();
  }

  async updateAsOwner(
    userId: string,
    householdId: string,
    changes: HouseholdChanges,
    at: Date,
    trx?: Knex.Transaction,
  ): Promise<HouseholdResponse | undefined> {
    if (!isUuid(householdId) || !isUuid(userId)) return undefined;
    const patch = changes.name === undefined ? changes : { ...changes, renamedBy: userId };
    const [row] = await this.Household.query(trx)
      .patch({ ...patch, updatedAt: at.toISOString() })
      .where('households.id', householdId)
      .whereExists(this.Member.query(trx).select(raw('1')).whereColumn('household_members.householdId', 'households.id').where({ userId, role: 'Owner' }))
      .returning('*');
    return row?.toApi();
  }

  async members(householdId: string, trx?: Knex.Transaction): Promise<MemberRow[]> {
    const rows = await this.Member.query(trx)
      .select('id', 'userId', 'role', 'displayName')
      .where({ householdId })
      .orderByRaw("(role = 'Owner') desc, created_at, id");
    return rows.map((r) => r.toRow());
  }

  async lockMemberIds(householdId: string, trx: Knex.Transaction): Promise<string[]> {
    if (!isUuid(householdId)) return [];
    const rows = await this.Member.query(trx).select('id').where({ householdId }).forKeyShare();
    return rows.map((r) => r.id);
  }

  async createInvitation(input: {
    householdId: string;
    role: 'Adult' | 'Junior';
    createdBy: string;
    code: string;
    sealedCode: Buffer | null;
    at: Date;
    expiresAt: Date;
  }): Promise<InvitationResponse> {
    const expiresAt = input.expiresAt.toISOString();
    await this.Invitation.query().insert({
      householdId: input.householdId,
      codeHash: invitationCodeHash(input.code),
      sealedCode: input.sealedCode,
      role: input.role,
      createdBy: input.createdBy,
      createdAt: input.at.toISOString(),
      expiresAt,
    });
    return { code: input.code, role: input.role, householdId: input.householdId, expiresAt };
  }

  async acceptInvitation(input: {
    userId: string;
    code: string;
    at: Date;
    joined?: (membership: Membership, trx: Knex.Transaction) => Promise<void>;
  }): Promise<Membership> {
    const { userId } = input;
    const at = input.at.toISOString();
    try {
      return await this.knex.transaction(async (trx) => {
        // The row lock makes the code single use when two people race with it.
        const invitation = await this.Invitation.query(trx)
          .where({ codeHash: invitationCodeHash(input.code) })
          .forUpdate()
          .first();
        if (!invitation || invitation.acceptedAt || Date.parse(invitation.expiresAt) <= input.at.getTime()) throw invitationNotFound();
        const household = await this.Household.query(trx).select('id', 'name').findById(invitation.householdId);
        if (!household) throw invitationNotFound();
        const existing = await this.Member.query(trx).select('id').where({ householdId: household.id, userId }).first();
        if (existing) throw new ConflictError('already_member', 'You are already a member of this household');
        // What the Owner took away after this code was minted, no older code gives back: removed
        // since → the code is not valid for this account (it stays valid for anyone else); left
        // since as a Junior (demoted, then left) → a Junior again at most.
        const since = await this.Departure.query(trx)
          .select('role', 'reason')
          .where({ householdId: household.id, userId })
          .where('departedAt', '>=', invitation.createdAt);
        if (since.some((d) => d.reason === 'removed')) throw invitationNotFound();
        const role = since.some((d) => d.role === 'Junior') ? 'Junior' : invitation.role;
        const member = await this.Member.query(trx).insert({ householdId: household.id, userId, role, createdAt: at });
        await this.Invitation.query(trx).findById(invitation.id).patch({ acceptedAt: at, acceptedBy: userId, memberId: member.id });
        const membership: Membership = { householdId: household.id, householdName: household.name, role, memberId: member.id };
        await input.joined?.(membership, trx);
        return membership;
      });
    } catch (err) {
      // Two invitations of one household accepted at once by the same account.
      if (isPgError(err, PG.uniqueViolation)) throw new ConflictError('already_member', 'You are already a member of this household');
      throw err;
    }
  }

  async outstandingInvitations(householdId: string, at: Date): Promise<StoredInvitation[]> {
    if (!isUuid(householdId)) return [];
    const rows = (await this.Invitation.query()
      .select(
        'household_invitations.householdId',
        'household_invitations.role',
        'household_invitations.sealedCode',
        'household_invitations.createdAt',
        'household_invitations.expiresAt',
        'm.id as createdByMemberId',
      )
      .leftJoinRelated('creator', { alias: 'm' })
      .where('household_invitations.householdId', householdId)
      .whereNull('household_invitations.acceptedAt')
      .where('household_invitations.expiresAt', '>', at.toISOString())
      .orderBy([
        { column: 'household_invitations.createdAt', order: 'desc' },
        { column: 'household_invitations.id', order: 'desc' },
      ])) as (HouseholdInvitationModel & { createdByMemberId: string | null })[];
    return rows.map((r) => ({
      householdId: r.householdId,
      role: r.role,
      sealedCode: r.sealedCode ?? null,
      createdAt: r.createdAt,
      expiresAt: r.expiresAt,
      createdByMemberId: r.createdByMemberId ?? null,
    }));
  }

  async revokeInvitation(householdId: string, code: string, at: Date): Promise<boolean> {
    if (!isUuid(householdId)) return false;
    // One conditional statement: an acceptance holding the row's lock makes this wait and then
    // find the code used (0 rows); one that comes after finds no row. Exactly one of them wins.
    const deleted = await this.Invitation.query()
      .delete()
      .where({ householdId, codeHash: invitationCodeHash(code) })
      .whereNull('acceptedAt')
      .where('expiresAt', '>', at.toISOString());
    return deleted > 0;
  }

  async revokeInvitationsBy(householdId: string | null, userId: string, trx?: Knex.Transaction): Promise<void> {
    const q = this.Invitation.query(trx).delete().where({ createdBy: userId }).whereNull('acceptedAt');
    if (householdId !== null) q.where({ householdId });
    await q;
  }

  async recordDeparture(d: Departure, trx?: Knex.Transaction): Promise<void> {
    await this.Departure.query(trx).insert({
      householdId: d.householdId,
      userId: d.userId,
      memberId: d.memberId,
      role: d.role,
      reason: d.reason,
      departedAt: d.at.toISOString(),
    });
  }

  async formerMemberships(userId: string, trx?: Knex.Transaction): Promise<{ householdId: string; memberId: string }[]> {
    if (!isUuid(userId)) return [];
    const rows = await this.Departure.query(trx).distinct('householdId', 'memberId').where({ userId });
    return rows.map((r) => ({ householdId: r.householdId, memberId: r.memberId }));
  }

  async deleteDepartures(userId: string, trx?: Knex.Transaction): Promise<void> {
    if (isUuid(userId)) await this.Departure.query(trx).delete().where({ userId });
  }

  async rewriteRecaps(householdIds: string[], rewrite: (text: string) => string, trx?: Knex.Transaction): Promise<void> {
    if (!householdIds.length) return;
    const rows = await this.Message.query(trx)
      .select('household_messages.id', 'household_messages.text')
      .joinRelated('conversation', { alias: 'c' })
      .whereIn('c.householdId', householdIds)
      .where('household_messages.kind', 'onboarding_recap');
    for (const row of rows) {
      const text = rewrite(row.text);
      if (text !== row.text) await this.Message.query(trx).findById(row.id).patch({ text });
    }
  }

  async conversation(householdId: string, conversationId: string): Promise<ConversationResponse> {
    const conv = await this.Conversation.query().modify('apiColumns').where({ id: conversationId, householdId }).first();
    if (!conv) throw new NotFoundError('not_found', 'No such conversation in this household');
    const messages = await this.Message.query()
      .select('id', 'kind', 'text', 'createdAt')
      .where({ conversationId })
      .orderBy([{ column: 'createdAt' }, { column: 'id' }]);
    return { id: conv.id, householdId: conv.householdId, date: conv.date, messages: messages.map((m) => m.toApi()) };
  }

  async completeOnboarding(input: {
    householdId: string;
    at: Date;
    defaultDinnerTime: string | null;
    skippedSteps: OnboardingStep[];
    recap: (household: HouseholdResponse) => string;
  }): Promise<CompleteOnboardingResponse> {
    const { householdId } = input;
    const at = input.at.toISOString();
    try {
      return await this.knex.transaction(async (trx) => {
        await trx.raw(`set local lock_timeout = ${this.lockTimeoutMs}`);
        // Every completion of this household queues here; the first one in writes, the rest see its stamp.
        const row = await this.Household.query(trx).findById(householdId).forNoKeyUpdate();
        if (!row) throw householdNotFound();
        if (row.onboardingCompletedAt) {
          return { onboardingCompletedAt: row.onboardingCompletedAt, alreadyCompleted: true, conversationId: row.onboardingConversationId };
        }
        const changes = {
          onboardingCompletedAt: at,
          onboardingSkippedSteps: input.skippedSteps,
          updatedAt: at,
          ...(input.defaultDinnerTime ? { defaultDinnerTime: input.defaultDinnerTime } : {}),
        };
        const household = { ...row.toApi(), ...changes };
        const conversationId = await this.dayThread(trx, householdId, calendarDateIn(row.timeZoneId, input.at), at);
        await this.Message.query(trx).insert({ conversationId, kind: 'onboarding_recap', text: input.recap(household), createdAt: at });
        await this.Household.query(trx)
          .patch({ ...changes, onboardingConversationId: conversationId })
          .where({ id: householdId });
        return { onboardingCompletedAt: at, alreadyCompleted: false, conversationId };
      });
    } catch (err) {
      if (isPgError(err, PG.lockNotAvailable)) {
        throw new ConflictError('onboarding_in_progress', 'Another completion of this household is still being written; try again');
      }
      throw err;
    }
  }

  /**
   * The id of the household's thread for `date`, opening it when it is not there yet; the unique
   * key settles races. An insert that may do nothing (ON CONFLICT DO NOTHING … RETURNING) is not
   * an Objection insert (it would make a model of no row), so the model's knex writes it.
   */
  private async dayThread(trx: Knex.Transaction, householdId: string, date: string, at: string): Promise<string> {
    const [made] = await trx('householdConversations')
      .insert({ householdId, date, createdAt: at })
      .onConflict(['householdId', 'date'])
      .ignore()
      .returning('id');
    if (made) return made.id as string;
    const existing = await this.Conversation.query(trx).select('id').where({ householdId, date }).first();
    return existing!.id;
  }

  async lockHousehold(householdId: string, trx: Knex.Transaction): Promise<{ name: string } | undefined> {
    if (!isUuid(householdId)) return undefined;
    const row = await this.Household.query(trx).select('name').findById(householdId).forNoKeyUpdate();
    return row ? { name: row.name } : undefined;
  }

  async memberRows(householdId: string, who: { userId: string; memberId?: string }, trx?: Knex.Transaction): Promise<MemberRow[]> {
    const rows = await this.Member.query(trx)
      .select('id', 'userId', 'role', 'displayName')
      .where({ householdId })
      .where((q) => {
        q.where({ userId: who.userId });
        if (who.memberId) q.orWhere({ id: who.memberId });
      });
    return rows.map((r) => r.toRow());
  }

  async setRole(householdId: string, memberId: string, role: HouseholdRole, trx?: Knex.Transaction): Promise<boolean> {
    return (await this.Member.query(trx).patch({ role }).where({ householdId, id: memberId })) > 0;
  }

  async removeMember(householdId: string, memberId: string, trx?: Knex.Transaction): Promise<boolean> {
    return (await this.Member.query(trx).delete().where({ householdId, id: memberId })) > 0;
  }

  async deleteHouseholds(householdIds: string[], trx?: Knex.Transaction): Promise<void> {
    if (householdIds.length) await this.Household.query(trx).delete().whereIn('id', householdIds);
  }

  async lockMembershipsOf(
    userId: string,
    trx: Knex.Transaction,
  ): Promise<{ householdId: string; memberId: string; role: HouseholdRole; otherMembers: number }[]> {
    if (!isUuid(userId)) return [];
    await this.Household.query(trx).select('id').whereIn('id', this.Member.query(trx).select('householdId').where({ userId })).orderBy('id').forNoKeyUpdate();
    // Read after the locks are held, so a hand-over that committed meanwhile is seen.
    const rows = (await this.Member.query(trx)
      .select(
        'id',
        'householdId',
        'role',
        raw('(select count(*)::int from household_members o where o.household_id = household_members.household_id and o.id <> household_members.id) as ??', [
          'otherMembers',
        ]),
      )
      .where({ userId })) as (HouseholdMemberModel & { otherMembers: number })[];
    return rows.map((r) => ({ householdId: r.householdId, memberId: r.id, role: r.role, otherMembers: r.otherMembers }));
  }

  async removeMemberships(userId: string, trx?: Knex.Transaction): Promise<void> {
    if (isUuid(userId)) await this.Member.query(trx).delete().where({ userId });
  }

  async createInviteCode(values: { code: string; maxUses: number; note: string | null; expiresAt: Date | null }, at: Date): Promise<IntakeInviteCode> {
    const row = await this.InviteCode.query()
      .insert({ ...values, expiresAt: values.expiresAt?.toISOString() ?? null, createdAt: at.toISOString() })
      .returning('*');
    return row.toApi();
  }

  async listInviteCodes(): Promise<IntakeInviteCode[]> {
    const rows = await this.InviteCode.query().orderBy([{ column: 'createdAt' }, { column: 'code' }]);
    return rows.map((r) => r.toApi());
  }

  async revokeInviteCode(code: string, at: Date): Promise<boolean> {
    return (await this.InviteCode.query().patch({ revokedAt: at.toISOString() }).where({ code }).whereNull('revokedAt')) > 0;
  }
}
