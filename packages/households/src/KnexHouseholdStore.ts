import { createHash, randomUUID } from 'node:crypto';
import type { HouseholdProfile, HouseholdRole, Membership } from '@svc/contracts';
import { isPgError, PG } from '@svc/db';
import { ConflictError, NotAllowedError, NotFoundError } from '@svc/http-kit';
import type { Knex } from 'knex';
import { openPlan } from './CreditLedger.js';
import { calendarDateIn, toHourMinute } from './formats.js';
import type {
  CompleteOnboardingResponse,
  ConversationResponse,
  HouseholdChanges,
  HouseholdResponse,
  HouseholdStore,
  IntakeTicket,
  InvitationResponse,
  MemberRow,
  NewHousehold,
  OnboardingStep,
} from './HouseholdStore.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Lock waits longer than this on one household's onboarding answer 409 instead of piling up. */
export const ONBOARDING_LOCK_TIMEOUT_MS = 5000;
const LOCK_NOT_AVAILABLE = '55P03';

/** A households row as knex returns it (snake_case columns mapped to camelCase). */
interface HouseholdRow {
  id: string;
  name: string;
  timeZoneId: string;
  defaultDinnerTime: string;
  preferredLanguage: string;
  country: string;
  measurementSystem: HouseholdResponse['measurementSystem'];
  dryGoodsMeasure: HouseholdResponse['dryGoodsMeasure'];
  pantryWeight: HouseholdResponse['pantryWeight'];
  preferOwnRecipes: boolean;
  prefersLeftoverDinners: boolean;
  shareReceiptPrices: boolean;
  shareUnitWeights: boolean;
  tailorServingToTastes: boolean;
  showSoftServingAdvice: boolean;
  babyEatsSeparatelyWhenNeeded: boolean;
  maxNewDishesPerWeek: number;
  alwaysNewDishes: boolean;
  useStarterLibrary: boolean;
  showChildTasks: boolean;
  madeAgainLift: boolean;
  address: string | null;
  loyaltyPrograms: string[];
  onboardingCompletedAt: Date | null;
  onboardingConversationId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

function toResponse(row: HouseholdRow): HouseholdResponse {
  return {
    id: row.id,
    name: row.name,
    timeZoneId: row.timeZoneId,
    defaultDinnerTime: toHourMinute(row.defaultDinnerTime),
    preferredLanguage: row.preferredLanguage,
    country: row.country,
    preferOwnRecipes: row.preferOwnRecipes,
    prefersLeftoverDinners: row.prefersLeftoverDinners,
    measurementSystem: row.measurementSystem,
    dryGoodsMeasure: row.dryGoodsMeasure,
    address: row.address,
    loyaltyPrograms: row.loyaltyPrograms ?? [],
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    shareReceiptPrices: row.shareReceiptPrices,
    onboardingCompletedAt: row.onboardingCompletedAt ? row.onboardingCompletedAt.toISOString() : null,
    shareUnitWeights: row.shareUnitWeights,
    tailorServingToTastes: row.tailorServingToTastes,
    showSoftServingAdvice: row.showSoftServingAdvice,
    babyEatsSeparatelyWhenNeeded: row.babyEatsSeparatelyWhenNeeded,
    maxNewDishesPerWeek: row.maxNewDishesPerWeek,
    alwaysNewDishes: row.alwaysNewDishes,
    pantryWeight: row.pantryWeight,
    useStarterLibrary: row.useStarterLibrary,
    showChildTasks: row.showChildTasks,
    madeAgainLift: row.madeAgainLift,
  };
}

/** Invitation codes are bearer secrets: only their hash is stored. */
export function invitationCodeHash(code: string): string {
  return createHash('sha256').update(code.trim(), 'utf8').digest('hex');
}

function householdNotFound(): NotFoundError {
  return new NotFoundError('not_found', 'No such household');
}

/** HouseholdStore on knex (PostgreSQL). */
export class KnexHouseholdStore implements HouseholdStore {
  private readonly lockTimeoutMs: number;

  constructor(
    private readonly knex: Knex,
    options: { onboardingLockTimeoutMs?: number } = {},
  ) {
    this.lockTimeoutMs = Math.max(1, Math.floor(options.onboardingLockTimeoutMs ?? ONBOARDING_LOCK_TIMEOUT_MS));
  }

  async roleOf(userId: string, householdId: string): Promise<HouseholdRole> {
    if (!UUID.test(householdId) || !UUID.test(userId)) throw householdNotFound();
    const row = await this.knex('householdMembers').select('role').where({ householdId, userId }).first();
    if (!row) throw householdNotFound();
    return row.role as HouseholdRole;
  }

