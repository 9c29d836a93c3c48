import { type Pojo, type ReadDeclaration, standaloneRead, VersionedAnswers } from '@svc/db';
import { loadStandalone } from '@svc/http-kit';
import type { Knex } from 'knex';
import { MealRuleModel } from './models/index.js';
import { canonicalPayload } from './payload.js';
import { rulesRead } from './reads.js';
import type { MealRule, MealRuleKind, MealRuleRequest, RuleSource } from './schemas.js';

/**
 * What the meal-rules service needs from storage. Every lookup is scoped by household: a rule id of
 * another household is simply not there. Time comes in as `now`; the store holds no clock. A method
 * that can join a transaction takes it last (`trx`).
 */
export interface MealRuleStore {
  /**
   * The household's rules, oldest first (createdAt, then id). `loaded`: the value of `rulesRead` as
   * the read kernel loaded it with the caller: `{ version }` when this instance holds the answer
   * made at that version (`heldVersion`), else `{ version, value }` with the rows. Outside a
   * transaction the answer is kept under its version.
   */
  list(householdId: string, trx?: Knex.Transaction, loaded?: { version: string; value?: Pojo[] }): Promise<MealRule[]>;
  /** The list version whose answer this store holds for the household, if any. */
  heldVersion?(householdId: string): string | undefined;
  create(householdId: string, request: MealRuleRequest, source: RuleSource, now: Date, trx?: Knex.Transaction): Promise<MealRule>;
  /** Full replacement (kind included); undefined when the household has no such rule. */
  replace(householdId: string, ruleId: string, request: MealRuleRequest, source: RuleSource, now: Date, trx?: Knex.Transaction): Promise<MealRule | undefined>;
  /** False when the household has no such rule. */
  remove(householdId: string, ruleId: string, trx?: Knex.Transaction): Promise<boolean>;
  /**
   * GET …/rules/defaults' declared read (the service's `defaultsRead`) as a statement of its own,
   * for a request the kernel did not load it for: one SQL for the read however it is loaded.
   */
  defaults(householdId: string, read: ReadDeclaration<{ rows: unknown[]; country: string | null }>): Promise<{ rows: unknown[]; country: string | null }>;
  /** Whether the household has at least one rule of this kind. */
  hasKind(householdId: string, kind: MealRuleKind, trx?: Knex.Transaction): Promise<boolean>;
  /** Runs `work` in one database transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T>;
}

/** The columns a request writes (`kind` twice: its own column, and inside the payload). */
function writable(request: MealRuleRequest) {
  const payload = canonicalPayload(request.payload);
  return { kind: payload.kind, strength: request.strength, scope: request.scope, startDate: request.startDate, endDate: request.endDate, payload };
}

/**
 * GET …/rules when the kernel lent no rows (nothing, or a version whose answer this instance no
 * longer holds), and the list inside a transaction: the same declared read as a statement of its
 * own, so the rules have one SQL however they are loaded.
 */
const RULES = standaloneRead(rulesRead);

/** Bytes of rules answers an ObjectionMealRuleStore keeps unless told otherwise (a household's rules are a few kB of text). */
export const DEFAULT_ANSWER_CACHE_BYTES = 2 * 1024 * 1024;

export interface ObjectionMealRuleStoreOptions {
  /** Bytes of GET …/rules answers kept for answering again while the rules are unchanged (DEFAULT_ANSWER_CACHE_BYTES); 0 keeps none. */
  answerCacheBytes?: number;
}

/**
 * MealRuleStore on Objection: MealRuleModel bound to the knex the host hands in. Every operation is
 * one statement (each scoped by household), so none needs a transaction of its own.
 */
export class ObjectionMealRuleStore implements MealRuleStore {
  private readonly Rule: typeof MealRuleModel;
  /** GET …/rules answers by household, each with the rules version it was made from. */
  private readonly answers: VersionedAnswers<MealRule[]>;

  constructor(knex: Knex, options: ObjectionMealRuleStoreOptions = {}) {
    this.Rule = MealRuleModel.bindKnex(knex);
    // Sized by the answer's JSON, measured once per version kept.
    this.answers = new VersionedAnswers(options.answerCacheBytes ?? DEFAULT_ANSWER_CACHE_BYTES, (rules) => JSON.stringify(rules).length);
  }

  /**
   * What this instance holds of the household's rules: the list version its kept answer was made
   * at (the route's `heldVersion`: the kernel then loads the version alone while it is current).
   */
  heldVersion(householdId: string): string | undefined {
    return this.answers.versionOf(householdId);
  }

  private remember(householdId: string, version: string, rules: MealRule[]): MealRule[] {
    this.answers.set(householdId, version, rules);
    return rules;
  }

  private mine(householdId: string, ruleId: string, trx?: Knex.Transaction) {
    return this.Rule.query(trx).where({ householdId, id: ruleId });
  }

  async list(householdId: string, trx?: Knex.Transaction, loaded?: { version: string; value?: Pojo[] }): Promise<MealRule[]> {
    const lent = trx ? undefined : loaded;
    // Unchanged since this instance made its answer: the one it holds (unless it went since).
    const held = lent && !lent.value && this.answers.get(householdId, lent.version);
    if (held) return held;
    // A list version's value is never null (the version is '0' for a household that has none).
    const read = lent?.value ? lent : (await loadStandalone<{ version: string; value?: Pojo[] }>(trx ?? this.Rule.knex(), RULES, { household: householdId }))!;
    const rules = (read.value ?? []).map((row) => this.Rule.fromDatabaseJson(row).toApi());
    return trx ? rules : this.remember(householdId, read.version, rules);
  }

  async create(householdId: string, request: MealRuleRequest, source: RuleSource, now: Date, trx?: Knex.Transaction): Promise<MealRule> {
    const at = now.toISOString();
    // The id comes from the column default (gen_random_uuid()); everything else is known here.
    const rule = this.Rule.fromJson({ householdId, ...writable(request), source, createdAt: at, updatedAt: at });
    const inserted = await this.Rule.query(trx).insert(rule).returning('id');
    rule.id = inserted.id;
    return rule.toApi();
  }

  async replace(
    householdId: string,
    ruleId: string,
    request: MealRuleRequest,
    source: RuleSource,
    now: Date,
    trx?: Knex.Transaction,
  ): Promise<MealRule | undefined> {
    const updatedAt = now.toISOString();
    const values = { ...writable(request), source, updatedAt };
    const rows = await this.mine(householdId, ruleId, trx).patch(values).returning('createdAt');
    const row = rows[0];
    if (!row) return undefined;
    return this.Rule.fromJson({ id: ruleId, householdId, ...values, createdAt: row.createdAt }).toApi();
  }

  async remove(householdId: string, ruleId: string, trx?: Knex.Transaction): Promise<boolean> {
    return (await this.mine(householdId, ruleId, trx).delete()) > 0;
  }

  async defaults(
    householdId: string,
    read: ReadDeclaration<{ rows: unknown[]; country: string | null }>,
  ): Promise<{ rows: unknown[]; country: string | null }> {
    // `{ rows, country }` whatever the household holds (never null).
    return (await loadStandalone<{ rows: unknown[]; country: string | null }>(this.Rule.knex(), standaloneRead(read), { household: householdId }))!;
  }

  async hasKind(householdId: string, kind: MealRuleKind, trx?: Knex.Transaction): Promise<boolean> {
    return (await this.Rule.query(trx).select('id').where({ householdId, kind }).first()) !== undefined;
  }

  transaction<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return this.Rule.knex().transaction(work);
  }
}
