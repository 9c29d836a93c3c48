import type { Clock, RandomBytes } from '@svc/contracts';
import { InputError, type Logger } from '@svc/http-kit';
import type { CreditBalance, CreditLedger } from './CreditLedger.js';
import { type CreateInviteCodeOptions, normaliseInviteCode, randomInviteCode } from './intake.js';
import type { IntakeInviteCode } from './models/index.js';
import type { HouseholdStore } from './store.js';

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

/** The operator's capabilities, each logged to `audit`. */
export function householdAdmin(deps: { store: HouseholdStore; ledger: CreditLedger; clock: Clock; random: RandomBytes }, audit: Logger): HouseholdAdmin {
  const { store, ledger, clock, random } = deps;
  return {
    async createInviteCode(options = {}) {
      const code = normaliseInviteCode(options.code ?? randomInviteCode(random));
      if (!code || code.length > 200) throw new InputError('validation_failed', 'An invite code is 1 to 200 characters');
      const maxUses = options.maxUses ?? 1;
      if (!Number.isInteger(maxUses) || maxUses < 1) throw new InputError('validation_failed', 'maxUses must be a whole number of at least 1');
      const made = await store.createInviteCode({ code, maxUses, note: options.note ?? null, expiresAt: options.expiresAt ?? null }, clock.now());
      audit.info({ code: made.code, maxUses: made.maxUses, expiresAt: made.expiresAt }, 'invite code created');
      return made;
    },
    listInviteCodes: () => store.listInviteCodes(),
    async revokeInviteCode(code) {
      const revoked = await store.revokeInviteCode(normaliseInviteCode(code), clock.now());
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
  };
}
