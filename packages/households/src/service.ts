import type {
  AccountDeletionStep,
  AccountDirectory,
  Caller,
  Clock,
  HouseholdAccess,
  HouseholdMemberIds,
  HouseholdNews,
  HouseholdProfiles,
  HouseholdRole,
  HouseholdZoneWritten,
  MemberRoleChange,
  Membership,
  MembershipListener,
  MembershipsProvider,
  PersonalDataSources,
  RandomBytes,
  SpendTurn,
} from '@svc/contracts';
import type { Pojo, ReadDeclaration, ReadLink } from '@svc/db';
import { assertRole, ConflictError, InputError, type KernelChecked, type Logger, NotFoundError, systemRandom } from '@svc/http-kit';
import type { JobQueue } from '@svc/jobs';
import type { Knex } from 'knex';
import { type HouseholdAdmin, householdAdmin } from './admin.js';
import type { CreditLedger } from './CreditLedger.js';
import { InvitationCodeSealer } from './code-sealer.js';
import { toHourMinute } from './formats.js';
import { admit, type IntakeMode, normaliseInviteCode } from './intake.js';
import { RENAME_EXPIRE_SECONDS, RENAME_QUEUE } from './migrations.js';
import { HouseholdModel } from './models/index.js';
import { AT_THE_TABLE, recapText } from './onboarding.js';
import { householdRead, type ListedMember, memberRead, membersRead } from './reads.js';
import {
  type CompleteOnboardingRequest,
  type CompleteOnboardingResponse,
  type ConversationResponse,
  type CreateHouseholdRequest,
  type HouseholdResponse,
  type InvitationResponse,
  type MemberResponse,
  ONBOARDING_STEPS,
  type OutstandingInvitations,
  type UpdateHouseholdRequest,
} from './schemas.js';
import { householdChanges, newHousehold } from './settings.js';
import type { HouseholdStore, MemberRow } from './store.js';

/** Configuration of the households package (INTAKE_MODE, INVITE_CODES, WELCOME_CREDITS; AI_TURNS_PER_MONTH goes to the ledger). */
export interface HouseholdsConfig {
  intakeMode: IntakeMode;
  /** Codes valid while intake is invite-only; reusable, compared case-insensitively. */
  inviteCodes: string[];
  /** AI turns in the welcome bundle, once per user. */
  welcomeCredits: number;
}

export interface HouseholdsServiceOptions {
  store: HouseholdStore;
  /** The AI credits (allowance and welcome bundle); `new CreditLedger(knex, clock, AI_TURNS_PER_MONTH)`. */
  ledger: CreditLedger;
  clock: Clock;
  logger: Logger;
  config: HouseholdsConfig;
  /** Display names and the waitlist, from @svc/accounts. */
  accounts: AccountDirectory;
  /** The account's display name as a field declared reads may name (from @svc/accounts: `accountNameLink`); without it GET …/members reads itself. */
  accountName?: ReadLink;
  /** Randomness for invitation and invite codes; the system's unless given. */
  random?: RandomBytes;
  /**
   * Key material for sealing invitation codes, so GET …/invitations can list them; the host derives
   * it from SESSION_SECRET. Without it codes are not kept and are listed with `code: null`.
   */
  invitationSecret?: string;
  /**
   * Told of every departure (leaving, removal, account deletion) and role change inside the
   * transaction that makes it (from @svc/meal-events: participants, calendar feed).
   */
  membershipListeners?: readonly MembershipListener[];
  /** Tells the members about a change (householdNews, from @svc/push), inside the change's transaction; none: nobody is told. */
  news?: HouseholdNews;
  /** Told of a PATCH that writes the time zone, inside its transaction (from @svc/meal-events: pending reminders move). */
  zoneListeners?: readonly HouseholdZoneWritten[];
}

/** A rename's job (made by the renaming statement, this package's `jobSources`): the household and the account that renamed it. */
interface RenameJob {
  h: string;
  a: string | null;
}

/** An invitation code lives seven days. */
export const INVITATION_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000;
/** Who may invite: Owner and Adult; a Junior gets 403 `forbidden`. */
export const INVITING_ROLES: readonly HouseholdRole[] = ['Owner', 'Adult'];
/**
 * The recap's "At the table:" line (see onboarding.ts) with `name (Role)` written as
 * `Former member (Role)`: the recap stays true about the table without naming a deleted account.
 */
