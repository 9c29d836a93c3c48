import type {
  Clock,
  DishCatalog,
  HouseholdAccess,
  PlannedDinners,
  PlanningEvent,
  PlanningEvents,
  PlanningHouseholds,
  PlanningRules,
  StarterLanguage,
  TellRunDone,
} from '@svc/contracts';
import { ADULT_ROLES, type Caller } from '@svc/contracts';
import type { Pojo, ReadDeclaration } from '@svc/db';
import { assertRole, ConflictError, InputError, NotFoundError } from '@svc/http-kit';
import type { JobContext, JobQueue } from '@svc/jobs';
import type { Knex } from 'knex';
import { addDays, daysBetween, mondayOf, weekdayIndex } from './dates.js';
import { PLAN_RUN_EXPIRE_SECONDS, PLAN_RUN_QUEUE } from './migrations.js';
import { PlanModel } from './models/index.js';
import { planRead } from './reads.js';
import type { CreatePlanRequest, Plan, PlanDay, SetDayRequest } from './schemas.js';
import type { PlanInput, PlanResult } from './solver.js';
import { EARLIER_DINNERS_DAYS, type PlanStore, type RunHistory, type RunOutcome, type RunPlan, type StoredPlan } from './store.js';
import { RunEndedSignal } from './waiter.js';

/** How far ahead a plan may start: at most 84 days after this week's Monday (inclusive). */
export const PLAN_AHEAD_DAYS = 84;
/** The list's default window: this week's Monday through 83 days later. */
export const LIST_WINDOW_DAYS = 83;
/** A run whose inputs could not be read this many times ends `failed` rather than holding the household's runs. */
const INPUT_ATTEMPTS = 3;

/** What solves a plan (PlanSolverPool of @svc/plan-solver: off the event loop, with its time limit). */
export interface PlanSolver {
  solve(input: PlanInput): Promise<PlanResult>;
}

/** What the service logs (a pino logger's part). */
export interface PlannerLogger {
  warn(obj: object, msg?: string): void;
}

export interface PlannerServiceOptions {
  store: PlanStore;
  /** Transactions of a run's end and of a POST (the run's job is enqueued in it). */
  knex: Knex;
  clock: Clock;
  jobs: JobQueue;
  /** Membership and role (@svc/households). */
  access: HouseholdAccess;
  /** Settings and members (@svc/households). */
  households: PlanningHouseholds;
  /** The household's rules (@svc/meal-rules). */
  rules: PlanningRules;
  /** The household's events on the plan's dates (@svc/meal-events). */
  events: PlanningEvents;
  /** Own and starter dishes (@svc/dishes). */
  dishes: DishCatalog;
  /** Tells the members a run ended (`runDone`, @svc/push); none: nobody is told. */
  tellRunDone?: TellRunDone;
  solver: PlanSolver;
  /**
   * Runs at once on this instance (the run queue's own concurrency; default 4): about twice the
   * solver's threads, so a run's reads and write overlap another's solve without crowding the
   * event loop with handlers that would only wait for a thread.
   */
  runsAtOnce?: number;
  logger?: PlannerLogger;
}

/** `nb` for Norwegian (nb, nn, no), else `en`: the language of texts and of starter dishes. */
export function planLanguage(preferredLanguage: string): StarterLanguage {
  const primary = preferredLanguage.toLowerCase().split('-')[0];
  return primary === 'nb' || primary === 'nn' || primary === 'no' ? 'nb' : 'en';
}

const BY_HAND: Record<StarterLanguage, string> = { en: 'Set by hand', nb: 'Satt for hånd' };

function planNotFound(): NotFoundError {
  return new NotFoundError('not_found', 'No such plan');
}

/** The plan as the API answers it (without what only the package keeps). */
function answer(plan: StoredPlan): Plan {
  const { replanOf: _r, version: _v, ...api } = plan;
  return api;
}

/**
 * The planner's rules: runs asked for by the household's adults (one at a time per household),
 * run later on the job queue by whichever instance takes them, the plans they end with, days set by
 * hand, and the current plans every member reads. No HTTP here.
 */
export class PlannerService {
  /** The changes feed's value of a plan: the declared read of one plan and the answer its GET makes of that row. */
  readonly changeValue: { readonly read: ReadDeclaration; answer(row: unknown): unknown } = {
    read: planRead,
    answer: (row) => PlanModel.fromDatabaseJson(row as Pojo).toApi(),
  };
  /** The PlannedDinners capability (@svc/contracts) for the calendar feed: the current plans' dinners. */
  readonly plannedDinners: PlannedDinners;
  private readonly store: PlanStore;
  private readonly clock: Clock;
  private readonly signal: RunEndedSignal;

