import { ADULT_ROLES, type Caller, type Clock, type HouseholdAccess, type HouseholdProfiles, type SpendTurn } from '@svc/contracts';
import type { Pojo, ReadDeclaration, ReadLink } from '@svc/db';
import { assertRole, type KernelChecked, NotFoundError, timing } from '@svc/http-kit';
import { answerIssues } from './answer.js';
import { defaultRulesFor } from './defaults.js';
import { creatableOnly, mergeModelReading } from './merge.js';
import { MealRuleModel } from './models/index.js';
import { createOfflineRuleParser, dishesNamed, type ParseContext, type ParseRulesResponse, type RuleParser } from './parser/index.js';
import { defaultsRead, ruleRead } from './reads.js';
import { assertValidRuleRequest } from './rule-validation.js';
import type { DefaultRules, MealRule, MealRuleRequest } from './schemas.js';
import type { MealRuleStore } from './store.js';
import { todayIn } from './today.js';

/** Where the service reports a parser that failed (a pino logger fits). */
export interface ParseFailureLog {
  warn(obj: object, msg: string): void;
}

export interface MealRulesServiceOptions {
  store: MealRuleStore;
  clock: Clock;
  /** Membership and role (404 for non-members); from @svc/households. */
  access: HouseholdAccess;
  /** Country, time zone and language of a household; from @svc/households. */
  profiles: HouseholdProfiles;
  /** A household's country as a field declared reads may name (from @svc/households: `householdCountryLink`); with it GET …/rules/defaults is a declared read. */
  householdCountry?: ReadLink;
  /** Spends one AI turn inside the given transaction, or throws 429; from @svc/households. */
  spendTurn: SpendTurn;
  /** The offline sentence parser; default: the built-in English/Norwegian one. */
  parser?: RuleParser;
  /**
   * A language-model parser (`createModelRuleParser`), asked first when set; its answer is merged
   * with the offline parser's. When it fails (timeout, error, invalid output) the offline answer
   * is given and the turn is not charged.
   */
  modelParser?: RuleParser;
  /** Where a failing parser is reported (never with the sentence: it is the household's text). */
  logger?: ParseFailureLog;
}

const EMPTY_PARSE: ParseRulesResponse = { proposals: [], leftoverDinners: null, unheard: [] };
const notFoundRule = () => new NotFoundError('not_found', 'The household has no such rule');

/** What one reading of a sentence gave, and whether it is worth the household's turn. */
interface Reading {
  answer: ParseRulesResponse;
  /** False when the parser the household pays for failed: the answer is a fallback, free. */
  charged: boolean;
}

/** Thrown inside the parse transaction to roll the spent turn back, carrying the free answer out. */
class Uncharged {
  constructor(readonly answer: ParseRulesResponse) {}
}

/**
 * The meal-rules rules: any member reads the rules and the defaults (a Junior too), Owner and Adult
 * write and parse, a non-member (or an unknown household) gets 404 from `access`. A parse of a
 * sentence costs one AI turn, charged in the same transaction that decides the answer: a parser
 * that fails costs nothing and never turns into a 5xx. No HTTP here.
 */
export class MealRulesService {
  /** GET …/rules/defaults as a declared read, when the host handed in the households' country (`householdCountry`). */
  readonly defaultsRead: ReadDeclaration<{ rows: unknown[]; country: string | null }> | undefined;
  /** The changes feed's value of a rule: the declared read of one rule and the answer its item of GET …/rules makes of that row. */
  readonly changeValue: { readonly read: ReadDeclaration; answer(row: unknown): unknown } = {
    read: ruleRead,
    answer: (row) => MealRuleModel.fromDatabaseJson(row as Pojo).toApi(),
  };
  private readonly store: MealRuleStore;
  private readonly clock: Clock;
  private readonly access: HouseholdAccess;
  private readonly profiles: HouseholdProfiles;
  private readonly spendTurn: SpendTurn;
  private readonly parser: RuleParser;
  private readonly modelParser: RuleParser | undefined;
  private readonly logger: ParseFailureLog | undefined;