function withoutName(text: string, name: string): string {
  return text
    .split('\n')
    .map((line) =>
      line.startsWith(AT_THE_TABLE)
        ? AT_THE_TABLE + `, ${line.slice(AT_THE_TABLE.length)}`.split(`, ${name} (`).join(`, ${UNKNOWN_MEMBER_NAME} (`).slice(2)
        : line,
    )
    .join('\n');
}

/** Shown for a member whose account the directory no longer knows. */
export const UNKNOWN_MEMBER_NAME = 'Former member';

const householdNotFound = () => new NotFoundError('not_found', 'No such household');
const invitationNotFound = () => new NotFoundError('invitation_not_found', 'No such invitation, or it was used or has expired');
const memberNotFound = () => new NotFoundError('member_not_found', 'No such member in this household');
const ownerMustTransfer = (message: string) => new ConflictError('owner_must_transfer', message);

function assertOwner(caller: MemberRow): void {
  assertRole(caller.role, ['Owner']);
}

/**
 * The households rules: a non-member gets 404 for a household and everything under it (never
 * 403); the Owner changes settings and members; Owner and Adult invite; any member reads and
 * completes onboarding. A household always has exactly one Owner: every change of its members
 * locks the household's row first (HouseholdStore.lockHousehold) and reads the members only then,
 * in the same transaction, so two changes never decide on the same stale picture; a partial
 * unique index makes a second Owner impossible in the database too. No HTTP here.
 *
 * The capabilities other packages receive are properties (functions bound to this service):
 * `access`, `memberships`, `profiles`, `memberIds`, `spendTurn`, `deletionStep`, `exportSource`.
 */
export class HouseholdsService {
  private readonly store: HouseholdStore;
  private readonly clock: Clock;
  private readonly accounts: AccountDirectory;
  private readonly random: RandomBytes;
  private readonly intakeMode: IntakeMode;
  /** INVITE_CODES, normalised (upper case, trimmed). */
  private readonly configCodes: ReadonlySet<string>;
  private readonly welcomeCredits: number;
  private readonly sealer: InvitationCodeSealer | undefined;
  private readonly listeners: readonly MembershipListener[];
  private readonly news: HouseholdNews;
  private readonly zoneListeners: readonly HouseholdZoneWritten[];

  /** roleOf(userId, householdId): 404 `not_found` for non-members and unknown households. */
  readonly access: HouseholdAccess;
  /** For GET /me: the caller's memberships, in the order they joined. */
  readonly memberships: MembershipsProvider;
  /** GET …/members as a declared read, when the host handed in the accounts' display name (`accountName`). */
  readonly membersRead: ReadDeclaration<ListedMember[]> | undefined;
  /**
   * The changes feed's values of the household and of a member: each a declared read of one row
   * and the answer GET /households/{id} (or the member's item of GET …/members) makes of that row;
   * undefined without `accountName`, as `membersRead`.
   */
  readonly changeValues:
    | {
        readonly household: { readonly read: ReadDeclaration; answer(row: unknown): unknown };
        readonly member: { readonly read: ReadDeclaration; answer(row: unknown): unknown };
      }
    | undefined;
  /** Country, time zone and language of a household (no access check). */
  readonly profiles: HouseholdProfiles;
  /** The ids of a household's members (no access check). */
  readonly memberIds: HouseholdMemberIds;
  /** One AI turn for the rule parser: allowance first, then welcome credits; 429 otherwise. */
  readonly spendTurn: SpendTurn;
  /** Account deletion's households step. */
  readonly deletionStep: AccountDeletionStep;
  /** The data export's households part: a household's settings and members (no access check). */
  readonly exportSource: Pick<PersonalDataSources, 'household'>;
  readonly admin: HouseholdAdmin;

