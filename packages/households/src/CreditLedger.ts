import type { Clock } from '@svc/contracts';
import { objection } from '@svc/db';
import { isUuid, NotFoundError, TooManyRequestsError } from '@svc/http-kit';
import type { Knex } from 'knex';
import { calendarMonthIn } from './formats.js';
import { CreditLedgerEntryModel, HouseholdModel, HouseholdSubscriptionModel, WelcomeBundleModel } from './models/index.js';

/** The one plan there is so far. Its monthly AI allowance is AI_TURNS_PER_MONTH. */
export const DEFAULT_PLAN = 'default';

export interface PoolBalance {
  /** Turns granted to the pool (this month, for the allowance). */
  granted: number;
  /** Turns spent from it. */
  spent: number;
  remaining: number;
}

/** A household's AI credits as the operator sees them. */
export interface CreditBalance {
  householdId: string;
  /** The calendar month (`YYYY-MM`, household time zone) the allowance figures are for. */
  period: string;
  /** This month's allowance; before the month's first turn it shows what will be granted. */
  allowance: PoolBalance;
  /** The welcome bundle that came with this household (zero when it came with another of the creator's). */
  welcome: PoolBalance;
  /** ISO date-time while an operator has paused the household's AI, else null. */
  aiPausedUntil: string | null;
}

/**
 * Opens a new household's plan inside its creating transaction: the subscription on the default
 * plan, and, when this is the creator's first household, the welcome bundle (the primary key on
 * the user makes it once per user, whatever races) with its grant booked in the ledger.
 */
export async function openPlan(trx: Knex.Transaction, input: { householdId: string; userId: string; welcomeCredits: number; at: Date }): Promise<void> {
  const { householdId, userId, welcomeCredits, at } = input;
  await HouseholdSubscriptionModel.query(trx).insert({ householdId, plan: DEFAULT_PLAN, startedAt: at.toISOString() });
  // ON CONFLICT DO NOTHING … RETURNING may return no row, which an Objection insert would still make
  // a model of: knex on the model's table.
  const [bundle] = await trx(WelcomeBundleModel.tableName)
    .insert({ userId, householdId, credits: welcomeCredits, grantedAt: at })
    .onConflict('userId')
    .ignore()
    .returning('userId');
  if (bundle && welcomeCredits > 0) {
    await CreditLedgerEntryModel.query(trx).insert({
      householdId,
      pool: 'welcome',
      period: null,
      reason: 'welcome_bundle',
      delta: welcomeCredits,
      userId,
      createdAt: at.toISOString(),
    });
  }
}

const { raw } = objection;

interface PoolSums {
  allowance: { granted: number; spent: number; grants: number };
  welcome: { granted: number; spent: number };
}

/**
 * AI credits as a ledger: every grant and every spend is a row of `credit_ledger`, and a balance is
 * a sum. The month's allowance is granted by the month's first turn (the household's calendar
 * month), so a new month restores it without a job that must run on time.
 */
