import { isPgError, PG } from '@svc/db';
import { ConflictError, NotFoundError } from '@svc/http-kit';
import type { Knex } from 'knex';
import { calendarDateIn } from './formats.js';
import { HouseholdConversationModel, HouseholdMessageModel, HouseholdModel } from './models/index.js';
import type { CompleteOnboardingResponse, ConversationResponse, HouseholdResponse, OnboardingStep } from './schemas.js';
import { householdNotFound } from './store-errors.js';

/**
 * Lock waits longer than this on one household's onboarding answer 409 instead of piling up; below
 * the service's statement timeout (DB_STATEMENT_TIMEOUT_MS, 1 s), which would otherwise answer 503 first.
 */
export const ONBOARDING_LOCK_TIMEOUT_MS = 500;

/** Onboarding and the day's thread of a household (part of HouseholdStore: `onboarding`). */
export interface OnboardingStore {
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
}

/** OnboardingStore on Objection. */
export class ObjectionOnboardingStore implements OnboardingStore {
  private readonly lockTimeoutMs: number;
  private readonly Household: typeof HouseholdModel;
  private readonly Conversation: typeof HouseholdConversationModel;
  private readonly Message: typeof HouseholdMessageModel;

  constructor(
    private readonly knex: Knex,
    options: { onboardingLockTimeoutMs?: number } = {},
  ) {
    this.lockTimeoutMs = Math.max(1, Math.floor(options.onboardingLockTimeoutMs ?? ONBOARDING_LOCK_TIMEOUT_MS));
    this.Household = HouseholdModel.bindKnex(knex);
    this.Conversation = HouseholdConversationModel.bindKnex(knex);
    this.Message = HouseholdMessageModel.bindKnex(knex);
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
}