  constructor(options: HouseholdsServiceOptions) {
    const { store, ledger, clock, config } = options;
    this.store = store;
    this.clock = clock;
    this.accounts = options.accounts;
    this.membersRead = options.accountName && membersRead(options.accountName);
    this.changeValues = options.accountName && {
      household: { read: householdRead, answer: (row) => HouseholdModel.fromDatabaseJson(row as Pojo).toApi() },
      member: {
        read: memberRead(options.accountName),
        answer: (row) => {
          const r = row as MemberRow & { accountDisplayName: string | null };
          return this.namedAs(r, r.accountDisplayName ?? undefined);
        },
      },
    };
    this.random = options.random ?? systemRandom;
    this.intakeMode = config.intakeMode;
    this.configCodes = new Set(config.inviteCodes.map(normaliseInviteCode).filter(Boolean));
    this.welcomeCredits = config.welcomeCredits;
    this.sealer = options.invitationSecret ? new InvitationCodeSealer(options.invitationSecret) : undefined;
    this.listeners = options.membershipListeners ?? [];
    this.news = options.news ?? (async () => {});
    this.zoneListeners = options.zoneListeners ?? [];

    // The role from the memberships the caller carries (the kernel loaded them with the principal,
    // this request: a role change or a removal takes effect on the member's next request), else one query.
    this.access = {
      roleOf: async (caller, householdId) => {
        if (!caller.memberships) return store.roleOf(caller.userId, householdId);
        const id = householdId.toLowerCase();
        const membership = caller.memberships.find((m) => m.householdId === id);
        if (!membership) throw householdNotFound();
        return membership.role;
      },
    };
    this.memberships = (userId) => store.memberships(userId);
    this.profiles = (householdId) => store.profile(householdId);
    this.memberIds = async (householdId, trx) =>
      new Set(trx ? await store.lockMemberIds(householdId, trx as Knex.Transaction) : (await store.members(householdId)).map((m) => m.memberId));
    this.spendTurn = (householdId, trx) => ledger.spendTurn(householdId, trx as Knex.Transaction | undefined);
    this.deletionStep = { deleteAccountData: (userId, trx) => this.deleteAccountData(userId, trx as Knex.Transaction) };
    this.exportSource = { household: (householdId) => this.exportHousehold(householdId) };
    this.admin = householdAdmin({ store, ledger, clock: this.clock, random: this.random }, options.logger.child({ component: 'households-admin' }));
  }

  // ---- households ----

  /**
   * POST /households: the body is checked first (400), then intake (403), then the household, its
   * Owner, its plan, the welcome bundle and the spent invite code are written in one transaction.
   */
  async create(userId: string, body: CreateHouseholdRequest): Promise<HouseholdResponse> {
    const household = newHousehold(body);
    const intake = await admit({ mode: this.intakeMode, configCodes: this.configCodes, inviteCode: body.inviteCode, userId, accounts: this.accounts });
    return this.store.create({ userId, household, intake, welcomeCredits: this.welcomeCredits, at: this.clock.now() });
  }

  /**
   * GET /households/{id}: any member. `loaded`: the row of `householdRead` the kernel loaded with
   * the caller (it checked the membership), made into the answer by the model without a statement.
   */
  async get(caller: Caller, householdId: string, loaded?: KernelChecked<Pojo>): Promise<HouseholdResponse> {
    if (!loaded) await this.access.roleOf(caller, householdId);
    return this.store.get(householdId, undefined, loaded);
  }

  /** PATCH /households/{id}: Owner only (a non-member gets 404 before anything else is said). */
  async update(userId: string, householdId: string, body: UpdateHouseholdRequest): Promise<HouseholdResponse> {
    const changes = householdChanges(body);
    if (Object.keys(changes).length === 0) {
      assertRole(await this.store.roleOf(userId, householdId), ['Owner']);
      return this.store.update(householdId, changes, this.clock.now());
    }
    // The Owner check and the change are one statement; a rename's news is enqueued by that
    // statement itself (this package's `jobSources`), so a PATCH is one statement after the
    // session's. Not the Owner: roleOf says why (404, or 403). A zone written moves what is derived
    // from local times in it (pending reminders) in the same transaction.
    const zoneWritten = body.timeZoneId != null && this.zoneListeners.length > 0;
    const write = async (trx?: Knex.Transaction) => {
      const household = await this.store.updateAsOwner(userId, householdId, changes, this.clock.now(), trx);
      if (!household) {
        assertRole(await this.store.roleOf(userId, householdId, trx), ['Owner']);
        throw householdNotFound();
      }
      if (zoneWritten && trx) for (const told of this.zoneListeners) await told(householdId, household.timeZoneId, this.clock.now(), trx);
      return household;
    };
    return zoneWritten ? this.store.transaction(write) : write();
  }