  constructor(private readonly options: PlannerServiceOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.signal = new RunEndedSignal(options.knex);
    this.plannedDinners = {
      version: (householdId) => this.store.plannedVersion(householdId),
      dinners: (householdId) => this.store.plannedDinners(householdId),
    };
  }

  /** The run's handler on the job queue (every instance runs runs). */
  defineJobs(): void {
    this.options.jobs.define<{ planId: string }>(PLAN_RUN_QUEUE, (job, context) => this.run(job.planId, context), {
      expireInSeconds: PLAN_RUN_EXPIRE_SECONDS,
      concurrency: this.options.runsAtOnce ?? 4,
    });
  }

  /** Stops waiting for runs (the LISTEN connection). */
  async close(): Promise<void> {
    await this.signal.close();
  }

  private async assertAdult(caller: Caller, householdId: string): Promise<void> {
    assertRole(await this.options.access.roleOf(caller, householdId), ADULT_ROLES);
  }

  /** POST …/plans: a new run, queued with its job in one transaction; Owner and Adult. */
  async create(caller: Caller, householdId: string, body: CreatePlanRequest): Promise<Plan> {
    await this.assertAdult(caller, householdId);
    const { timeZoneId } = await this.options.households(householdId);
    const monday = mondayOf(this.clock.now(), timeZoneId);
    const ahead = daysBetween(monday, body.startDate);
    if (weekdayIndex(body.startDate) !== 1 || ahead < 0 || ahead > PLAN_AHEAD_DAYS) {
      throw new InputError('validation_failed', "startDate must be a Monday from this week's Monday up to 84 days after it", [
        { field: 'startDate', in: 'body', message: `a Monday from ${monday} to ${addDays(monday, PLAN_AHEAD_DAYS)}` },
      ]);
    }
    return answer(await this.enqueueRun({ householdId, startDate: body.startDate, weeks: body.weeks, replanOf: null }));
  }

  /** POST …/plans/{planId}/replan: a new run of the same weeks keeping the plan's locked days; Owner and Adult. */
  async replan(caller: Caller, householdId: string, planId: string): Promise<Plan> {
    await this.assertAdult(caller, householdId);
    const plan = await this.store.get(householdId, planId);
    if (!plan) throw planNotFound();
    return answer(await this.enqueueRun({ householdId, startDate: plan.startDate, weeks: plan.weeks, replanOf: plan.id }));
  }

  private async enqueueRun(input: { householdId: string; startDate: string; weeks: number; replanOf: string | null }): Promise<StoredPlan> {
    const plan = await this.options.knex.transaction(async (trx) => {
      const created = await this.store.createRun(input, this.clock.now(), trx);
      await this.options.jobs.enqueue(PLAN_RUN_QUEUE, { planId: created.id }, { trx });
      return created;
    });
    this.options.jobs.nudge();
    return plan;
  }

  /** GET …/plans/{planId}: any member. */
  async get(caller: Caller, householdId: string, planId: string): Promise<Plan> {
    await this.options.access.roleOf(caller, householdId);
    const plan = await this.store.get(householdId, planId);
    if (!plan) throw planNotFound();
    return answer(plan);
  }

  /** GET …/plans?from&to: the current plans overlapping the window; any member. */
  async list(caller: Caller, householdId: string, query: { from?: string; to?: string }): Promise<{ items: Plan[] }> {
    await this.options.access.roleOf(caller, householdId);
    let from = query.from;
    if (from === undefined) from = mondayOf(this.clock.now(), (await this.options.households(householdId)).timeZoneId);
    const to = query.to ?? addDays(from, LIST_WINDOW_DAYS);
    if (to < from) throw new InputError('validation_failed', '`to` is before `from`', [{ field: 'to', in: 'query', message: 'on or after from' }]);
    return { items: await this.store.listCurrent(householdId, from, to) };
  }