  async get(householdId: string, trx?: Knex.Transaction): Promise<HouseholdResponse> {
    if (!UUID.test(householdId)) throw householdNotFound();
    const row = await (trx ?? this.knex)('households').where({ id: householdId }).first();
    if (!row) throw householdNotFound();
    return toResponse(row as HouseholdRow);
  }

  transaction<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return this.knex.transaction(work);
  }

  async lockHousehold(householdId: string, trx: Knex.Transaction): Promise<{ name: string } | undefined> {
    if (!UUID.test(householdId)) return undefined;
    return trx('households').select('name').where({ id: householdId }).forNoKeyUpdate().first();
  }

  async memberRows(householdId: string, who: { userId: string; memberId?: string }, trx?: Knex.Transaction): Promise<MemberRow[]> {
    const rows = await (trx ?? this.knex)('householdMembers')
      .select({ memberId: 'id', userId: 'userId', role: 'role', displayName: 'displayName' })
      .where({ householdId })
      .andWhere((q) => {
        q.where({ userId: who.userId });
        if (who.memberId) q.orWhere({ id: who.memberId });
      });
    return rows.map((r) => ({ memberId: r.memberId, userId: r.userId, role: r.role as HouseholdRole, displayName: r.displayName }));
  }

  async setRole(householdId: string, memberId: string, role: HouseholdRole, trx?: Knex.Transaction): Promise<boolean> {
    return (await (trx ?? this.knex)('householdMembers').where({ householdId, id: memberId }).update({ role })) > 0;
  }

  async removeMember(householdId: string, memberId: string, trx?: Knex.Transaction): Promise<boolean> {
    return (await (trx ?? this.knex)('householdMembers').where({ householdId, id: memberId }).delete()) > 0;
  }

  async deleteHouseholds(householdIds: string[], trx?: Knex.Transaction): Promise<void> {
    if (householdIds.length) await (trx ?? this.knex)('households').whereIn('id', householdIds).delete();
  }

  async lockMembershipsOf(userId: string, trx: Knex.Transaction): Promise<{ householdId: string; role: HouseholdRole; otherMembers: number }[]> {
    if (!UUID.test(userId)) return [];
    await trx('households').select('id').whereIn('id', trx('householdMembers').select('householdId').where({ userId })).orderBy('id').forNoKeyUpdate();
    // Read after the locks are held, so a hand-over that committed meanwhile is seen.
    const rows = await trx('householdMembers as m')
      .select({ householdId: 'm.householdId', role: 'm.role' })
      .select(trx.raw('(select count(*)::int from household_members o where o.household_id = m.household_id and o.id <> m.id) as other_members'))
      .where('m.userId', userId);
    return rows.map((r) => ({ householdId: r.householdId, role: r.role as HouseholdRole, otherMembers: r.otherMembers as number }));
  }

  async removeMemberships(userId: string, trx?: Knex.Transaction): Promise<void> {
    if (UUID.test(userId)) await (trx ?? this.knex)('householdMembers').where({ userId }).delete();
  }

  async getForMember(userId: string, householdId: string): Promise<{ household: HouseholdResponse; role: HouseholdRole }> {
    if (!UUID.test(householdId) || !UUID.test(userId)) throw householdNotFound();
    const row = await this.knex('households as h')
      .join('householdMembers as m', 'm.householdId', 'h.id')
      .select('h.*', 'm.role')
      .where({ 'h.id': householdId, 'm.userId': userId })
      .first();
    if (!row) throw householdNotFound();
    return { household: toResponse(row as HouseholdRow), role: row.role as HouseholdRole };
  }

  async onboardingState(userId: string, householdId: string): Promise<{ role: HouseholdRole; completedAt: string | null; conversationId: string | null }> {
    if (!UUID.test(householdId) || !UUID.test(userId)) throw householdNotFound();
    const row = await this.knex('households as h')
      .join('householdMembers as m', 'm.householdId', 'h.id')
      .select('m.role', 'h.onboardingCompletedAt', 'h.onboardingConversationId')
      .where({ 'h.id': householdId, 'm.userId': userId })
      .first();
    if (!row) throw householdNotFound();
    return {
      role: row.role as HouseholdRole,
      completedAt: row.onboardingCompletedAt ? (row.onboardingCompletedAt as Date).toISOString() : null,
      conversationId: row.onboardingConversationId ?? null,
    };
  }