  /**
   * Registers this package's job handlers on the host's queue (every instance): a rename's news,
   * enqueued by the renaming statement, told through `news` (without a transaction: the rename has
   * committed) with the job's id as the news' id, so the job run again (its instance died after
   * telling) tells nobody twice.
   */
  defineJobs(jobs: JobQueue): void {
    jobs.define<RenameJob>(
      RENAME_QUEUE,
      async (job, context) => {
        if (!job.a) return; // the renaming account is gone: nobody to name
        // After the commit, so without a transaction: push writes the news now (no second job).
        await this.news({ type: 'householdRenamed', householdId: job.h, actorUserId: job.a, id: context.id });
      },
      { expireInSeconds: RENAME_EXPIRE_SECONDS },
    );
  }

  /**
   * POST /households/{id}/onboarding/complete, for any member. A completed household answers its
   * original stamp and thread at once (one query). Otherwise the names are gathered before the row
   * lock is taken (so no lock is held while accounts answers) and the store re-checks under the lock.
   */
  async completeOnboarding(userId: string, householdId: string, body: CompleteOnboardingRequest): Promise<CompleteOnboardingResponse> {
    const state = await this.store.onboardingState(userId, householdId);
    if (state.completedAt) return { onboardingCompletedAt: state.completedAt, alreadyCompleted: true, conversationId: state.conversationId };
    const people = (await this.named(await this.store.members(householdId))).map((m) => ({ name: m.displayName, role: m.role }));
    const asked = new Set(body.skippedSteps ?? []);
    const skipped = ONBOARDING_STEPS.filter((s) => asked.has(s));
    return this.store.onboarding.completeOnboarding({
      householdId,
      at: this.clock.now(),
      defaultDinnerTime: body.defaultDinnerTime ? toHourMinute(body.defaultDinnerTime) : null,
      skippedSteps: skipped,
      recap: (household) => recapText(household, people, skipped),
    });
  }

  /** GET /households/{id}/conversations/{conversationId}: any member. */
  async conversation(caller: Caller, householdId: string, conversationId: string): Promise<ConversationResponse> {
    await this.access.roleOf(caller, householdId);
    return this.store.onboarding.conversation(householdId, conversationId);
  }

  // ---- members and invitations ----

  /** POST /households/{id}/invitations: Owner or Adult invite an Adult or a Junior; 128 random bits, base64url. */
  async invite(userId: string, householdId: string, role: 'Adult' | 'Junior'): Promise<InvitationResponse> {
    assertRole(await this.store.roleOf(userId, householdId), INVITING_ROLES);
    const now = this.clock.now();
    const code = this.random(16).toString('base64url');
    return this.store.invitations.createInvitation({
      householdId,
      role,
      createdBy: userId,
      code,
      sealedCode: this.sealer ? this.sealer.seal(householdId, code, this.random(12)) : null,
      at: now,
      expiresAt: new Date(now.getTime() + INVITATION_LIFETIME_MS),
    });
  }

  /** GET /households/{id}/invitations: Owner or Adult; the unused, unexpired codes, newest first. */
  async listInvitations(userId: string, householdId: string): Promise<OutstandingInvitations> {
    assertRole(await this.store.roleOf(userId, householdId), INVITING_ROLES);
    const rows = await this.store.invitations.outstandingInvitations(householdId, this.clock.now());
    return {
      items: rows.map((r) => ({
        code: this.sealer?.open(r.householdId, r.sealedCode) ?? null,
        role: r.role,
        householdId: r.householdId,
        expiresAt: r.expiresAt,
        createdAt: r.createdAt,
        createdBy: r.createdByMemberId,
      })),
    };
  }

  /**
   * DELETE /households/{id}/invitations/{code}: Owner or Adult revoke an unused, unexpired code of
   * the household; 404 `invitation_not_found` otherwise (also when an acceptance won the race).
   */
  async revokeInvitation(userId: string, householdId: string, code: string): Promise<void> {
    assertRole(await this.store.roleOf(userId, householdId), INVITING_ROLES);
    if (!(await this.store.invitations.revokeInvitation(householdId, code, this.clock.now()))) throw invitationNotFound();
  }