export class CreditLedger {
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
    private readonly aiTurnsPerMonth: number,
  ) {
    this.Household = HouseholdModel.bindKnex(knex);
    this.Entry = CreditLedgerEntryModel.bindKnex(knex);
  }

  private readonly Household: typeof HouseholdModel;
  private readonly Entry: typeof CreditLedgerEntryModel;

  /**
   * Spends one turn: from the month's allowance, then from the welcome bundle. 429 `ai_paused` with
   * an HTTP-date Retry-After while an operator paused the household's AI; 429 `quota_exceeded`
   * without Retry-After when both pools are empty. A row lock on the household serialises spends.
   * Inside the caller's `outer` transaction when given (the spend then commits or rolls back with it).
   */
  async spendTurn(householdId: string, outer?: Knex.Transaction): Promise<void> {
    if (!isUuid(householdId)) throw new NotFoundError('not_found', 'No such household');
    const at = this.clock.now();
    const spend = async (trx: Knex.Transaction) => {
      const household = await trx('households').select('timeZoneId', 'aiPausedUntil').where({ id: householdId }).forNoKeyUpdate().first();
      if (!household) throw new NotFoundError('not_found', 'No such household');
      const pausedUntil = household.aiPausedUntil as Date | null;
      if (pausedUntil && pausedUntil.getTime() > at.getTime()) {
        // An HTTP date has whole seconds; round up so a client that waits until then finds it open.
        const retryAt = new Date(Math.ceil(pausedUntil.getTime() / 1000) * 1000);
        throw new TooManyRequestsError('ai_paused', `This household's AI is paused until ${pausedUntil.toISOString()}`, retryAt);
      }
      const period = calendarMonthIn(household.timeZoneId as string, at);
      const sums = await this.sums(trx, householdId, period);
      const rows: Record<string, unknown>[] = [];
      if (sums.allowance.grants === 0) {
        rows.push({ householdId, pool: 'allowance', period, reason: 'monthly_allowance', delta: this.aiTurnsPerMonth, createdAt: at });
      }
      const allowanceLeft = (sums.allowance.grants === 0 ? this.aiTurnsPerMonth : sums.allowance.granted) - sums.allowance.spent;
      const welcomeLeft = sums.welcome.granted - sums.welcome.spent;
      if (allowanceLeft > 0) rows.push({ householdId, pool: 'allowance', period, reason: 'ai_turn', delta: -1, createdAt: at });
      else if (welcomeLeft > 0) rows.push({ householdId, pool: 'welcome', period: null, reason: 'ai_turn', delta: -1, createdAt: at });
      else throw new TooManyRequestsError('quota_exceeded', "The household's AI allowance for this month and its welcome credits are used up");
      await trx('creditLedger').insert(rows);
    };
    await (outer ? spend(outer) : this.knex.transaction(spend));
  }

  /** The household's balance now (reads only; the month's grant is shown before it is booked). */
  async balance(householdId: string): Promise<CreditBalance> {
    if (!isUuid(householdId)) throw new NotFoundError('not_found', 'No such household');
    const household = await this.Household.query().select('timeZoneId', 'aiPausedUntil').findById(householdId);
    if (!household) throw new NotFoundError('not_found', 'No such household');
    const at = this.clock.now();
    const period = calendarMonthIn(household.timeZoneId, at);
    const sums = await this.sums(this.knex, householdId, period);
    const allowanceGranted = sums.allowance.grants === 0 ? this.aiTurnsPerMonth : sums.allowance.granted;
    const pausedUntil = household.aiPausedUntil;
    return {
      householdId,
      period,
      allowance: { granted: allowanceGranted, spent: sums.allowance.spent, remaining: Math.max(0, allowanceGranted - sums.allowance.spent) },
      welcome: { granted: sums.welcome.granted, spent: sums.welcome.spent, remaining: Math.max(0, sums.welcome.granted - sums.welcome.spent) },
      aiPausedUntil: pausedUntil && Date.parse(pausedUntil) > at.getTime() ? pausedUntil : null,
    };
  }

  /** Refuses the household's AI turns until `until` (429 with Retry-After). */
  async pauseAi(householdId: string, until: Date): Promise<{ householdId: string; aiPausedUntil: string }> {
    if (!isUuid(householdId)) throw new NotFoundError('not_found', 'No such household');
    const updated = await this.Household.query().patch({ aiPausedUntil: until.toISOString() }).where({ id: householdId });
    if (updated === 0) throw new NotFoundError('not_found', 'No such household');
    return { householdId, aiPausedUntil: until.toISOString() };
  }

  /** Lifts a pause; answers the pause that was lifted (null when there was none in force). */
  async resumeAi(householdId: string): Promise<{ householdId: string; wasPausedUntil: string | null }> {
    if (!isUuid(householdId)) throw new NotFoundError('not_found', 'No such household');
    const at = this.clock.now();
    return this.knex.transaction(async (trx) => {
      const row = await this.Household.query(trx).select('aiPausedUntil').findById(householdId).forNoKeyUpdate();
      if (!row) throw new NotFoundError('not_found', 'No such household');
      await this.Household.query(trx).patch({ aiPausedUntil: null }).where({ id: householdId });
      const was = row.aiPausedUntil;
      return { householdId, wasPausedUntil: was && Date.parse(was) > at.getTime() ? was : null };
    });
  }

  /** One query: the month's allowance entries and the whole welcome pool of the household. */
  private async sums(db: Knex | Knex.Transaction, householdId: string, period: string): Promise<PoolSums> {
    const rows = (await this.Entry.query(db as Knex.Transaction)
      .select('pool')
      .select(raw("coalesce(sum(delta) filter (where reason <> 'ai_turn'), 0)::int as granted"))
      .select(raw("coalesce(-sum(delta) filter (where reason = 'ai_turn'), 0)::int as spent"))
      .select(raw("count(*) filter (where reason = 'monthly_allowance')::int as grants"))
      .where({ householdId })
      .andWhere((q) => q.where({ pool: 'welcome' }).orWhere({ pool: 'allowance', period }))
      .groupBy('pool')) as unknown as { pool: string; granted: number; spent: number; grants: number }[];
    const allowance = rows.find((r) => r.pool === 'allowance');
    const welcome = rows.find((r) => r.pool === 'welcome');
    return {
      allowance: { granted: allowance?.granted ?? 0, spent: allowance?.spent ?? 0, grants: allowance?.grants ?? 0 },
      welcome: { granted: welcome?.granted ?? 0, spent: welcome?.spent ?? 0 },
    };
  }
}