  async memberships(userId: string): Promise<Membership[]> {
    if (!UUID.test(userId)) return [];
    const rows = await this.knex('householdMembers as m')
      .join('households as h', 'h.id', 'm.householdId')
      .select({ householdId: 'h.id', householdName: 'h.name', role: 'm.role', memberId: 'm.id' })
      .where('m.userId', userId)
      .orderBy([{ column: 'm.createdAt' }, { column: 'h.id' }]);
    return rows.map((r) => ({ householdId: r.householdId, householdName: r.householdName, role: r.role as HouseholdRole, memberId: r.memberId }));
  }

  async profile(householdId: string): Promise<HouseholdProfile> {
    if (!UUID.test(householdId)) throw householdNotFound();
    const row = await this.knex('households').select('id', 'country', 'timeZoneId', 'preferredLanguage').where({ id: householdId }).first();
    if (!row) throw householdNotFound();
    return { id: row.id, country: row.country, timeZoneId: row.timeZoneId, preferredLanguage: row.preferredLanguage };
  }

  async create(input: { userId: string; household: NewHousehold; intake: IntakeTicket | null; welcomeCredits: number; at: Date }): Promise<HouseholdResponse> {
    const { userId, household, intake, welcomeCredits, at } = input;
    return this.knex.transaction(async (trx) => {
      if (intake?.source === 'database') {
        // One conditional update both checks and spends the code, so two creators cannot share a single use.
        const spent = await trx('intakeInviteCodes')
          .where({ code: intake.code })
          .whereNull('revokedAt')
          .whereRaw('?? < ??', ['uses', 'maxUses'])
          .where((q) => q.whereNull('expiresAt').orWhere('expiresAt', '>', at))
          .increment('uses', 1)
          .returning('code');
        if (spent.length === 0) throw new NotAllowedError('invite_code_invalid', 'The invite code is not valid');
      }
      const id = randomUUID();
      const [row] = await trx('households')
        .insert({
          id,
          name: household.name,
          timeZoneId: household.timeZoneId,
          defaultDinnerTime: household.defaultDinnerTime,
          preferredLanguage: household.preferredLanguage,
          country: household.country,
          measurementSystem: household.measurementSystem,
          dryGoodsMeasure: household.dryGoodsMeasure,
          createdBy: userId,
          createdAt: at,
          updatedAt: at,
        })
        .returning('*');
      await trx('householdMembers').insert({ householdId: id, userId, role: 'Owner', createdAt: at });
      await openPlan(trx, { householdId: id, userId, welcomeCredits, at });
      if (intake) await trx('intakeCodeRedemptions').insert({ code: intake.code, userId, householdId: id, redeemedAt: at });
      return toResponse(row as HouseholdRow);
    });
  }

  async update(householdId: string, changes: HouseholdChanges, at: Date): Promise<HouseholdResponse> {
    const values: Record<string, unknown> = { ...changes };
    const query =
      Object.keys(values).length === 0
        ? this.knex('households').where({ id: householdId }).select('*')
        : this.knex('households')
            .where({ id: householdId })
            .update({ ...values, updatedAt: at })
            .returning('*');
    const [row] = await query;
    if (!row) throw householdNotFound();
    return toResponse(row as HouseholdRow);
  }

  async members(householdId: string): Promise<MemberRow[]> {
    const rows = await this.knex('householdMembers')
      .select({ memberId: 'id', userId: 'userId', role: 'role', displayName: 'displayName' })
      .where({ householdId })
      .orderByRaw("(role = 'Owner') desc, created_at, id");
    return rows.map((r) => ({ memberId: r.memberId, userId: r.userId, role: r.role as HouseholdRole, displayName: r.displayName }));
  }

  async createInvitation(input: {
    householdId: string;
    role: 'Adult' | 'Junior';
    createdBy: string;
    code: string;
    at: Date;
    expiresAt: Date;
  }): Promise<InvitationResponse> {
    await this.knex('householdInvitations').insert({
      householdId: input.householdId,
      codeHash: invitationCodeHash(input.code),
      role: input.role,
      createdBy: input.createdBy,
      createdAt: input.at,
      expiresAt: input.expiresAt,
    });
    return { code: input.code, role: input.role, householdId: input.householdId, expiresAt: input.expiresAt.toISOString() };
  }