  /** POST /invitations/accept. */
  acceptInvitation(userId: string, code: string): Promise<Membership> {
    return this.store.invitations.acceptInvitation({
      userId,
      code,
      at: this.clock.now(),
      joined: (m, trx) => this.news({ type: 'memberJoined', householdId: m.householdId, actorUserId: userId, subjectUserId: userId }, trx),
    });
  }

  /**
   * GET /households/{id}/members: any member; the Owner first, then in the order they joined.
   * `loaded`: the rows of `membersRead` the read kernel loaded with the caller (it checked the
   * membership), each with its account's display name: named as `named` names them. Without it,
   * `membersOf`.
   */
  async listMembers(caller: Caller, householdId: string, loaded?: KernelChecked<ListedMember[]>): Promise<MemberResponse[]> {
    if (Array.isArray(loaded)) return loaded.map((r) => this.namedAs(r, r.accountDisplayName ?? undefined));
    await this.access.roleOf(caller, householdId);
    return this.membersOf(householdId);
  }

  /** Members by id as their item of GET …/members answers each (an If-Match's current state); any member. */
  async memberValues(caller: Caller, householdId: string, ids: readonly string[]): Promise<Map<string, unknown>> {
    const wanted = new Set(ids);
    return new Map((await this.listMembers(caller, householdId)).filter((m) => wanted.has(m.memberId)).map((m) => [m.memberId, m]));
  }

  /** One member as its list item answers it (an If-Match's current state); 404 `member_not_found` when there is none. */
  async currentMember(caller: Caller, householdId: string, memberId: string): Promise<unknown> {
    return (await this.memberValues(caller, householdId, [memberId])).get(memberId) ?? Promise.reject(memberNotFound());
  }

  /**
   * PATCH …/members/{memberId}: the Owner makes a member an Adult or a Junior. `Owner` is 400
   * `invalid_role` (a household is handed over with POST …/owner), and the Owner's own role cannot
   * change here either: 409 `owner_must_transfer`, since the household would be left without one.
   */
  async changeRole(userId: string, householdId: string, memberId: string, role: HouseholdRole): Promise<MemberResponse> {
    const row = await this.store.transaction(async (trx) => {
      const { caller, target } = await this.lockCallerAndTarget(trx, { userId, householdId, memberId });
      assertOwner(caller);
      if (role === 'Owner') {
        throw new InputError('invalid_role', 'The Owner role is handed over with POST /api/v1/households/{householdId}/owner', [
          { field: 'role', message: 'must be Adult or Junior', in: 'body' },
        ]);
      }
      if (target.role === 'Owner') throw ownerMustTransfer('The Owner keeps the role until the household is handed over to an Adult');
      if (target.role !== role) {
        await this.store.setRole(householdId, target.memberId, role, trx);
        await this.roleChanged(trx, { householdId, memberId: target.memberId, userId: target.userId, from: target.role, to: role });
        await this.news({ type: 'roleChanged', householdId, actorUserId: userId, subjectUserId: target.userId, subjectName: target.displayName, role }, trx);
      }
      return { ...target, role };
    });
    // The name is asked after the commit: no lock is held while accounts answers.
    const [member] = await this.named([row]);
    return member!;
  }

  /**
   * DELETE …/members/{memberId}: the Owner removes anyone else; any other member removes
   * themself (leaves). The Owner cannot leave (409 `owner_must_transfer`); anyone else removing
   * another member gets 403 `forbidden`. The household's data stays; the removed person's next
   * request finds no membership (roles are read from the database on every request).
   */
  async removeMember(userId: string, householdId: string, memberId: string): Promise<void> {
    await this.store.transaction(async (trx) => {
      const { caller, target } = await this.lockCallerAndTarget(trx, { userId, householdId, memberId });
      if (target.memberId === caller.memberId) {
        if (caller.role === 'Owner') throw ownerMustTransfer('The Owner cannot leave; hand the household over to an Adult first, or delete it');
      } else {
        assertOwner(caller);
      }
      await this.store.removeMember(householdId, target.memberId, trx);
      await this.departed(trx, target, householdId, target.memberId === caller.memberId ? 'left' : 'removed');
      const left = target.memberId === caller.memberId;
      await this.news(
        { type: left ? 'memberLeft' : 'memberRemoved', householdId, actorUserId: userId, subjectUserId: target.userId, subjectName: target.displayName },
        trx,
      );
    });
  }