  constructor(options: MealRulesServiceOptions) {
    this.store = options.store;
    this.defaultsRead = options.householdCountry && defaultsRead(options.householdCountry);
    this.clock = options.clock;
    this.access = options.access;
    this.profiles = options.profiles;
    this.spendTurn = options.spendTurn;
    this.parser = options.parser ?? createOfflineRuleParser();
    this.modelParser = options.modelParser;
    this.logger = options.logger;
  }

  private async assertAdult(caller: Caller, householdId: string): Promise<void> {
    assertRole(await this.access.roleOf(caller, householdId), ADULT_ROLES);
  }

  /**
   * The household's rules, oldest first; any member. `loaded`: the value of `rulesRead` the read
   * kernel loaded with the caller (it checked the membership).
   */
  async list(caller: Caller, householdId: string, loaded?: KernelChecked<{ version: string; value?: Pojo[] }>): Promise<MealRule[]> {
    if (!loaded) await this.access.roleOf(caller, householdId);
    return this.store.list(householdId, undefined, loaded);
  }

  /** The list version whose answer this instance holds for the household (GET …/rules' `heldVersion`). */
  heldVersion(householdId: string): string | undefined {
    return this.store.heldVersion?.(householdId);
  }

  /** Rules by id as their item of GET …/rules answers each (an If-Match's current state); any member. */
  async values(caller: Caller, householdId: string, ids: readonly string[]): Promise<Map<string, unknown>> {
    const wanted = new Set(ids);
    return new Map((await this.list(caller, householdId)).filter((r) => wanted.has(r.id)).map((r) => [r.id, r]));
  }

  /** One rule as its list item answers it (an If-Match's current state); 404 `not_found` when there is none. */
  async currentRule(caller: Caller, householdId: string, ruleId: string): Promise<unknown> {
    return (await this.values(caller, householdId, [ruleId])).get(ruleId) ?? Promise.reject(notFoundRule());
  }

  /** Files a rule (source UserDeclared); adults only; 400 naming the field when a rule between fields is broken. */
  async create(caller: Caller, householdId: string, request: MealRuleRequest): Promise<MealRule> {
    await this.assertAdult(caller, householdId);
    assertValidRuleRequest(request);
    return this.store.create(householdId, request, 'UserDeclared', this.clock.now());
  }

  /** Full replacement (kind included; the rule becomes UserDeclared); adults only; 404 for a rule the household does not have. */
  async replace(caller: Caller, householdId: string, ruleId: string, request: MealRuleRequest): Promise<MealRule> {
    await this.assertAdult(caller, householdId);
    assertValidRuleRequest(request);
    return (await this.store.replace(householdId, ruleId, request, 'UserDeclared', this.clock.now())) ?? Promise.reject(notFoundRule());
  }

  /** Deletes a rule; adults only; 404 for a rule the household does not have. */
  async remove(caller: Caller, householdId: string, ruleId: string): Promise<void> {
    await this.assertAdult(caller, householdId);
    if (!(await this.store.remove(householdId, ruleId))) throw notFoundRule();
  }

  /**
   * The guideline rules of the household's country (`active` while it has no CategoryFrequency rule
   * of its own): GET …/rules/defaults. Any member.
   */
  async defaults(caller: Caller, householdId: string, loaded?: KernelChecked<{ rows: unknown[]; country: string | null }>): Promise<DefaultRules> {
    const { country, active } = await this.defaultsOf(caller, householdId, loaded);
    return defaultRulesFor(householdId, country, active);
  }

