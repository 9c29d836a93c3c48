/**
 * @svc/households: households, members and roles, settings, onboarding and the day's thread,
 * the plan and its AI credits, and intake (invite codes, waitlist).
 */
import type {
  AccountDeletionStep,
  AccountDirectory,
  Clock,
  HouseholdAccess,
  HouseholdMemberIds,
  HouseholdProfiles,
  MembershipsProvider,
  PersonalDataSources,
  RandomBytes,
  SpendTurn,
} from '@svc/contracts';
import { type ApiRouter, type Logger, systemRandom } from '@svc/http-kit';
import type { Knex } from 'knex';
import { type CreditBalance, CreditLedger } from './CreditLedger.js';
import { type CreateInviteCodeOptions, IntakeCodes, type IntakeInviteCode, normaliseInviteCode } from './intake.js';
import { KnexHouseholdStore } from './KnexHouseholdStore.js';
import { accountDeletionStep, exportSource } from './life.js';
import { createHouseholdsRouter } from './router.js';

export type { CreditBalance, PoolBalance } from './CreditLedger.js';
export { TIME_ZONE_IDS } from './formats.js';
export type {
  CompleteOnboardingResponse,
  ConversationResponse,
  HouseholdResponse,
  HouseholdStore,
  InvitationResponse,
  OnboardingStep,
} from './HouseholdStore.js';
export type { CreateInviteCodeOptions, IntakeInviteCode, IntakeMode } from './intake.js';
export type { MemberResponse } from './members.js';
export { migrate, migrations, relations } from './migrations.js';

/** Configuration of the households package (decisions.md §1: INTAKE_MODE, INVITE_CODES, AI_TURNS_PER_MONTH, WELCOME_CREDITS). */
export interface HouseholdsConfig {
  intakeMode: 'open' | 'invite' | 'paused';
  /** Codes valid while intake is invite-only; reusable, compared case-insensitively. */
  inviteCodes: string[];
  /** The default plan's AI allowance per household per calendar month (household time zone). */
  aiTurnsPerMonth: number;
  /** AI turns in the welcome bundle, once per user. */
  welcomeCredits: number;
}

export interface HouseholdsDeps {
  knex: Knex;
  clock: Clock;
  /** Randomness for invitation and invite codes; the system's unless given. */
  random?: RandomBytes;
  logger: Logger;
  config: HouseholdsConfig;
  /** Display names and the waitlist, from @svc/accounts. */
  accounts: AccountDirectory;
}

/** What the operator CLI (`npm run admin`) may do. */
export interface HouseholdAdmin {
  /** Creates an invite code for INTAKE_MODE=invite; single use and random unless told otherwise. */
  createInviteCode(options?: CreateInviteCodeOptions): Promise<IntakeInviteCode>;
  /** The database codes, oldest first (INVITE_CODES are configuration, not listed here). */
  listInviteCodes(): Promise<IntakeInviteCode[]>;
  /** Refuses a database code from now on; false when there was no such code in force. */
  revokeInviteCode(code: string): Promise<boolean>;
  /** Refuses the household's AI turns until `until`: 429 `ai_paused` with an HTTP-date Retry-After. 404 when there is no such household. */
  pauseAi(householdId: string, until: Date): Promise<{ householdId: string; aiPausedUntil: string }>;
  /** Lifts a pause; answers the pause it lifted (null when none was in force). */
  resumeAi(householdId: string): Promise<{ householdId: string; wasPausedUntil: string | null }>;
  /** The month's allowance, the welcome bundle and any pause. */
  creditBalance(householdId: string): Promise<CreditBalance>;
}

/** The households package, wired: its routes and the services other packages and the host use. */
export interface Households {
  /** Every households operation. */
  router: ApiRouter;
  /** roleOf(userId, householdId): 404 `not_found` for non-members and unknown households. */
  access: HouseholdAccess;
  /** For GET /me: the caller's memberships, in the order they joined. */
  memberships: MembershipsProvider;
  /** Country, time zone and language of a household (no access check). */
  profiles: HouseholdProfiles;
  /** One AI turn for the rule parser: allowance first, then welcome credits; 429 otherwise. */
  spendTurn: SpendTurn;
  /** The ids of a household's members (no access check). */
  memberIds: HouseholdMemberIds;
  /** Account deletion's households step: 409 `owner_must_transfer`, else deletes the person's lone households and memberships. */
  deletionStep: AccountDeletionStep;
  /** The data export's households part: a household's settings and members (no access check). */
  exportSource: Pick<PersonalDataSources, 'household'>;
  admin: HouseholdAdmin;
}

/** Builds the package from its dependencies; no module-level state, so a test builds its own. */
export function createHouseholds(deps: HouseholdsDeps): Households {
  const { knex, clock, config, accounts } = deps;
  const random = deps.random ?? systemRandom;
  const store = new KnexHouseholdStore(knex);
  const ledger = new CreditLedger(knex, clock, config.aiTurnsPerMonth);
  const codes = new IntakeCodes(knex, random);
  const audit = deps.logger.child({ component: 'households-admin' });
  const router = createHouseholdsRouter({
    store,
    accounts,
    clock,
    random,
    intakeMode: config.intakeMode,
    configCodes: new Set(config.inviteCodes.map(normaliseInviteCode).filter(Boolean)),
    welcomeCredits: config.welcomeCredits,
  });
  return {
    router,
    access: { roleOf: (userId, householdId) => store.roleOf(userId, householdId) },
    memberships: (userId) => store.memberships(userId),
    profiles: (householdId) => store.profile(householdId),
    spendTurn: (householdId) => ledger.spendTurn(householdId),
    memberIds: async (householdId) => new Set((await store.members(householdId)).map((m) => m.memberId)),
    deletionStep: accountDeletionStep(store),
    exportSource: exportSource(store, accounts),
    admin: {
      async createInviteCode(options = {}) {
        const made = await codes.create(options, clock.now());
        audit.info({ code: made.code, maxUses: made.maxUses, expiresAt: made.expiresAt }, 'invite code created');
        return made;
      },
      listInviteCodes: () => codes.list(),
      async revokeInviteCode(code) {
        const revoked = await codes.revoke(code, clock.now());
        audit.info({ code, revoked }, 'invite code revoked');
        return revoked;
      },
      async pauseAi(householdId, until) {
        const paused = await ledger.pauseAi(householdId, until);
        audit.info(paused, 'household AI paused');
        return paused;
      },
      async resumeAi(householdId) {
        const resumed = await ledger.resumeAi(householdId);
        audit.info(resumed, 'household AI resumed');
        return resumed;
      },
      creditBalance: (householdId) => ledger.balance(householdId),
    },
  };
}