  async acceptInvitation(input: { userId: string; code: string; at: Date }): Promise<Membership> {
    const { userId, at } = input;
    try {
      return await this.knex.transaction(async (trx) => {
        // The row lock makes the code single use when two people race with it.
        const invitation = await trx('householdInvitations')
          .where({ codeHash: invitationCodeHash(input.code) })
          .forUpdate()
          .first();
        if (!invitation || invitation.acceptedAt || (invitation.expiresAt as Date).getTime() <= at.getTime()) {
          throw new NotFoundError('invitation_not_found', 'No such invitation, or it was used or has expired');
        }
        const household = await trx('households').select('id', 'name').where({ id: invitation.householdId }).first();
        if (!household) throw new NotFoundError('invitation_not_found', 'No such invitation, or it was used or has expired');
        const existing = await trx('householdMembers').select('id').where({ householdId: household.id, userId }).first();
        if (existing) throw new ConflictError('already_member', 'You are already a member of this household');
        const [member] = await trx('householdMembers').insert({ householdId: household.id, userId, role: invitation.role, createdAt: at }).returning(['id']);
        await trx('householdInvitations').where({ id: invitation.id }).update({ acceptedAt: at, acceptedBy: userId, memberId: member.id });
        return { householdId: household.id, householdName: household.name, role: invitation.role as HouseholdRole, memberId: member.id };
      });
    } catch (err) {
      // Two invitations of one household accepted at once by the same account.
      if (isPgError(err, PG.uniqueViolation)) throw new ConflictError('already_member', 'You are already a member of this household');
      throw err;
    }
  }

  async conversation(householdId: string, conversationId: string): Promise<ConversationResponse> {
    const conv = await this.knex('householdConversations')
      .select('id', 'householdId', this.knex.raw('to_char(??, ?) as ??', ['date', 'YYYY-MM-DD', 'date']))
      .where({ id: conversationId, householdId })
      .first();
    if (!conv) throw new NotFoundError('not_found', 'No such conversation in this household');
    const messages = await this.knex('householdMessages')
      .select('id', 'kind', 'text', 'createdAt')
      .where({ conversationId })
      .orderBy([{ column: 'createdAt' }, { column: 'id' }]);
    return {
      id: conv.id,
      householdId: conv.householdId,
      date: conv.date,
      messages: messages.map((m) => ({ id: m.id, kind: m.kind, text: m.text, createdAt: (m.createdAt as Date).toISOString() })),
    };
  }

  async completeOnboarding(input: {
    householdId: string;
    at: Date;
    defaultDinnerTime: string | null;
    skippedSteps: OnboardingStep[];
    recap: (household: HouseholdResponse) => string;
  }): Promise<CompleteOnboardingResponse> {
    const { householdId, at } = input;
    try {
      return await this.knex.transaction(async (trx) => {
        await trx.raw(`set local lock_timeout = ${this.lockTimeoutMs}`);
        // Every completion of this household queues here; the first one in writes, the rest see its stamp.
        const row = (await trx('households').where({ id: householdId }).forNoKeyUpdate().first()) as HouseholdRow | undefined;
        if (!row) throw householdNotFound();
        if (row.onboardingCompletedAt) {
          return { onboardingCompletedAt: row.onboardingCompletedAt.toISOString(), alreadyCompleted: true, conversationId: row.onboardingConversationId };
        }
        const changes = {
          onboardingCompletedAt: at,
          onboardingSkippedSteps: input.skippedSteps,
          updatedAt: at,
          ...(input.defaultDinnerTime ? { defaultDinnerTime: input.defaultDinnerTime } : {}),
        };
        const household = toResponse({ ...row, ...changes });
        const conversationId = await dayThread(trx, householdId, calendarDateIn(row.timeZoneId, at), at);
        await trx('householdMessages').insert({ conversationId, kind: 'onboarding_recap', text: input.recap(household), createdAt: at });
        await trx('households')
          .where({ id: householdId })
          .update({ ...changes, onboardingConversationId: conversationId });
        return { onboardingCompletedAt: at.toISOString(), alreadyCompleted: false, conversationId };
      });
    } catch (err) {
      if (isPgError(err, LOCK_NOT_AVAILABLE)) {
        throw new ConflictError('onboarding_in_progress', 'Another completion of this household is still being written; try again');
      }
      throw err;
    }
  }
}

/** The id of the household's thread for `date`, opening it when it is not there yet (the unique key settles races). */
export async function dayThread(trx: Knex.Transaction | Knex, householdId: string, date: string, at: Date): Promise<string> {
  const [made] = await trx('householdConversations').insert({ householdId, date, createdAt: at }).onConflict(['householdId', 'date']).ignore().returning('id');
  if (made) return made.id as string;
  const existing = await trx('householdConversations').select('id').where({ householdId, date }).first();
  return existing.id as string;
}