  /**
   * POST …/owner: the Owner hands the household over to an Adult who has an account; the old Owner
   * becomes an Adult. 409 `invalid_role` for a Junior, a member without an account, or the Owner.
   * Both role changes are one transaction under the household's lock (the old Owner is demoted
   * first, so the one-Owner index holds at every statement).
   */
  async transferOwnership(userId: string, householdId: string, memberId: string): Promise<HouseholdResponse> {
    return this.store.transaction(async (trx) => {
      const { caller, target } = await this.lockCallerAndTarget(trx, { userId, householdId, memberId });
      assertOwner(caller);
      if (target.role !== 'Adult' || target.userId === null) {
        throw new ConflictError('invalid_role', 'The household can only be handed over to an Adult who has an account');
      }
      await this.store.setRole(householdId, caller.memberId, 'Adult', trx);
      await this.store.setRole(householdId, target.memberId, 'Owner', trx);
      await this.roleChanged(trx, { householdId, memberId: caller.memberId, userId: caller.userId, from: 'Owner', to: 'Adult' });
      await this.roleChanged(trx, { householdId, memberId: target.memberId, userId: target.userId, from: 'Adult', to: 'Owner' });
      await this.news({ type: 'ownershipTransferred', householdId, actorUserId: userId, subjectUserId: target.userId }, trx);
      return this.store.get(householdId, trx);
    });
  }

  /**
   * DELETE /households/{householdId}: the Owner deletes the household after typing its name
   * (`confirmName`, compared exactly; 400 `confirmation_mismatch` otherwise). One statement in one
   * transaction: the foreign keys take its members, invitations, threads, plan and credits, and the
   * other packages' rows (rules, events, calendar feed) along.
   */
  async deleteHousehold(userId: string, householdId: string, confirmName: string): Promise<void> {
    await this.store.transaction(async (trx) => {
      const household = await this.store.lockHousehold(householdId, trx);
      if (!household) throw householdNotFound();
      const [caller] = await this.store.memberRows(householdId, { userId }, trx);
      if (!caller) throw householdNotFound();
      assertOwner(caller);
      if (confirmName !== household.name) {
        throw new InputError('confirmation_mismatch', "confirmName is not the household's name", [
          { field: 'confirmName', message: "must equal the household's name", in: 'body' },
        ]);
      }
      await this.store.deleteHouseholds([householdId], trx);
    });
  }

  // ---- for other packages ----

  /**
   * The households part of deleting an account, inside the account deletion's transaction: 409
   * `owner_must_transfer` while the person owns a household that has other members; otherwise the
   * households where the person is the only member are deleted (with everything in them), and the
   * person's memberships elsewhere are removed.
   */
  private async deleteAccountData(userId: string, trx: Knex.Transaction): Promise<void> {
    const memberships = await this.store.lockMembershipsOf(userId, trx);
    if (memberships.some((m) => m.role === 'Owner' && m.otherMembers > 0)) {
      throw ownerMustTransfer('You own a household that has other members: hand it over to an Adult, or delete it, first');
    }
    const alone = new Set(memberships.filter((m) => m.otherMembers === 0).map((m) => m.householdId));
    await this.store.deleteHouseholds([...alone], trx);
    const at = this.clock.now();
    const staying = memberships.filter((m) => !alone.has(m.householdId));
    // The codes the person minted go with them (see `departed`), in every household.
    await this.store.invitations.revokeInvitationsBy(null, userId, trx);
    for (const m of staying) {
      for (const l of this.listeners)
        await l.memberDeparted({ householdId: m.householdId, memberId: m.memberId, userId, role: m.role, reason: 'account_deleted', at }, trx);
    }
    // Every member id the person held, here and in households they left before: the other
    // packages forget what they keep under them (a participant's name, say).
    const former = (await this.store.formerMemberships(userId, trx)).filter((m) => !alone.has(m.householdId));
    const members = [...staying.map((m) => ({ householdId: m.householdId, memberId: m.memberId })), ...former];
    if (members.length) for (const l of this.listeners) await l.accountErased({ userId, members, at }, trx);
    // This package's own copy of the name: the onboarding recap's "At the table" line.
    const name = (await this.accounts.profiles([userId])).get(userId)?.displayName;
    if (name) await this.store.onboarding.rewriteRecaps([...new Set(members.map((m) => m.householdId))], (text) => withoutName(text, name), trx);
    await this.store.deleteDepartures(userId, trx);
    await this.store.removeMemberships(userId, trx);
  }