  /** `loaded`: the value of `defaultsRead` the read kernel loaded with the caller (it checked the membership). */
  private async defaultsOf(
    caller: Caller,
    householdId: string,
    loaded?: KernelChecked<{ rows: unknown[]; country: string | null }>,
  ): Promise<{ country: string; active: boolean }> {
    if (loaded?.country) return { country: loaded.country, active: loaded.rows.length === 0 };
    await this.access.roleOf(caller, householdId);
    const read = this.defaultsRead && (await this.store.defaults(householdId, this.defaultsRead));
    if (read?.country) return { country: read.country, active: read.rows.length === 0 };
    // No declared read (the host lent no country), or the household went since the check: its profile answers (404 then).
    const [profile, hasOwn] = await Promise.all([this.profiles(householdId), this.store.hasKind(householdId, 'CategoryFrequency')]);
    return { country: profile.country, active: !hasOwn };
  }

  /**
   * The household's rules as GET …/rules answers them, for the data export (PersonalDataSources'
   * `rules`). No access check: the caller (the export) has established membership.
   */
  exportRules(householdId: string): Promise<MealRule[]> {
    return this.store.list(householdId);
  }

  /**
   * Proposals from a sentence; adults only. Blank text answers nothing and costs nothing. Otherwise
   * one transaction: the turn is spent first (so a household with no turn left, or a paused one, gets
   * its 429 before any parser runs, and parallel parses queue on the household's ledger), then the
   * sentence is read; the turn is committed only when the reading the household pays for succeeded.
   * A failed reading rolls the turn back and answers the fallback: never a 5xx.
   */
  async parse(caller: Caller, householdId: string, text: string): Promise<ParseRulesResponse> {
    await this.assertAdult(caller, householdId);
    if (text.trim() === '') return structuredClone(EMPTY_PARSE);
    const profile = await this.profiles(householdId);
    const ctx: ParseContext = { today: todayIn(profile.timeZoneId, this.clock.now()), language: profile.preferredLanguage };
    try {
      return await this.store.transaction(async (trx) => {
        await timing.step('spend-turn', () => this.spendTurn(householdId, trx));
        const reading = await timing.step('parse', () => this.read(text, ctx));
        if (!reading.charged) throw new Uncharged(reading.answer);
        return reading.answer;
      });
    } catch (err) {
      if (err instanceof Uncharged) return err.answer;
      throw err;
    }
  }

  /**
   * Reads the sentence: the model (when configured) and the offline parser side by side, and
   * decides the whole answer before the turn is committed. Never throws: a failing parser is
   * logged and stood in for.
   */
  private async read(text: string, ctx: ParseContext): Promise<Reading> {
    const fromModel = this.modelParser ? this.attempt(this.modelParser, text, ctx) : undefined;
    const offline = await this.attempt(this.parser, text, ctx);
    try {
      if (fromModel) {
        const model = await fromModel;
        if (model) return { answer: mergeModelReading(model, offline ?? EMPTY_PARSE, dishesNamed(text, ctx)), charged: true };
      }
      if (offline) return { answer: creatableOnly(offline), charged: !this.modelParser };
    } catch (err) {
      this.logger?.warn({ reason: 'error', err: { name: (err as Error)?.name, message: (err as Error)?.message } }, 'rule parse answer failed; falling back');
    }
    // Nothing could read it: the sentence comes back unheard, as the offline parser answers its own failures.
    return { answer: { proposals: [], leftoverDinners: null, unheard: [text.trim()] }, charged: false };
  }

  /** One parser's answer in the documented envelope, or undefined (logged) when it threw or answered something else. */
  private async attempt(parser: RuleParser, text: string, ctx: ParseContext): Promise<ParseRulesResponse | undefined> {
    try {
      const answer = await parser.parse(text, ctx);
      const issues = answerIssues(answer);
      if (issues) throw Object.assign(new Error(`not a ParseRulesResponse: ${issues.slice(0, 300)}`), { reason: 'invalid' });
      return answer;
    } catch (err) {
      // The error's own message only: the household's sentence stays out of the log.
      const reason = (err as { reason?: string })?.reason ?? 'error';
      this.logger?.warn(
        { parser: parser.name, reason, err: { name: (err as Error)?.name, message: (err as Error)?.message } },
        'rule parser failed; falling back',
      );
      return undefined;
    }
  }
}
