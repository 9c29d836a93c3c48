import { jsonRowsSql, type Pojo, VersionedAnswers } from '@svc/db';
import { preparedQuery } from '@svc/http-kit';
import type { Knex } from 'knex';
import { MealRuleModel } from './models/index.js';
import { canonicalPayload } from './payload.js';
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
  list(householdId: string, trx?: Knex.Transaction, loaded?: unknown): Promise<MealRule[]>;
  /** The list version whose answer this store holds for the household, if any. */
  heldVersion?(householdId: string): string | undefined;
  create(householdId: string, request: MealRuleRequest, source: RuleSource, now: Date, trx?: Knex.Transaction): Promise<MealRule>;
  /** Full replacement (kind included); undefined when the household has no such rule. */
  replace(householdId: string, ruleId: string, request: MealRuleRequest, source: RuleSource, now: Date, trx?: Knex.Transaction): Promise<MealRule | undefined>;
  /** False when the household has no such rule. */
  remove(householdId: string, ruleId: string, trx?: Knex.Transaction): Promise<boolean>;
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

/** The household's rules version in the statement's snapshot (meal_rule_list_versions; 0: no rules). */
const versionSql = (id: string) => `coalesce((select v.version::text from meal_rule_list_versions v where v.household_id = ${id}), '0')`;

/** The household's rules, oldest first, as one JSON array. */
const rowsJsonSql = (id: string) => jsonRowsSql('meal_rules r', MealRuleModel.apiColumnsSql('r'), `r.household_id = ${id}`, 'r.created_at, r.id');

/**
 * The rules with their version read in the same snapshot, for the list read that lent
 * nothing (or lent a version whose answer this instance no longer holds): always one row, `rows`
 * an empty array for a household without rules.
 */
const LIST_RULES_VERSIONED = {
  name: 'meal_rules_list_versioned',
  text: `select ${versionSql('$1::uuid')} as version, ${rowsJsonSql('$1::uuid')} as rows`,
};

/** What the read kernel loads for GET …/rules (`rulesRead`). */
type LoadedRules = { version: string; value?: Pojo[] };

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

  async list(householdId: string, trx?: Knex.Transaction, loaded?: unknown): Promise<MealRule[]> {
    if (!trx) {
      const lent = loaded as LoadedRules | undefined;
      if (lent?.value)
        return this.remember(
          householdId,
          lent.version,
          lent.value.map((row) => this.Rule.fromDatabaseJson(row).toApi()),
        );
      // Unchanged since this instance made its answer: the one it holds (unless it went since).
      const held = lent && this.answers.get(householdId, lent.version);
      if (held) return held;
      const [row] = await preparedQuery<{ version: string; rows: Pojo[] }>(this.Rule.knex(), { ...LIST_RULES_VERSIONED, values: [householdId] });
      return this.remember(
        householdId,
        row!.version,
        row!.rows.map((r) => this.Rule.fromDatabaseJson(r).toApi()),
      );
    }
    const rows = await this.Rule.query(trx)
      .modify('apiColumns')
      .where({ householdId })
      .orderBy([{ column: 'createdAt' }, { column: 'id' }]);
    return rows.map((row) => row.toApi());
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

  async hasKind(householdId: string, kind: MealRuleKind, trx?: Knex.Transaction): Promise<boolean> {
    return (await this.Rule.query(trx).select('id').where({ householdId, kind }).first()) !== undefined;
  }

  transaction<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return this.Rule.knex().transaction(work);
  }
}