  /**
   * A member left or was removed, inside the transaction that removed them: an account's departure
   * is recorded (an invitation code minted before it never gives the account back what it lost:
   * see the store's `acceptInvitation`), the codes it minted and nobody used yet are revoked (they
   * were minted on a trust that is gone), and the listeners are told (meal events keep the
   * participant's name without the link, and retire the calendar feed the member could read).
   */
  private async departed(trx: Knex.Transaction, member: MemberRow, householdId: string, reason: 'left' | 'removed'): Promise<void> {
    const at = this.clock.now();
    if (member.userId !== null) {
      await this.store.recordDeparture({ householdId, userId: member.userId, memberId: member.memberId, role: member.role, reason, at }, trx);
      await this.store.invitations.revokeInvitationsBy(householdId, member.userId, trx);
    }
    for (const l of this.listeners)
      await l.memberDeparted({ householdId, memberId: member.memberId, userId: member.userId, role: member.role, reason, at }, trx);
  }

  /** A role changed, inside its transaction: a member who may no longer invite loses the codes they minted; the listeners are told. */
  private async roleChanged(trx: Knex.Transaction, change: Omit<MemberRoleChange, 'at'>): Promise<void> {
    if (change.userId !== null && !INVITING_ROLES.includes(change.to)) await this.store.invitations.revokeInvitationsBy(change.householdId, change.userId, trx);
    const at = this.clock.now();
    for (const l of this.listeners) await l.roleChanged({ ...change, at }, trx);
  }

  /** A household's settings and members, as GET answers them (no access check: the export asks only for the person's own). */
  private async exportHousehold(householdId: string): Promise<{ household: HouseholdResponse; members: MemberResponse[] }> {
    const household = await this.store.get(householdId);
    return { household, members: await this.membersOf(householdId) };
  }

  /**
   * The members as GET …/members answers them (no access check): its declared read as a statement
   * of its own, so the list has one SQL however it is loaded; only a host that lent no display name
   * (no `membersRead`) has the rows named through the directory.
   */
  private async membersOf(householdId: string): Promise<MemberResponse[]> {
    if (!this.membersRead) return this.named(await this.store.members(householdId));
    return (await this.store.listedMembers(householdId, this.membersRead)).map((r) => this.namedAs(r, r.accountDisplayName ?? undefined));
  }

  // ---- helpers ----

  /**
   * Locks the household and answers the caller's member row and the target's. 404 `not_found` when
   * the household is unknown or the caller is not a member (a non-member learns nothing), 404
   * `member_not_found` when the household has no member `memberId`.
   */
  private async lockCallerAndTarget(
    trx: Knex.Transaction,
    input: { userId: string; householdId: string; memberId: string },
  ): Promise<{ caller: MemberRow; target: MemberRow }> {
    if (!(await this.store.lockHousehold(input.householdId, trx))) throw householdNotFound();
    const rows = await this.store.memberRows(input.householdId, { userId: input.userId, memberId: input.memberId }, trx);
    const caller = rows.find((r) => r.userId === input.userId);
    if (!caller) throw householdNotFound();
    const target = rows.find((r) => r.memberId === input.memberId);
    if (!target) throw memberNotFound();
    return { caller, target };
  }

  /** Members with their display names; accounts is asked once, for all of them. */
  private async named(rows: MemberRow[]): Promise<MemberResponse[]> {
    const ids = rows.map((r) => r.userId).filter((id): id is string => id !== null);
    const profiles = ids.length ? await this.accounts.profiles(ids) : new Map<string, { displayName: string }>();
    return rows.map((r) => this.namedAs(r, r.userId ? profiles.get(r.userId)?.displayName : undefined));
  }

  /** A member as the API names them: the account's display name, else the name the row keeps, else UNKNOWN_MEMBER_NAME. */
  private namedAs(r: MemberRow, accountName: string | undefined): MemberResponse {
    return {
      memberId: r.memberId,
      displayName: (r.userId ? accountName : r.displayName) ?? r.displayName ?? UNKNOWN_MEMBER_NAME,
      role: r.role,
      userId: r.userId,
    };
  }
}