  /**
   * Waits up to `seconds` for the plan's run to end (`Prefer: wait`): the ended plan, or undefined
   * when it is still queued or running then. Wakes on the run's notification, not by polling.
   */
  async waitFor(householdId: string, planId: string, seconds: number): Promise<Plan | undefined> {
    const ended = (p: StoredPlan | undefined) => p !== undefined && p.status !== 'queued' && p.status !== 'running';
    const listening = await this.signal.listen(planId);
    let timer: NodeJS.Timeout | undefined;
    try {
      // Read after listening: a run that ended before is seen here, one that ends later is heard.
      let plan = await this.store.get(householdId, planId);
      if (ended(plan)) return answer(plan!);
      const late = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), seconds * 1000);
      });
      await Promise.race([listening.ended, late]);
      plan = await this.store.get(householdId, planId);
      return ended(plan) ? answer(plan!) : undefined;
    } finally {
      clearTimeout(timer);
      listening.cancel();
    }
  }

  /** The current value of a plan for If-Match (GET's answer). */
  async current(caller: Caller, householdId: string, planId: string): Promise<Plan> {
    return this.get(caller, householdId, planId);
  }

  /**
   * PUT …/plans/{planId}/days/{date}: the day's dish set by hand (null: no dinner) and its lock;
   * no rule is checked. Owner and Adult. 404 for an unknown plan or a date outside it, 400 for a
   * dish that is neither the household's nor a starter dish, 409 `plan_not_current` unless the plan is current.
   */
  async setDay(caller: Caller, householdId: string, planId: string, date: string, body: SetDayRequest): Promise<PlanDay> {
    await this.assertAdult(caller, householdId);
    const plan = await this.store.get(householdId, planId);
    if (!plan) throw planNotFound();
    const index = daysBetween(plan.startDate, date);
    if (index < 0 || index >= plan.weeks * 7) throw new NotFoundError('not_found', 'The plan has no such day');
    const household = await this.options.households(householdId);
    const language = planLanguage(household.preferredLanguage);
    let dish: PlanDay['dish'] = null;
    if (body.dish) {
      // A starter dish may be chosen by hand whatever useStarterLibrary says.
      const found = await this.options.dishes.find(householdId, body.dish, language);
      if (!found) {
        throw new InputError('validation_failed', 'The dish is neither one of the household’s dishes nor a starter dish', [
          { field: 'dish', in: 'body', message: 'an own dish of this household or a starter dish' },
        ]);
      }
      dish = {
        id: found.id,
        origin: found.origin,
        name: found.name,
        category: found.category,
        activeMinutes: found.activeMinutes,
        priceClass: found.priceClass,
      };
    }
    if (plan.status !== 'done') throw notCurrent();
    const before = plan.days[index];
    let servings = 0;
    if (dish)
      servings = before && before.servings > 0 ? before.servings : servingsOn(household.memberIds, await this.options.events(householdId, date, date), date);
    const day: PlanDay = {
      date,
      servingTime: before?.servingTime ?? household.defaultDinnerTime,
      dinner: dish !== null,
      dish,
      servings,
      locked: body.locked,
      why: [{ ruleId: null, eventId: null, text: BY_HAND[language] }],
    };
    // Written only while the plan is still current (a run may have replaced it since the read).
    if (!(await this.store.setDay(householdId, planId, index, day))) throw notCurrent();
    return day;
  }

  /**
   * One run (the job's handler): marks it running, gathers its inputs through the other packages'
   * capabilities, solves off the event loop, and writes the outcome once with the runDone push
   * and the waiters' notification in the same transaction. A solver that fails or takes too long
   * ends the run `failed`. Run again after its instance died, it solves again and writes nothing
   * twice (the write is conditional on the run still being open).
   */
  async run(planId: string, context?: Pick<JobContext, 'attempt'>): Promise<void> {
    const claimed = await this.store.claim(planId);
    if (!claimed) return; // ended already (a rerun), or gone with its household
    const { plan, history } = claimed;
    let input: PlanInput;
    try {
      input = await this.inputs(plan, history);
    } catch (err) {
      if (err instanceof NotFoundError) return; // the household is gone (its plans go with it)
      if ((context?.attempt ?? 1) < INPUT_ATTEMPTS) throw err; // retried by the queue
      this.options.logger?.warn({ planId, err: { message: (err as Error).message } }, 'plan run inputs unreadable: the run failed');
      return this.end(plan, { status: 'failed' });
    }
    let outcome: RunOutcome;
    try {
      const result = await this.options.solver.solve(input);
      outcome =
        result.status === 'done'
          ? { status: 'done', softCost: result.softCost, days: result.days as PlanDay[], unmet: result.unmet as Plan['unmet'] }
          : { status: 'infeasible', conflicts: result.conflicts as Plan['conflicts'] };
    } catch (err) {
      this.options.logger?.warn(
        { planId, err: { message: (err as Error).message, name: (err as Error).name } },
        'plan solver failed or timed out: the run failed',
      );
      outcome = { status: 'failed' };
    }
    await this.end(plan, outcome);
  }

  private async end(plan: RunPlan, outcome: RunOutcome): Promise<void> {
    const tell = this.options.tellRunDone;
    // The outcome, the plans it replaces and the waiters' notification are one statement; the push
    // joins it in a transaction.
    if (!tell) {
      await this.store.finish(plan.id, outcome, this.clock.now());
      return;
    }
    await this.options.knex.transaction(async (trx) => {
      if (!(await this.store.finish(plan.id, outcome, this.clock.now(), trx))) return;
      await tell({ planId: plan.id, householdId: plan.householdId, status: outcome.status }, trx);
    });
  }

  /**
   * Everything the plan depends on, read through the capabilities and this package's own plans
   * (`history`: what the run's claim read of them; read here when not given).
   */
  async inputs(plan: RunPlan, history?: RunHistory): Promise<PlanInput> {
    const { householdId, startDate, weeks } = plan;
    const end = addDays(startDate, weeks * 7 - 1);
    const [household, rules, events, own, ours] = await Promise.all([
      this.options.households(householdId),
      this.options.rules(householdId),
      this.options.events(householdId, startDate, end),
      this.options.dishes.ownDishes(householdId),
      history ?? this.store.history(plan),
    ]);
    const language = planLanguage(household.preferredLanguage);
    const candidates = household.useStarterLibrary ? [...own, ...this.options.dishes.starterDishes(language)] : own;
    // Dinners before the plan count for RepeatAfterDays: as far back as the longest such rule (the built-in one is 7 days).
    const back = Math.max(7, ...rules.map((r) => (r.payload.kind === 'RepeatAfterDays' ? r.payload.days : 0)));
    const from = addDays(startDate, -back);
    const earlierDinners =
      back <= EARLIER_DINNERS_DAYS ? ours.earlierDinners.filter((d) => d.date >= from) : await this.store.dinnersBetween(householdId, from, startDate);
    // A replan keeps the locked days of the plan it replans (as they are when the run starts).
    const keptDays = ours.replanDays
      .filter((d) => d.locked && d.date >= startDate && d.date <= end)
      .map((d) => ({ date: d.date, dish: d.dish as PlanInput['keptDays'][number]['dish'], why: d.why }));
    return {
      startDate,
      weeks,
      language,
      defaultDinnerTime: household.defaultDinnerTime,
      preferOwnRecipes: household.preferOwnRecipes,
      maxNewDishesPerWeek: household.maxNewDishesPerWeek,
      alwaysNewDishes: household.alwaysNewDishes,
      madeAgainLift: household.madeAgainLift,
      memberIds: household.memberIds,
      rules,
      events,
      candidates,
      keptDays,
      earlierDinners,
      knownStarterIds: ours.knownStarterIds,
    };
  }
}

