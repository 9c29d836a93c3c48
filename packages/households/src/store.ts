import type { HouseholdProfile, HouseholdRole, Membership } from '@svc/contracts';
import { isPgError, objection, PG, type ReadDeclaration, standaloneRead } from '@svc/db';
import { isUuid, loadStandalone, NotAllowedError } from '@svc/http-kit';
import type { Knex } from 'knex';
import { openPlan } from './CreditLedger.js';
import type { DryGoodsMeasure, MeasurementSystem, PantryWeight } from './formats.js';
import { type InvitationStore, ObjectionInvitationStore } from './invitation-store.js';
import {
  HouseholdDepartureModel,
  HouseholdMemberModel,
  HouseholdModel,
  IntakeCodeRedemptionModel,
  type IntakeInviteCode,
  IntakeInviteCodeModel,
  type MemberRow,
} from './models/index.js';
import { ObjectionOnboardingStore, type OnboardingStore } from './onboarding-store.js';
import { householdRead, type ListedMember } from './reads.js';
import type { HouseholdResponse } from './schemas.js';
import { householdNotFound } from './store-errors.js';

export { type InvitationStore, ObjectionInvitationStore, type StoredInvitation } from './invitation-store.js';
export { ObjectionOnboardingStore, ONBOARDING_LOCK_TIMEOUT_MS, type OnboardingStore } from './onboarding-store.js';

/** A member who left or was removed, as recorded in `household_departures`. */
export interface Departure {
  householdId: string;
  userId: string;
  memberId: string;
  role: HouseholdRole;
  reason: 'left' | 'removed';
  at: Date;
}

/**
 * A household as its GET answers it, when the kernel did not lend it (inside a transaction, say):
 * the same declared read as a statement of its own, so the household has one SQL.
 */
const HOUSEHOLD = standaloneRead(householdRead);

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
  /** The invitations of the households (its own file: `invitation-store.ts`). */
  readonly invitations: InvitationStore;
  /** Onboarding and the day's thread (its own file: `onboarding-store.ts`). */
  readonly onboarding: OnboardingStore;
  /** Runs `work` in one transaction: everything it writes is kept, or nothing. */
  transaction<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T>;
  /** The caller's role; NotFoundError for an unknown household or a non-member. */
  roleOf(userId: string, householdId: string, trx?: Knex.Transaction): Promise<HouseholdRole>;
  /**
   * The household as it is now (no access check); NotFoundError when there is none. `loaded`: the
   * row of `householdRead` as the read kernel loaded it, made into the answer by the model.
   */
  get(householdId: string, trx?: Knex.Transaction, loaded?: objection.Pojo): Promise<HouseholdResponse>;
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
  /**
   * GET …/members' declared read (the service's `membersRead`) as a statement of its own, for a
   * request the kernel did not load it for: the members with their accounts' display names, one SQL
   * for the read however it is loaded.
   */
  listedMembers(householdId: string, read: ReadDeclaration<ListedMember[]>): Promise<ListedMember[]>;
  /** The household's member ids, their rows locked FOR KEY SHARE until `trx` ends (a removal waits for it). */
  lockMemberIds(householdId: string, trx: Knex.Transaction): Promise<string[]>;
  /** Records that an account left or was removed (refuses or caps older codes; found again by an account deletion). */
  recordDeparture(departure: Departure, trx?: Knex.Transaction): Promise<void>;
  /** The member ids `userId` held in households it left or was removed from. */
  formerMemberships(userId: string, trx?: Knex.Transaction): Promise<{ householdId: string; memberId: string }[]>;
  /** Deletes the departures of `userId` (the account is being deleted). */
  deleteDepartures(userId: string, trx?: Knex.Transaction): Promise<void>;
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

/** HouseholdStore on Objection: the package's models bound to the knex the host hands in. */
export class ObjectionHouseholdStore implements HouseholdStore {
  readonly invitations: InvitationStore;
  readonly onboarding: OnboardingStore;
  private readonly knex: Knex;
  private readonly Household: typeof HouseholdModel;
  private readonly Member: typeof HouseholdMemberModel;
  private readonly Departure: typeof HouseholdDepartureModel;
  private readonly InviteCode: typeof IntakeInviteCodeModel;
  private readonly Redemption: typeof IntakeCodeRedemptionModel;

  constructor(knex: Knex, options: { onboardingLockTimeoutMs?: number } = {}) {
    this.knex = knex;
    this.invitations = new ObjectionInvitationStore(knex);
    this.onboarding = new ObjectionOnboardingStore(knex, options);
    this.Household = HouseholdModel.bindKnex(knex);
    this.Member = HouseholdMemberModel.bindKnex(knex);
    this.Departure = HouseholdDepartureModel.bindKnex(knex);
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

  async get(householdId: string, trx?: Knex.Transaction, loaded?: objection.Pojo): Promise<HouseholdResponse> {
    let row: objection.Pojo | null | undefined = loaded;
    if (!row && isUuid(householdId)) row = await loadStandalone<objection.Pojo>(trx ?? this.knex, HOUSEHOLD, { household: householdId });
    if (!row) throw householdNotFound();
    return this.Household.fromDatabaseJson(row).toApi();
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

  async listedMembers(householdId: string, read: ReadDeclaration<ListedMember[]>): Promise<ListedMember[]> {
    return (await loadStandalone<ListedMember[]>(this.knex, standaloneRead(read), { household: householdId })) ?? [];
  }

  async lockMemberIds(householdId: string, trx: Knex.Transaction): Promise<string[]> {
    if (!isUuid(householdId)) return [];
    const rows = await this.Member.query(trx).select('id').where({ householdId }).forKeyShare();
    return rows.map((r) => r.id);
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