/**
 * §9's servings of a day with dinner: the members, less those named in the date's Away events, plus
 * the Guests participants without a memberId; at least 1 (a day set by hand that had no dinner).
 */
function servingsOn(memberIds: readonly string[], events: readonly PlanningEvent[], date: string): number {
  const members = new Set(memberIds);
  const away = new Set<string>();
  let guests = 0;
  for (const e of events) {
    if (e.date !== date) continue;
    if (e.eventType === 'Away') for (const p of e.participants) if (p.memberId !== null && members.has(p.memberId)) away.add(p.memberId);
    if (e.eventType === 'Guests') guests += e.participants.filter((p) => p.memberId === null).length;
  }
  return Math.max(1, members.size - away.size + guests);
}

function notCurrent(): ConflictError {
  return new ConflictError('plan_not_current', 'The plan is not the current one (queued, running, infeasible, failed or replaced)');
}

/** `Prefer: wait=N` with N 1–10; anything else is ignored (undefined). */
export function preferredWait(header: string | undefined): number | undefined {
  if (!header) return undefined;
  const m = /(?:^|[,;\s])wait\s*=\s*"?(\d+)"?(?=$|[,;\s])/i.exec(header);
  if (!m) return undefined;
  const n = Number(m[1]);
  return n >= 1 && n <= 10 ? n : undefined;
}
